// Package postmortem computes the post-mortem of a run that did not end
// cleanly (docs/guide/crash-hang.md) into the reports' data model
// (datamodel.PostMortem) and writes it as text. It needs only the loaded
// run (merge/rundir) and the clock correction (merge/correct), not the
// engine; merge never imports it: tracemerge's analyze and info commands
// call Of.
package postmortem

// The post-mortem of a run that did not end cleanly (docs/guide/crash-hang.md,
// issue 36): which rank ended first and how, the order and cause of the
// others' ends, the calls left in flight grouped STAT-like, the members a
// collective still waited for, and the wait-for graph's cycles named as
// deadlocks. It is computed from the rank files' metadata alone (headers,
// footers, the live sidecars' end records and in-flight slots), which every
// process of a parallel tracemerge reads in full, so it comes out the same
// however the event stream is partitioned.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gclock/gclock/merge/callsite"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// pmRank is what the post-mortem knows of one rank.
type pmRank struct {
	rank  int
	in    *rundir.RankInput
	corr  *correct.Corrector
	end   datamodel.RankEnd
	clean bool
	calls []pmCall
	comms map[uint32]*trace.Comm // by local index
}

// pmCall is one call in flight, resolved.
type pmCall struct {
	fl      trace.InFlight
	op      trace.Op
	comm    *trace.Comm
	enterS  float64
	site    string
	peer    int // world rank, -1 any, -2 null, math.MinInt none
	peer2   int
	members []int32
}

// Of computes the post-mortem of run with clock mode (for the
// times); nil when every rank ended in MPI_Finalize. res resolves call
// sites (nil: a new resolver).
func Of(run *rundir.Run, mode correct.ClockMode, res *callsite.Resolver) *datamodel.PostMortem {
	if run == nil || len(run.Ranks) == 0 {
		return nil
	}
	if res == nil {
		res = callsite.NewResolver()
	}
	dirty := len(run.Missing) > 0
	for _, ri := range run.Ranks {
		if f := ri.Meta.Footer; f == nil || f.Reason != "finalize" {
			dirty = true
		}
	}
	if !dirty {
		return nil
	}
	// The run's origin of global times (merge.RunOrigin) and the start
	// raw-mode alignment shifts to.
	var origin, refStart int64
	if ri := run.FirstStart(); ri != nil {
		refStart = ri.Meta.Header.StartNS
		origin = correct.ReferenceStart(mode, ri.Rank, refStart, ri.Meta.Epochs)
	}
	ranks := make([]*pmRank, run.WorldSize)
	runStart := math.Inf(1)
	for _, ri := range run.Ranks {
		h := &ri.Meta.Header
		c, _ := correct.NewCorrector(mode, ri.Meta.Epochs, correct.RawShift(refStart, h.StartNS))
		c.SetOrigin(origin)
		pr := &pmRank{rank: ri.Rank, in: ri, corr: c, comms: map[uint32]*trace.Comm{}}
		for i := range ri.Meta.Comms {
			pr.comms[ri.Meta.Comms[i].Local] = &ri.Meta.Comms[i]
		}
		if ri.Rank >= 0 && ri.Rank < len(ranks) {
			ranks[ri.Rank] = pr
		}
		if h.StartNS != 0 {
			runStart = math.Min(runStart, c.Global(h.StartNS))
		}
	}
	if math.IsInf(runStart, 1) {
		runStart = 0
	}
	sec := func(pr *pmRank, t int64) float64 {
		if t == 0 {
			return math.NaN()
		}
		return (pr.corr.Global(t) - runStart) / 1e9
	}
	site := func(pr *pmRank, pc uint64) string {
		if pc == 0 {
			return ""
		}
		for _, o := range pr.in.Meta.Header.Objects {
			if o.Lo <= pc && pc < o.Hi {
				return res.Resolve(o.Path, pc-o.Base).String()
			}
		}
		return fmt.Sprintf("0x%x", pc)
	}
	pm := &datamodel.PostMortem{}
	for _, pr := range ranks {
		if pr == nil {
			continue
		}
		pr.end = rankEnd(pr, sec, site)
		pr.clean = pr.end.How == datamodel.EndFinalize
		if pr.clean {
			pm.Finalized = append(pm.Finalized, pr.rank)
		}
		if l := pr.in.Meta.Live; l != nil && pr.in.Meta.Footer == nil {
			for _, fl := range l.InFlight {
				pr.calls = append(pr.calls, resolveCall(pr, fl, sec, site))
			}
		}
		if len(pr.calls) > 0 {
			var d []string
			for _, c := range pr.calls {
				d = append(d, callText(c, false))
			}
			pr.end.InCall = strings.Join(d, "; ")
		}
	}
	for _, r := range run.Missing {
		if r >= 0 && r < len(ranks) {
			pm.Ends = append(pm.Ends, datamodel.RankEnd{Rank: r, How: datamodel.EndNoFile, Thread: -1, TimeS: math.NaN(), Inferred: true,
				Text: "no usable rank file: how it ended is not known"})
		}
	}
	for _, pr := range ranks {
		if pr != nil && !pr.clean {
			pm.Ends = append(pm.Ends, pr.end)
		}
	}
	// A rank that vanished inside a call ended some time after it entered
	// it: after the ends whose time is known.
	late := func(e datamodel.RankEnd) bool {
		return e.Inferred && e.Rank < len(ranks) && ranks[e.Rank] != nil && len(ranks[e.Rank].calls) > 0
	}
	sort.SliceStable(pm.Ends, func(i, j int) bool {
		if li, lj := late(pm.Ends[i]), late(pm.Ends[j]); li != lj {
			return lj
		}
		a, b := pm.Ends[i].TimeS, pm.Ends[j].TimeS
		switch {
		case math.IsNaN(a) || math.IsNaN(b):
			return !math.IsNaN(a) && math.IsNaN(b) || math.IsNaN(a) == math.IsNaN(b) && pm.Ends[i].Rank < pm.Ends[j].Rank
		case a != b:
			return a < b
		}
		return pm.Ends[i].Rank < pm.Ends[j].Rank
	})
	pm.First = firstEnd(pm.Ends, ranks)
	pm.InFlight = groupFlights(ranks)
	pm.Deadlocks = deadlocks(ranks)
	// unknown times are -1 (JSON cannot hold NaN)
	known := func(v *float64) {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			*v = -1
		}
	}
	for i := range pm.Ends {
		known(&pm.Ends[i].TimeS)
	}
	if pm.First != nil {
		known(&pm.First.TimeS)
	}
	pm.EndGroups = groupEnds(pm.Ends)
	for i := range pm.InFlight {
		known(&pm.InFlight[i].EnteredFirstS)
		known(&pm.InFlight[i].EnteredLastS)
	}
	return pm
}

func fatalSignal(sig int) bool { return sig == 4 || sig == 6 || sig == 7 || sig == 8 || sig == 11 }

// lastCallText describes an event as "MPI_Allreduce on world, instance 999".
func lastCallText(pr *pmRank, e *trace.Event) string {
	if e == nil {
		return ""
	}
	s := e.Op.String()
	if c := pr.comms[e.Comm]; c != nil {
		s += " on " + commLabel(c)
		if e.Op.IsCollective() {
			s += fmt.Sprintf(", instance %d", e.Seq)
		}
	}
	return s
}

// commLabel is "world", "self" or the communicator's id.
func commLabel(c *trace.Comm) string {
	if c == nil {
		return "?"
	}
	switch c.Kind {
	case "world", "self":
		return c.Kind
	}
	return fmt.Sprintf("comm %#x", c.ID)
}

// rankEnd says how one rank ended.
func rankEnd(pr *pmRank, sec func(*pmRank, int64) float64, site func(*pmRank, uint64) string) datamodel.RankEnd {
	m := pr.in.Meta
	e := datamodel.RankEnd{Rank: pr.rank, Thread: -1, TimeS: math.NaN()}
	var rec *trace.End
	switch {
	case m.Footer != nil:
		e.TimeS = sec(pr, m.Footer.EndNS)
		switch m.Footer.Reason {
		case "finalize":
			e.How, e.Text = datamodel.EndFinalize, "MPI_Finalize"
			return e
		case "abort":
			e.How = datamodel.EndAbort
		case "exit":
			e.How = datamodel.EndExit
		default:
			e.How = datamodel.EndStopped
			e.Text = "its recording stopped early (" + m.Footer.Stopped + "); how it ended is not known"
			return e
		}
		rec = m.Footer.End
	case m.Live != nil && m.Live.End != nil && !m.Live.End.Partial:
		rec = m.Live.End
		e.How = datamodel.EndSignaled
		if fatalSignal(int(rec.Code)) {
			e.How = datamodel.EndFatal
		}
	default:
		e.How, e.Inferred = datamodel.EndKilled, true
	}
	var last *trace.Event
	if l := m.Live; l != nil {
		th := 0
		if rec != nil && rec.Thread >= 0 {
			th = int(rec.Thread)
		}
		if th < len(l.LastCall) {
			last = l.LastCall[th]
		}
		if e.Inferred {
			e.TimeS = sec(pr, l.LastNS)
			for _, c := range l.LastCall { // the latest call any thread returned from
				if c != nil && (last == nil || c.ExitNS > last.ExitNS) {
					last = c
				}
			}
			for _, fl := range l.InFlight {
				if t := sec(pr, fl.EnterNS); !(t <= e.TimeS) {
					e.TimeS = t
				}
			}
		}
	}
	e.LastCall = lastCallText(pr, last)
	if rec != nil {
		e.TimeS = sec(pr, rec.NS)
		e.Thread = int(rec.Thread)
		e.Site = site(pr, rec.Site)
		switch e.How {
		case datamodel.EndAbort, datamodel.EndExit:
			c := rec.Code
			e.Code = &c
		case datamodel.EndFatal, datamodel.EndSignaled:
			e.Signal, e.SignalName = int(rec.Code), SignalName(int(rec.Code))
			if e.How == datamodel.EndFatal && rec.Pid == 0 {
				e.FaultAddr = fmt.Sprintf("%#x", rec.Addr)
			}
			e.SenderPid = rec.Pid
		}
	}
	var b strings.Builder
	switch e.How {
	case datamodel.EndAbort:
		b.WriteString("called MPI_Abort")
		if e.Code != nil {
			fmt.Fprintf(&b, "(errorcode %d)", *e.Code)
		}
		if e.Site != "" {
			b.WriteString(" at " + e.Site)
		}
	case datamodel.EndExit:
		b.WriteString("exit() without MPI_Finalize")
		if e.Code != nil {
			fmt.Fprintf(&b, " (status %d)", *e.Code)
		}
	case datamodel.EndFatal:
		fmt.Fprintf(&b, "%s", e.SignalName)
		if e.SenderPid != 0 {
			fmt.Fprintf(&b, " sent by pid %d", e.SenderPid)
		} else if e.FaultAddr != "" && e.Signal != 6 {
			fmt.Fprintf(&b, " at address %s", e.FaultAddr)
		}
		if e.Site != "" && e.SenderPid == 0 {
			b.WriteString(" in " + e.Site)
		}
		if e.Thread > 0 {
			fmt.Fprintf(&b, ", in thread %d (not the one that called MPI_Init)", e.Thread)
		}
	case datamodel.EndSignaled:
		fmt.Fprintf(&b, "%s", e.SignalName)
		if e.SenderPid != 0 {
			fmt.Fprintf(&b, " from pid %d", e.SenderPid)
		}
	case datamodel.EndKilled:
		b.WriteString("ended without a record (SIGKILL, the OOM killer, a lost node?): inferred from its last activity")
		if l := m.Live; l != nil && len(l.InFlight) > 0 {
			b.WriteString(" (entering the call it was inside; it ended later)")
		}
		if m.Live == nil {
			b.WriteString(" (no live sidecar: only what it flushed is known)")
		}
	}
	if e.LastCall != "" && e.How != datamodel.EndAbort {
		b.WriteString("; last returned call " + e.LastCall)
	}
	e.Text = b.String()
	return e
}

// resolveCall turns a sidecar's in-flight slot into world ranks and times.
func resolveCall(pr *pmRank, fl trace.InFlight, sec func(*pmRank, int64) float64, site func(*pmRank, uint64) string) pmCall {
	c := pmCall{fl: fl, op: fl.Op, enterS: sec(pr, fl.EnterNS), site: site(pr, fl.Site), peer: math.MinInt, peer2: math.MinInt}
	if fl.Comm >= 0 {
		c.comm = pr.comms[uint32(fl.Comm)]
	}
	world := func(r int32) int {
		switch {
		case r == trace.NoArg:
			return math.MinInt
		case r < 0:
			return int(r) // any, null
		case fl.WorldPeers:
			return int(r) // sidecar version 3: stored as world ranks
		case c.comm != nil && int(r) < len(c.comm.Members):
			return int(c.comm.Members[r])
		}
		return int(r)
	}
	c.peer, c.peer2 = world(fl.Peer), world(fl.Peer2)
	if c.comm != nil {
		c.members = c.comm.Members
	}
	return c
}

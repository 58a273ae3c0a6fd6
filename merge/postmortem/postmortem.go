// Package postmortem computes the post-mortem of a run that did not end
// cleanly (docs/guide/crash-hang.md) into merge's data model
// (merge.PostMortem) and writes it as text. It imports merge; merge never
// imports it: tracemerge's analyze and info commands call Of.
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
	"strconv"
	"strings"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/callsite"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace"
)

// pmRank is what the post-mortem knows of one rank.
type pmRank struct {
	rank  int
	in    *merge.RankInput
	corr  *correct.Corrector
	end   merge.RankEnd
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
func Of(run *merge.Run, mode correct.ClockMode, res *callsite.Resolver) *merge.PostMortem {
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
	origin := merge.RunOrigin(run, mode)
	var refStart int64
	for _, ri := range run.Ranks {
		if ri.Meta.Header.StartNS != 0 {
			refStart = ri.Meta.Header.StartNS
			break
		}
	}
	ranks := make([]*pmRank, run.WorldSize)
	runStart := math.Inf(1)
	for _, ri := range run.Ranks {
		h := &ri.Meta.Header
		shift := 0.0
		if h.StartNS != 0 && refStart != 0 {
			if d := refStart - h.StartNS; d > 1e9 || d < -1e9 {
				shift = float64(d)
			}
		}
		c, _ := correct.NewCorrector(mode, ri.Meta.Epochs, shift)
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
	pm := &merge.PostMortem{}
	for _, pr := range ranks {
		if pr == nil {
			continue
		}
		pr.end = rankEnd(pr, sec, site)
		pr.clean = pr.end.How == merge.EndFinalize
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
			pm.Ends = append(pm.Ends, merge.RankEnd{Rank: r, How: merge.EndNoFile, Thread: -1, TimeS: math.NaN(), Inferred: true,
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
	late := func(e merge.RankEnd) bool {
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

// signalNames names the signals the recorder records (Linux numbers).
var signalNames = map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM",
	15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ"}

// SignalName names Linux signal sig ("SIGSEGV"), "signal N" otherwise.
func SignalName(sig int) string {
	if s, ok := signalNames[sig]; ok {
		return s
	}
	return "signal " + strconv.Itoa(sig)
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
func rankEnd(pr *pmRank, sec func(*pmRank, int64) float64, site func(*pmRank, uint64) string) merge.RankEnd {
	m := pr.in.Meta
	e := merge.RankEnd{Rank: pr.rank, Thread: -1, TimeS: math.NaN()}
	var rec *trace.End
	switch {
	case m.Footer != nil:
		e.TimeS = sec(pr, m.Footer.EndNS)
		switch m.Footer.Reason {
		case "finalize":
			e.How, e.Text = merge.EndFinalize, "MPI_Finalize"
			return e
		case "abort":
			e.How = merge.EndAbort
		case "exit":
			e.How = merge.EndExit
		default:
			e.How = merge.EndStopped
			e.Text = "its recording stopped early (" + m.Footer.Stopped + "); how it ended is not known"
			return e
		}
		rec = m.Footer.End
	case m.Live != nil && m.Live.End != nil && !m.Live.End.Partial:
		rec = m.Live.End
		e.How = merge.EndSignaled
		if fatalSignal(int(rec.Code)) {
			e.How = merge.EndFatal
		}
	default:
		e.How, e.Inferred = merge.EndKilled, true
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
		case merge.EndAbort, merge.EndExit:
			c := rec.Code
			e.Code = &c
		case merge.EndFatal, merge.EndSignaled:
			e.Signal, e.SignalName = int(rec.Code), SignalName(int(rec.Code))
			if e.How == merge.EndFatal && rec.Pid == 0 {
				e.FaultAddr = fmt.Sprintf("%#x", rec.Addr)
			}
			e.SenderPid = rec.Pid
		}
	}
	var b strings.Builder
	switch e.How {
	case merge.EndAbort:
		b.WriteString("called MPI_Abort")
		if e.Code != nil {
			fmt.Fprintf(&b, "(errorcode %d)", *e.Code)
		}
		if e.Site != "" {
			b.WriteString(" at " + e.Site)
		}
	case merge.EndExit:
		b.WriteString("exit() without MPI_Finalize")
		if e.Code != nil {
			fmt.Fprintf(&b, " (status %d)", *e.Code)
		}
	case merge.EndFatal:
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
	case merge.EndSignaled:
		fmt.Fprintf(&b, "%s", e.SignalName)
		if e.SenderPid != 0 {
			fmt.Fprintf(&b, " from pid %d", e.SenderPid)
		}
	case merge.EndKilled:
		b.WriteString("ended without a record (SIGKILL, the OOM killer, a lost node?): inferred from its last activity")
		if l := m.Live; l != nil && len(l.InFlight) > 0 {
			b.WriteString(" (entering the call it was inside; it ended later)")
		}
		if m.Live == nil {
			b.WriteString(" (no live sidecar: only what it flushed is known)")
		}
	}
	if e.LastCall != "" && e.How != merge.EndAbort {
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

// peerText is " from 1 tag 7" / " to 1 tag 7".
func peerText(c pmCall) string {
	var b strings.Builder
	dir := " from "
	if c.op.IsSend() {
		dir = " to "
	}
	p := func(r int) string {
		switch r {
		case -1:
			return "any source"
		case -2:
			return "MPI_PROC_NULL"
		}
		return strconv.Itoa(r)
	}
	if c.peer != math.MinInt {
		b.WriteString(dir + p(c.peer))
		if c.fl.Tag != trace.NoArg {
			if c.fl.Tag == -1 && !c.op.IsSend() {
				b.WriteString(" any tag")
			} else {
				fmt.Fprintf(&b, " tag %d", c.fl.Tag)
			}
		}
	}
	if c.peer2 != math.MinInt {
		b.WriteString(", to " + p(c.peer2))
		if c.fl.Tag2 != trace.NoArg {
			fmt.Fprintf(&b, " tag %d", c.fl.Tag2)
		}
	}
	return b.String()
}

// callText is "MPI_Recv from 1 tag 7" (withComm: "... on world").
func callText(c pmCall, withComm bool) string {
	s := c.op.String()
	if c.op.IsCollective() && c.comm != nil {
		return fmt.Sprintf("%s on %s, instance %d", s, commLabel(c.comm), c.fl.Seq)
	}
	s += peerText(c)
	if withComm && c.comm != nil && c.comm.Kind != "world" {
		s += " on " + commLabel(c.comm)
	}
	if c.fl.Requests > 0 {
		s += fmt.Sprintf(" (%d request%s)", c.fl.Requests, plural(int(c.fl.Requests), "", "s"))
	}
	return s
}

// firstEnd picks the rank that ended first: the earliest cause (an abort,
// a fatal signal, an exit, a rank that vanished while not inside an MPI
// call); a launcher's signal or a rank that vanished inside a call only
// when nothing else is known.
func firstEnd(ends []merge.RankEnd, ranks []*pmRank) *merge.RankEnd {
	cause := func(e merge.RankEnd) int {
		switch e.How {
		case merge.EndAbort, merge.EndFatal, merge.EndExit:
			return 0
		case merge.EndKilled:
			if e.Rank < len(ranks) && ranks[e.Rank] != nil && len(ranks[e.Rank].calls) == 0 {
				return 1
			}
			return 3
		case merge.EndSignaled:
			return 2
		}
		return 4
	}
	best := -1
	for i, e := range ends {
		if math.IsNaN(e.TimeS) || e.TimeS < 0 && e.How == merge.EndNoFile {
			continue
		}
		if best < 0 || cause(e) < cause(ends[best]) || cause(e) == cause(ends[best]) && e.TimeS < ends[best].TimeS {
			best = i
		}
	}
	if best < 0 || cause(ends[best]) > 3 {
		return nil
	}
	f := ends[best]
	return &f
}

// groupEnds groups ends by their text without the rank-specific parts.
func groupEnds(ends []merge.RankEnd) []merge.EndGroup {
	idx := map[string]int{}
	var out []merge.EndGroup
	for _, e := range ends {
		key := e.How + "|" + e.SignalName
		if e.Code != nil {
			key += "|" + strconv.Itoa(int(*e.Code))
		}
		text := groupText(e)
		key += "|" + text
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, merge.EndGroup{How: e.How, Text: text, FirstS: e.TimeS, LastS: e.TimeS})
		}
		g := &out[i]
		g.Ranks = append(g.Ranks, e.Rank)
		if e.TimeS >= 0 {
			if g.FirstS < 0 || e.TimeS < g.FirstS {
				g.FirstS = e.TimeS
			}
			g.LastS = math.Max(g.LastS, e.TimeS)
		}
	}
	for i := range out {
		sort.Ints(out[i].Ranks)
	}
	return out
}

// groupText is an end's sentence without what differs rank to rank (pids,
// addresses, last calls).
func groupText(e merge.RankEnd) string {
	switch e.How {
	case merge.EndSignaled:
		if e.SenderPid != 0 {
			return e.SignalName + " sent by another process (the launcher?)"
		}
		return e.SignalName
	case merge.EndFatal:
		return e.SignalName
	case merge.EndKilled:
		return "ended without a record (SIGKILL, the OOM killer, a lost node?), inferred from the last activity"
	}
	return strings.SplitN(e.Text, "; last returned", 2)[0]
}

type flightKey struct {
	op   trace.Op
	comm uint64
	kind string
	seq  uint32
	tag  int32
}

// groupFlights groups the calls in flight STAT-like.
func groupFlights(ranks []*pmRank) []merge.FlightGroup {
	type acc struct {
		g      merge.FlightGroup
		calls  []pmCall
		callRk []int // the rank of each call
		sites  map[string]bool
	}
	idx := map[flightKey]*acc{}
	var order []flightKey
	for _, pr := range ranks {
		if pr == nil {
			continue
		}
		seen := map[flightKey]bool{}
		for _, c := range pr.calls {
			k := flightKey{op: c.op, seq: math.MaxUint32, tag: math.MinInt32}
			if c.comm != nil {
				k.comm, k.kind = c.comm.ID, c.comm.Kind
			}
			if c.op.IsCollective() {
				k.seq = c.fl.Seq
			} else {
				k.tag = c.fl.Tag
			}
			a := idx[k]
			if a == nil {
				a = &acc{sites: map[string]bool{}}
				a.g.Op = c.op.String()
				if c.comm != nil {
					a.g.Comm, a.g.CommID = commLabel(c.comm), fmt.Sprintf("%#x", c.comm.ID)
				}
				if c.op.IsCollective() {
					s := c.fl.Seq
					a.g.Instance = &s
				} else if c.fl.Tag != trace.NoArg {
					t := c.fl.Tag
					a.g.Tag = &t
				}
				a.g.EnteredFirstS, a.g.EnteredLastS = c.enterS, c.enterS
				idx[k] = a
				order = append(order, k)
			}
			a.g.Threads++
			a.calls = append(a.calls, c)
			a.callRk = append(a.callRk, pr.rank)
			if !seen[k] {
				seen[k] = true
				a.g.Ranks = append(a.g.Ranks, pr.rank)
			}
			a.g.EnteredFirstS = math.Min(a.g.EnteredFirstS, c.enterS)
			a.g.EnteredLastS = math.Max(a.g.EnteredLastS, c.enterS)
			if c.site != "" {
				a.sites[c.site] = true
			}
		}
	}
	var out []merge.FlightGroup
	for _, k := range order {
		a := idx[k]
		g := a.g
		for s := range a.sites {
			g.Sites = append(g.Sites, s)
		}
		sort.Strings(g.Sites)
		if len(g.Sites) > 4 {
			g.Sites = append(g.Sites[:4], fmt.Sprintf("... %d more", len(a.sites)-4))
		}
		if !k.op.IsCollective() {
			distinct := map[string]bool{}
			var parts []string
			for i, c := range a.calls {
				p := strings.TrimSpace(peerText(c))
				distinct[p] = true
				if i < 8 {
					parts = append(parts, fmt.Sprintf("rank %d %s", a.callRk[i], p))
				}
			}
			switch {
			case len(distinct) == 1:
				g.Peers = strings.TrimSpace(peerText(a.calls[0]))
			case len(a.calls) <= 8:
				g.Peers = strings.Join(parts, ", ")
			default:
				g.Peers = fmt.Sprintf("%d distinct peers", len(distinct))
			}
		} else if len(a.calls) > 0 && a.calls[0].members != nil {
			g.NotInside = notInside(ranks, a.calls[0], g.Ranks)
		}
		g.Text = flightText(g, k.op)
		out = append(out, g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].Ranks) != len(out[j].Ranks) {
			return len(out[i].Ranks) > len(out[j].Ranks)
		}
		return out[i].Ranks[0] < out[j].Ranks[0]
	})
	return out
}

// notInside groups a collective's members that were not inside instance
// c by what they were doing.
func notInside(ranks []*pmRank, c pmCall, inside []int) []merge.MemberState {
	in := map[int]bool{}
	for _, r := range inside {
		in[r] = true
	}
	idx := map[string]int{}
	var out []merge.MemberState
	for _, m := range c.members {
		r := int(m)
		if in[r] {
			continue
		}
		st := memberState(ranks, r, c)
		i, ok := idx[st]
		if !ok {
			i = len(out)
			idx[st] = i
			out = append(out, merge.MemberState{State: st})
		}
		out[i].Ranks = append(out[i].Ranks, r)
	}
	return out
}

// passedIt says whether rank r was inside a later collective on c's
// communicator than c's instance: it had left c's instance (a rooted or
// tree-shaped collective lets a member leave before another received its
// part), so c does not wait for it.
func passedIt(ranks []*pmRank, r int, c pmCall) (uint32, bool) {
	if r < 0 || r >= len(ranks) || ranks[r] == nil || c.comm == nil {
		return 0, false
	}
	for _, o := range ranks[r].calls {
		if o.op.IsCollective() && o.comm != nil && o.comm.ID == c.comm.ID && o.fl.Seq > c.fl.Seq {
			return o.fl.Seq, true
		}
	}
	return 0, false
}

// memberState says what rank r was doing (for a collective c it was not in).
func memberState(ranks []*pmRank, r int, c pmCall) string {
	if r < 0 || r >= len(ranks) || ranks[r] == nil {
		return "no rank file"
	}
	if seq, ok := passedIt(ranks, r, c); ok {
		return fmt.Sprintf("had left it: inside instance %d", seq)
	}
	pr := ranks[r]
	if len(pr.calls) > 0 {
		var d []string
		for _, c := range pr.calls {
			d = append(d, "in "+callText(c, true))
		}
		return strings.Join(d, "; ")
	}
	if pr.clean {
		return "finished (MPI_Finalize)"
	}
	return "ended, not inside an MPI call: " + groupText(pr.end)
}

// flightText is a group's line.
func flightText(g merge.FlightGroup, op trace.Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: inside %s", plural(len(g.Ranks), "rank", "ranks"), merge.RankRanges(g.Ranks, ", "), g.Op)
	if g.Comm != "" && (op.IsCollective() || g.Comm != "world") {
		b.WriteString(" on " + g.Comm)
	}
	if g.Instance != nil {
		fmt.Fprintf(&b, ", instance %d", *g.Instance)
	}
	if g.Peers != "" {
		b.WriteString(" " + g.Peers)
	}
	if lo, hi := fmt.Sprintf("%.3f", g.EnteredFirstS), fmt.Sprintf("%.3f", g.EnteredLastS); lo == hi {
		fmt.Fprintf(&b, ", entered %s s", lo)
	} else {
		fmt.Fprintf(&b, ", entered %s-%s s", lo, hi)
	}
	if g.Threads > len(g.Ranks) {
		fmt.Fprintf(&b, " (%d threads)", g.Threads)
	}
	if len(g.Sites) == 1 {
		b.WriteString(", at " + g.Sites[0])
	}
	verb := "members not inside it"
	if op.Synchronizing() {
		verb = "members that never entered it"
		for _, m := range g.NotInside {
			if strings.HasPrefix(m.State, "had left it") {
				// one left it, so every member had entered it
				verb = "members not inside it"
			}
		}
	}
	for i, m := range g.NotInside {
		if i == 0 {
			b.WriteString("; " + verb + ": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s (%s)", plural(len(m.Ranks), "rank", "ranks"), merge.RankRanges(m.Ranks, ", "), m.State)
	}
	return b.String()
}

// blocking says whether a rank inside op waits for its peer.
func blocking(op trace.Op) bool {
	switch op {
	case trace.OpRecv, trace.OpSend, trace.OpSsend, trace.OpRsend, trace.OpBsend, trace.OpSendrecv,
		trace.OpSendrecvReplace, trace.OpProbe, trace.OpMprobe:
		return true
	}
	return op.IsCollective()
}

// deadlocks finds the cycles of the wait-for graph: a rank inside a
// blocking point-to-point call waits for its peer, a rank inside a
// collective for the members not inside the same instance.
func deadlocks(ranks []*pmRank) []merge.Deadlock {
	n := len(ranks)
	edges := make([][]int, n)
	why := map[[2]int]string{}
	// waitedFor lists the members a collective instance waits for: those
	// neither inside it nor past it, computed once per instance (every
	// member inside it waits for the same ones).
	type instKey struct {
		comm uint64
		seq  uint32
	}
	waited := map[instKey][]int{}
	waitedFor := func(c pmCall) []int {
		if c.comm == nil {
			return nil
		}
		k := instKey{c.comm.ID, c.fl.Seq}
		if w, ok := waited[k]; ok {
			return w
		}
		var w []int
		for _, m := range c.members {
			r := int(m)
			if r < 0 || r >= n || ranks[r] == nil {
				continue
			}
			inside := false
			for _, o := range ranks[r].calls {
				if o.op == c.op && o.comm != nil && o.comm.ID == c.comm.ID && o.fl.Seq == c.fl.Seq {
					inside = true
				}
			}
			if _, left := passedIt(ranks, r, c); !inside && !left {
				w = append(w, r)
			}
		}
		waited[k] = w
		return w
	}
	for _, pr := range ranks {
		if pr == nil {
			continue
		}
		for _, c := range pr.calls {
			if !blocking(c.op) {
				continue
			}
			add := func(to int) {
				if to < 0 || to >= n || ranks[to] == nil || len(ranks[to].calls) == 0 {
					return
				}
				k := [2]int{pr.rank, to}
				if _, ok := why[k]; !ok {
					edges[pr.rank] = append(edges[pr.rank], to)
					why[k] = callText(c, true)
				}
			}
			if c.op.IsCollective() {
				for _, r := range waitedFor(c) {
					if r != pr.rank {
						add(r)
					}
				}
				continue
			}
			if c.peer >= 0 {
				add(c.peer)
			}
			if c.peer2 >= 0 && c.op != trace.OpSendrecv && c.op != trace.OpSendrecvReplace {
				add(c.peer2)
			}
		}
	}
	for i := range edges {
		sort.Ints(edges[i])
	}
	sccs := tarjan(edges)
	var out []merge.Deadlock
	for _, comp := range sccs {
		self := len(comp) == 1 && contains(edges[comp[0]], comp[0])
		if len(comp) < 2 && !self {
			continue
		}
		sort.Ints(comp)
		cyc := cycleThrough(edges, comp)
		var parts []string
		for i, r := range cyc {
			if i == 8 {
				parts = append(parts, fmt.Sprintf("... %d more", len(cyc)-8))
				break
			}
			parts = append(parts, fmt.Sprintf("rank %d in %s", r, why[[2]int{r, cyc[(i+1)%len(cyc)]}]))
		}
		d := merge.Deadlock{Ranks: comp, Text: strings.Join(parts, ", ") + ": deadlock"}
		if len(comp) > len(cyc) {
			d.Text += fmt.Sprintf(" (%d ranks wait on each other: %s)", len(comp), merge.RankRanges(comp, ", "))
		}
		out = append(out, d)
	}
	// ranks that wait (directly or not) on a cycle: breadth first along
	// the reversed edges
	rev := make([][]int, n)
	for r, es := range edges {
		for _, to := range es {
			rev[to] = append(rev[to], r)
		}
	}
	for i := range out {
		seen := map[int]bool{}
		q := append([]int(nil), out[i].Ranks...)
		for _, r := range q {
			seen[r] = true
		}
		for len(q) > 0 {
			v := q[0]
			q = q[1:]
			for _, w := range rev[v] {
				if !seen[w] {
					seen[w] = true
					q = append(q, w)
					out[i].Blocked = append(out[i].Blocked, w)
				}
			}
		}
		sort.Ints(out[i].Blocked)
		if len(out[i].Blocked) > 0 {
			out[i].Text += fmt.Sprintf("; blocked behind it: %s %s", plural(len(out[i].Blocked), "rank", "ranks"), merge.RankRanges(out[i].Blocked, ", "))
		}
	}
	return out
}

func contains(s []int, x int) bool {
	i := sort.SearchInts(s, x)
	return i < len(s) && s[i] == x
}

// tarjan returns the strongly connected components of the graph
// (iterative, so thousands of ranks in one cycle do not overflow a stack).
func tarjan(edges [][]int) [][]int {
	n := len(edges)
	index, low := make([]int, n), make([]int, n)
	for i := range index {
		index[i] = -1
	}
	onStack := make([]bool, n)
	var out [][]int
	var st []int
	next := 0
	type frame struct{ v, i int }
	for s := 0; s < n; s++ {
		if index[s] >= 0 || len(edges[s]) == 0 {
			continue
		}
		call := []frame{{s, 0}}
		index[s], low[s] = next, next
		next++
		st = append(st, s)
		onStack[s] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.i < len(edges[f.v]) {
				w := edges[f.v][f.i]
				f.i++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					st = append(st, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] == index[v] {
				var comp []int
				for {
					w := st[len(st)-1]
					st = st[:len(st)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				out = append(out, comp)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return minOf(out[i]) < minOf(out[j]) })
	return out
}

func minOf(s []int) int {
	m := s[0]
	for _, x := range s {
		m = min(m, x)
	}
	return m
}

// cycleThrough returns a shortest cycle from the component's lowest rank
// back to itself (breadth first, inside the component).
func cycleThrough(edges [][]int, comp []int) []int {
	in := map[int]bool{}
	for _, r := range comp {
		in[r] = true
	}
	start := comp[0]
	prev := map[int]int{}
	q := []int{start}
	seen := map[int]bool{}
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		for _, w := range edges[v] {
			if !in[w] {
				continue
			}
			if w == start {
				var cyc []int
				for x := v; ; x = prev[x] {
					cyc = append(cyc, x)
					if x == start {
						break
					}
				}
				for i, j := 0, len(cyc)-1; i < j; i, j = i+1, j-1 {
					cyc[i], cyc[j] = cyc[j], cyc[i]
				}
				return cyc
			}
			if !seen[w] {
				seen[w] = true
				prev[w] = v
				q = append(q, w)
			}
		}
	}
	return comp
}

// Lines is the section as text lines (the text report and
// tracemerge info print them under "Post-mortem").
func Lines(pm *merge.PostMortem) []string {
	if pm == nil {
		return nil
	}
	var out []string
	if f := pm.First; f != nil {
		when := fmt.Sprintf("%.3f s", f.TimeS)
		if f.TimeS < 0 {
			when = "an unknown time"
		}
		if f.Inferred {
			when = "about " + when + " (inferred)"
		}
		out = append(out, fmt.Sprintf("first to end: rank %d at %s: %s", f.Rank, when, f.Text))
	} else {
		out = append(out, "first to end: not known (no rank recorded how it ended)")
	}
	if len(pm.EndGroups) > 0 {
		out = append(out, "how the ranks ended, in order:")
	}
	for _, g := range pm.EndGroups {
		when := ""
		switch {
		case g.FirstS < 0:
		case g.How == merge.EndKilled:
			when = fmt.Sprintf(" after %.3f s", g.FirstS)
		case fmt.Sprintf("%.3f", g.FirstS) == fmt.Sprintf("%.3f", g.LastS):
			when = fmt.Sprintf(" at %.3f s", g.FirstS)
		default:
			when = fmt.Sprintf(" at %.3f-%.3f s", g.FirstS, g.LastS)
		}
		txt := g.Text
		if len(g.Ranks) == 1 {
			for _, e := range pm.Ends {
				if e.Rank == g.Ranks[0] {
					txt = e.Text
				}
			}
		}
		out = append(out, fmt.Sprintf("  %s %s%s: %s", plural(len(g.Ranks), "rank", "ranks"), merge.RankRanges(g.Ranks, ", "), when, txt))
	}
	if len(pm.Finalized) > 0 {
		out = append(out, fmt.Sprintf("  %s %s: MPI_Finalize", plural(len(pm.Finalized), "rank", "ranks"), merge.RankRanges(pm.Finalized, ", ")))
	}
	if len(pm.InFlight) > 0 {
		out = append(out, "calls in flight when the ranks ended:")
		for _, g := range pm.InFlight {
			out = append(out, "  "+g.Text)
		}
	} else {
		out = append(out, "calls in flight when the ranks ended: none recorded")
	}
	for _, d := range pm.Deadlocks {
		out = append(out, "  "+d.Text)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

package merge

// Per-instance metrics and their aggregation (the metrics goroutine).

import (
	"container/heap"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

type rankWait struct {
	wait, lateness float64
	last, caused   int
}

type opAccum struct {
	used                                     bool
	count, calls                             int
	total                                    float64
	entrySkew, exitSkew, wait, latency, span accum
	viol                                     int
	maxViol                                  float64
	zeroByte                                 int // instances moving no data (not Barrier)
	histExit, histWait                       hist
}

type csAccum struct {
	site  int32
	op    trace.Op
	calls int
	total float64
	wait  accum
}

type siteKey struct {
	obj  string // object path, "" when the pc lies in no known object
	addr uint64 // vaddr inside obj (pc - base), or the raw pc
	pc   uint64 // one raw pc seen for it
}

// The metrics goroutine: instances the matcher resolved are finalized
// (metrics, aggregation) off the merge goroutine, which only matches.
// A batch goes when it holds finBatchSize instances or finBatchSlots
// member slots, whichever comes first: an instance of a 16,384-rank comm
// holds ≈ 1 MB of per-member arrays, and a run with fewer than 256
// collectives would otherwise keep every one of them in the last,
// unsent batch until the end (≈ 110 MB at 16,384 ranks), then finalize
// them all at once.
const (
	finBatchSize  = 256
	finBatchSlots = 1 << 14
)

func (a *analyzer) startMetrics() {
	a.finCh = make(chan []*openInst, 8)
	a.m.recycled = make(chan []*openInst, 16)
	a.finDone = make(chan struct{})
	a.finBatch = make([]*openInst, 0, finBatchSize)
	go func() {
		defer close(a.finDone)
		defer func() {
			if r := recover(); r != nil {
				a.finErr = fmt.Errorf("internal error in metrics: %v", r)
				for range a.finCh { // keep the merge from blocking
				}
			}
		}()
		for b := range a.finCh {
			for _, in := range b {
				a.finalize(in)
			}
			select {
			case a.m.recycled <- b: // back to the pools (or left to the GC)
			default:
			}
		}
	}()
}

// enqueue hands one resolved instance to the metrics goroutine.
func (a *analyzer) enqueue(in *openInst) {
	a.finBatch = append(a.finBatch, in)
	a.finSlots += len(in.state)
	if len(a.finBatch) < finBatchSize && a.finSlots < finBatchSlots {
		return
	}
	a.finCh <- a.finBatch
	a.finSlots = 0
	a.m.reclaim()
	if n := len(a.m.spare); n > 0 {
		a.finBatch = a.m.spare[n-1]
		a.m.spare = a.m.spare[:n-1]
	} else {
		a.finBatch = make([]*openInst, 0, finBatchSize)
	}
}

// stopMetrics flushes the last batch and waits for the metrics goroutine
// (idempotent).
func (a *analyzer) stopMetrics() {
	if a.finCh == nil {
		return
	}
	if len(a.finBatch) > 0 {
		a.finCh <- a.finBatch
		a.finBatch = nil
		a.finSlots = 0
	}
	close(a.finCh)
	<-a.finDone
	a.finCh = nil
}

// extent returns the first and last enter and exit over the members that
// arrived, the position of the last to enter, and false when none did.
func (in *openInst) extent() (fe, le, fx, lx float64, lastPos int, ok bool) {
	lastPos = -1
	for p := range in.state {
		if in.state[p] != stArrived {
			continue
		}
		e, x := in.enter[p], in.exit[p]
		if !ok {
			fe, le, fx, lx, lastPos, ok = e, e, x, x, p, true
			continue
		}
		if e < fe {
			fe = e
		}
		if e > le {
			le, lastPos = e, p
		}
		if x < fx {
			fx = x
		}
		if x > lx {
			lx = x
		}
	}
	return fe, le, fx, lx, lastPos, ok
}

// finalize computes one instance's metrics and aggregates it.
// countInstance adds one instance of op, reached by got members, to op's
// totals and the run's: its entry and exit skew and its clock-condition
// violation v (counted when got >= 2 and v > 0); it makes the rank-pair
// matrix when the run is small enough for one and returns op's
// accumulator. The serial pass (finalize) and the partitioned replay
// (partReplay.apply) count an instance with it.
func (a *analyzer) countInstance(op trace.Op, got int, entrySkew, exitSkew, v float64) *opAccum {
	oa := &a.ops[op]
	oa.used = true
	oa.count++
	oa.calls += got
	oa.entrySkew.add(entrySkew)
	oa.exitSkew.add(exitSkew)
	if got >= 2 && v > 0 {
		oa.viol++
		a.clockViol++
		if v > oa.maxViol {
			oa.maxViol = v
		}
		if v > a.maxViol {
			a.maxViol = v
		}
	}
	if a.pair == nil && a.rn.WorldSize <= MaxPairRanks {
		a.pair = newPairMatrix(a.rn.WorldSize)
	}
	return oa
}

func (a *analyzer) finalize(in *openInst) {
	cs := in.comm
	n := len(cs.members)
	fe, le, fx, lx, lastPos, ok := in.extent()
	if !ok {
		return
	}
	if in.opMismatch {
		a.opMism++
	}
	if len(a.zooms) == 0 {
		// no capture requested
	} else if zi, ok := a.zoomIdx[InstanceKey{cs.id, in.seq}]; ok && !cs.self {
		z := &a.zooms[zi]
		z.Found = true
		z.Inst = a.buildInstance(in, false)
		z.Raw = a.buildInstance(in, true)
	}
	if fe < a.wFrom || fe > a.wTo {
		return
	}
	a.instances++
	complete := in.got == n
	if !complete {
		a.incomp++
	}
	op := in.op
	if int(op) >= len(a.ops) {
		return
	}
	if complete && op.Synchronizing() && n >= 2 && n <= MaxExitProfile {
		a.exitProfile(in, op, fx)
	}
	cls := WaitClassOf(op)
	entrySkew, exitSkew := le-fe, lx-fx
	r := a.instWaits(in, false)
	pos, wait, cause, v := r.pos, r.wait, r.cause, r.viol
	oa := a.countInstance(op, in.got, entrySkew, exitSkew, v)
	if cls.HasLatency() && r.synced {
		oa.latency.add(fx - le)
		if complete {
			a.hbFacts(in)
		}
	}
	if r.zero {
		oa.zeroByte++
	}
	oa.span.add(lx - fe)
	oa.histExit.add(exitSkew)
	if in.got >= 2 {
		a.ranks[cs.members[lastPos]].wait.last++
	}
	var causedBy []int32 // ranks that caused a wait in this instance (small)
	for i, p := range pos {
		w := wait[i]
		d := in.exit[p] - in.enter[p]
		oa.total += d
		oa.wait.add(w)
		oa.histWait.add(w)
		wr := cs.members[p]
		a.ranks[wr].wait.wait += w // arrived members have a rank file
		if c := cause[i]; c >= 0 && w > 0 {
			cr := cs.members[pos[c]]
			a.ranks[cr].wait.lateness += w
			seen := false
			for _, r := range causedBy {
				seen = seen || r == cr
			}
			if !seen {
				causedBy = append(causedBy, cr)
				a.ranks[cr].wait.caused++
			}
			if a.pair != nil {
				a.pair.add(cr, wr, w)
			}
		}
		if site := in.site[p]; site >= 0 {
			ca := a.csAccFor(site, op)
			ca.calls++
			ca.total += d
			ca.wait.add(w)
		}
	}
	if len(a.worst) < a.opt.TopN || entrySkew > a.worst[0].inst.EntrySkew {
		w := worstEntry{inst: a.buildInstance(in, false), raw: a.buildInstance(in, true)}
		if len(a.worst) < a.opt.TopN {
			heap.Push(&a.worst, w)
		} else {
			a.worst[0] = w
			heap.Fix(&a.worst, 0)
		}
	}
}

// hbFacts records the happened-before facts of a complete N×N instance
// with data between each member and world rank 0 (refine.go).
func (a *analyzer) hbFacts(in *openInst) {
	cs := in.comm
	p0 := -1
	for p, wr := range cs.members {
		if wr == 0 {
			p0 = p
			break
		}
	}
	if p0 < 0 || in.state[p0] != stArrived {
		return
	}
	for p, wr := range cs.members {
		if p == p0 || in.state[p] != stArrived {
			continue
		}
		a.hb.add(wr, in.enter[p], in.exit[p], in.enter[p]-in.exit[p0], in.exit[p]-in.enter[p0])
	}
}

// instResult is what instWaits finds for one instance.
type instResult struct {
	pos   []int     // positions in the communicator of the arrived members
	wait  []float64 // parallel to pos
	cause []int     // parallel to pos, indexes pos (-1 none)
	viol  float64   // clock-condition violation (ClockViolationFlow)
	// synced: every member but the last entrant depends on it under the
	// data rule (SynchronizedBy), so first exit − last enter is a latency.
	synced bool
	// zero: no member sends or receives a byte (not MPI_Barrier).
	zero bool
}

// instWaits computes the waits of the arrived members of in (WaitClass
// semantics and data rule) with corrected or raw times. The slices are
// scratch of the calling goroutine.
func (a *analyzer) instWaits(in *openInst, raw bool) instResult {
	s := &a.wscr
	s.pos, s.enter, s.exit = s.pos[:0], s.enter[:0], s.exit[:0]
	s.sent, s.recv = s.sent[:0], s.recv[:0]
	root, last := -1, -1
	for p := range in.state {
		if in.state[p] != stArrived {
			continue
		}
		if int32(p) == in.root {
			root = len(s.pos)
		}
		s.pos = append(s.pos, p)
		if raw {
			s.enter = append(s.enter, in.rawEnter[p])
			s.exit = append(s.exit, in.rawExit[p])
		} else {
			s.enter = append(s.enter, in.enter[p])
			s.exit = append(s.exit, in.exit[p])
		}
		if i := len(s.enter) - 1; last < 0 || s.enter[i] > s.enter[last] {
			last = i
		}
		s.sent = append(s.sent, in.sent[p])
		s.recv = append(s.recv, in.recv[p])
	}
	n := len(s.pos)
	if cap(s.wait) < n {
		s.wait, s.cause = make([]float64, n), make([]int, n)
	}
	s.wait, s.cause = s.wait[:n], s.cause[:n]
	cls := WaitClassOf(in.op)
	flow := FlowOf(in.op, s.sent, s.recv)
	CollectiveNeedsFlow(cls, root, s.enter, flow, s.wait, s.cause) // s.wait holds the needs
	r := instResult{pos: s.pos, wait: s.wait, cause: s.cause, zero: flow.Zero(n)}
	r.viol = violationFromNeeds(s.exit, s.wait)
	if r.viol > 0 && !raw && a.opt.CollectRepairs {
		for i := range s.exit {
			a.rep.add(in.comm.members[s.pos[i]], s.exit[i], s.wait[i]-s.exit[i])
		}
	}
	r.synced = SynchronizedBy(last, s.enter, s.wait)
	waitsFromNeeds(s.enter, s.exit, s.wait, s.cause)
	return r
}

// waitScratch is the metrics goroutine's scratch space for instWaits.
type waitScratch struct {
	pos         []int
	enter, exit []float64
	sent, recv  []uint64
	wait        []float64
	cause       []int
}

// buildInstance copies an open instance into an Instance (arrived members
// only) with corrected or raw times.
func (a *analyzer) buildInstance(in *openInst, raw bool) datamodel.Instance {
	cs := in.comm
	inst := datamodel.Instance{CommID: cs.id, Seq: in.seq, Op: in.op, OpName: in.op.String(), Complete: in.got == len(cs.members), LastRank: -1, MaxWaitRank: -1, RootRank: -1, CauseRank: -1}
	if in.root >= 0 && int(in.root) < len(cs.members) {
		inst.RootRank = cs.members[in.root]
	}
	var sites []int32
	var pcs []uint64
	n := 0
	for _, st := range in.state {
		if st == stArrived {
			n++
		}
	}
	if n > 0 {
		// made at their size: grown by append, the arrays of a
		// 16,384-rank instance made twice their 1 MB in garbage
		inst.Ranks, inst.Enter, inst.Exit = make([]int32, 0, n), make([]float64, 0, n), make([]float64, 0, n)
		inst.Sent, inst.Recv = make([]uint64, 0, n), make([]uint64, 0, n)
		sites, pcs = make([]int32, 0, n), make([]uint64, 0, n)
	}
	for p, w := range cs.members {
		if in.state[p] != stArrived {
			continue
		}
		e, x := in.enter[p], in.exit[p]
		if raw {
			e, x = in.rawEnter[p], in.rawExit[p]
		}
		inst.Ranks = append(inst.Ranks, w)
		inst.Enter = append(inst.Enter, e)
		inst.Exit = append(inst.Exit, x)
		inst.Sent = append(inst.Sent, in.sent[p])
		inst.Recv = append(inst.Recv, in.recv[p])
		sites = append(sites, in.site[p])
		pcs = append(pcs, in.pc[p])
	}
	computeInstanceMetrics(&inst)
	inst.LastSiteIdx, inst.WaitSiteIdx, inst.CauseSiteIdx = -1, -1, -1
	for i, r := range inst.Ranks {
		if r == inst.LastRank {
			inst.LastSiteIdx, inst.LastCallsite = sites[i], pcs[i]
		}
		if r == inst.MaxWaitRank {
			inst.WaitSiteIdx = sites[i]
		}
		if r == inst.CauseRank {
			inst.CauseSiteIdx = sites[i]
		}
	}
	return inst
}

// computeInstanceMetrics fills the metric fields of inst from its Enter and
// Exit slices, its Op, its RootRank and its Sent/Recv (waits per WaitClass
// under the data rule; nil Sent/Recv: every member sends and receives).
func computeInstanceMetrics(inst *datamodel.Instance) {
	if len(inst.Enter) == 0 {
		return
	}
	fe, le, fx, lx := inst.Enter[0], inst.Enter[0], inst.Exit[0], inst.Exit[0]
	last := 0
	for i := range inst.Enter {
		e, x := inst.Enter[i], inst.Exit[i]
		if e < fe {
			fe = e
		}
		if e > le {
			le, last = e, i
		}
		if x < fx {
			fx = x
		}
		if x > lx {
			lx = x
		}
	}
	cls := WaitClassOf(inst.Op)
	inst.WaitClass = cls.String()
	inst.EntrySkew = le - fe
	inst.ExitSkew = lx - fx
	inst.Span = lx - fe
	inst.LastRank = inst.Ranks[last]
	root := -1
	for i, r := range inst.Ranks {
		if r == inst.RootRank && inst.RootRank >= 0 {
			root = i
		}
	}
	n := len(inst.Enter)
	flow := FlowOf(inst.Op, inst.Sent, inst.Recv)
	need := make([]float64, n)
	cause := make([]int, n)
	CollectiveNeedsFlow(cls, root, inst.Enter, flow, need, cause)
	inst.Latency = 0
	if cls.HasLatency() && SynchronizedBy(last, inst.Enter, need) {
		inst.Latency = fx - le
	}
	inst.Violation = 0
	if n >= 2 {
		inst.Violation = violationFromNeeds(inst.Exit, need)
	}
	inst.Wait = need
	waitsFromNeeds(inst.Enter, inst.Exit, inst.Wait, cause)
	inst.WaitCause = make([]int32, n)
	inst.MaxWaitRank, inst.CauseRank = -1, -1
	best := 0.0
	for i, c := range cause {
		inst.WaitCause[i] = -1
		if c >= 0 {
			inst.WaitCause[i] = inst.Ranks[c]
		}
		if inst.Wait[i] > best {
			best = inst.Wait[i]
			inst.MaxWaitRank, inst.CauseRank = inst.Ranks[i], inst.WaitCause[i]
		}
	}
}

// ComputeInstanceMetrics recomputes an instance's metrics (skews, latency,
// violation, waits and their causes) from Enter, Exit, Op, RootRank and
// Sent/Recv, e.g. for an instance built from raw times.
func ComputeInstanceMetrics(inst *datamodel.Instance) { computeInstanceMetrics(inst) }

// resolveInstance names the call sites of an instance's last and
// longest-waiting ranks.
func (a *analyzer) resolveInstance(in *datamodel.Instance) {
	name := func(site int32) string {
		if site < 0 || int(site) >= len(a.sites) {
			return ""
		}
		sk := a.sites[site]
		return a.opt.Resolve.Resolve(sk.obj, sk.addr).String()
	}
	in.LastSite, in.MaxWaitSite, in.CauseSite = name(in.LastSiteIdx), name(in.WaitSiteIdx), name(in.CauseSiteIdx)
}

// epochsBound is the largest sync-path bound (ns) of a rank's epochs, -1
// when one of them recorded none (or an unreadable one).
func epochsBound(eps []trace.Epoch) float64 {
	if len(eps) == 0 {
		return -1
	}
	b := 0.0
	for _, e := range eps {
		v, err := strconv.ParseFloat(e.Params["bound_ns"], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || v != v {
			return -1
		}
		b = max(b, v)
	}
	return b
}

// clockQuality states how far the timeline can be trusted.
func (a *analyzer) clockQuality() datamodel.ClockQuality {
	q := datamodel.ClockQuality{Mode: a.opt.Clock.String(), Violations: a.clockViol, MaxViolationNS: a.maxViol, Warnings: []string{}, CheckMaxNS: []float64{}, Algorithms: []string{}}
	var ref *rundir.RankInput
	if len(a.rn.Ranks) > 0 {
		ref = a.rn.Ranks[0] // rank 0 when present: it holds the checks
	}
	if ref != nil {
		eps := append([]trace.Epoch(nil), ref.Meta.Epochs...)
		sort.SliceStable(eps, func(i, j int) bool { return eps[i].Index < eps[j].Index })
		seenAlg := map[string]bool{}
		q.Knots = len(eps)
		for _, e := range eps {
			if e.Params["resync"] != "" { // offset-only knots: no self-check
				q.ResyncEpochs++
				if !seenAlg[e.Algorithm] {
					seenAlg[e.Algorithm] = true
					q.Algorithms = append(q.Algorithms, e.Algorithm+" (resync)")
				}
				continue
			}
			q.Algorithms = append(q.Algorithms, e.Algorithm)
			m := 0.0
			for _, c := range e.Check {
				if v := math.Abs(c.OffsetNS); v > m {
					m = v
				}
			}
			q.CheckMaxNS = append(q.CheckMaxNS, m)
		}
	}
	q.SyncBoundNS = -1
	q.LooseKnots = a.looseKnots
	q.ErrorBars, q.ErrBarsByRank = a.errorBarSummaries()
	if c := a.opt.CLC; c != nil {
		q.CLCBefore, q.CLCRepairs, q.CLCRanks, q.CLCMaxNS = c.Before, c.Repairs, c.Ranks(), c.MaxNS
	}
	for _, ri := range a.rn.Ranks {
		eps := append([]trace.Epoch(nil), ri.Meta.Epochs...)
		sort.SliceStable(eps, func(i, j int) bool { return eps[i].Index < eps[j].Index })
		for i := 1; i < len(eps); i++ {
			q.MaxKnotGapNS = max(q.MaxKnotGapNS, float64(eps[i].EndNS-eps[i-1].EndNS))
		}
		if r := int(ri.Meta.Header.Rank); r >= 0 && r < 1<<24 {
			for len(q.SyncBounds) <= r {
				q.SyncBounds = append(q.SyncBounds, -1)
			}
			q.SyncBounds[r] = epochsBound(eps)
			q.SyncBoundNS = max(q.SyncBoundNS, q.SyncBounds[r])
		}
	}
	var specs []string
	seen := map[string]bool{}
	for _, ri := range a.rn.Ranks {
		if in := ri.Meta.Header.Inject; in != nil {
			q.Injected = true
			if !seen[in.Spec] {
				seen[in.Spec] = true
				specs = append(specs, in.Spec)
			}
		}
	}
	if q.Injected {
		q.InjectSpec = strings.Join(specs, " | ")
		emu := ""
		for _, ri := range a.rn.Ranks {
			if in := ri.Meta.Header.Inject; in != nil && in.NodeSize > 0 {
				emu = fmt.Sprintf(", nodes emulated with GCLOCK_NODE_SIZE=%d ranks each", in.NodeSize)
				break
			}
		}
		q.Warnings = append(q.Warnings, fmt.Sprintf(
			"CLOCK ERROR WAS INJECTED: this run's timers were deliberately faked (GCLOCK_FAKE_CLOCK=%s%s); the recorded times are a test, not the machine's real clocks", q.InjectSpec, emu))
	}
	if a.opt.Clock == correct.ClockRaw {
		q.Warnings = append(q.Warnings,
			"CLOCK MODE RAW: timestamps are uncorrected local times; skews, waits, the late rank and the Gantt order across ranks are not trustworthy")
	}
	if a.clockViol > 0 {
		q.Warnings = append(q.Warnings, fmt.Sprintf(
			"%d clock-condition violations (max %s): a rank left a collective before a rank whose data it needs entered it (the last data-sending entrant of an N×N op, a broadcast's root, a reduce's last contributor; calls moving no data are exempt), so the timestamps in use (mode %s) are off by at least that much",
			a.clockViol, FormatNS(a.maxViol), a.opt.Clock))
	}
	return q
}

// MaxExitProfile bounds the communicator size for exit-delay profiles.
const MaxExitProfile = 4096

type exitKey struct {
	op trace.Op
	cs *commState
}

type exitAcc struct {
	n          int
	sum, sumsq []float64
}

// exitAccOf is the exit profile of op on cs, made at its first instance
// (by the serial exitProfile and the partitioned replay alike).
func (a *analyzer) exitAccOf(op trace.Op, cs *commState) *exitAcc {
	k := exitKey{op, cs}
	acc := a.exits[k]
	if acc == nil {
		n := len(cs.members)
		acc = &exitAcc{sum: make([]float64, n), sumsq: make([]float64, n)}
		if a.exits == nil {
			a.exits = map[exitKey]*exitAcc{}
		}
		a.exits[k] = acc
		a.exitOrder = append(a.exitOrder, k)
	}
	return acc
}

// exitProfile accumulates each member's exit delay behind the first exit.
func (a *analyzer) exitProfile(in *openInst, op trace.Op, firstExit float64) {
	acc := a.exitAccOf(op, in.comm)
	acc.n++
	for p, x := range in.exit {
		d := x - firstExit
		acc.sum[p] += d
		acc.sumsq[p] += d * d
	}
}

// exitDelays exports the exit profiles, largest communicators and most
// instances first.
func (a *analyzer) exitDelays() []datamodel.ExitDelay {
	out := []datamodel.ExitDelay{}
	for _, k := range a.exitOrder {
		acc := a.exits[k]
		e := datamodel.ExitDelay{Op: k.op.String(), Comm: k.cs.id, Instances: acc.n, Ranks: append([]int32(nil), k.cs.members...)}
		nf := float64(acc.n)
		for p := range acc.sum {
			mean := acc.sum[p] / nf
			ci := 0.0
			if acc.n > 1 {
				v := (acc.sumsq[p] - nf*mean*mean) / (nf - 1)
				ci = 1.96 * math.Sqrt(max(v, 0)/nf)
			}
			e.MeanNS = append(e.MeanNS, mean)
			e.CI95NS = append(e.CI95NS, ci)
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].Ranks) != len(out[j].Ranks) {
			return len(out[i].Ranks) > len(out[j].Ranks)
		}
		return out[i].Instances > out[j].Instances
	})
	return out
}

// MaxPairRanks bounds the world size for which the rank-pair wait matrix
// ("rank A made rank B wait this long") is kept: at most ranks² float64s,
// 8 MB at 1024 ranks.
const MaxPairRanks = 1024

// pairMatrix is the rank-pair wait matrix: one row of n waits per rank
// that caused a wait, made at its first (a run whose waits few ranks
// cause keeps few rows; the dense matrix was 8 MB of process 0's heap at
// 1024 ranks). The sums are those of the dense matrix, in the same order.
type pairMatrix struct {
	n    int
	rows [][]float64 // by causing rank; nil: caused no wait
}

func newPairMatrix(n int) *pairMatrix { return &pairMatrix{n: n, rows: make([][]float64, n)} }

// add adds wait w that rank cr caused rank wr.
func (m *pairMatrix) add(cr, wr int32, w float64) {
	row := m.rows[cr]
	if row == nil {
		row = make([]float64, m.n)
		m.rows[cr] = row
	}
	row[wr] += w
}

// at is the wait rank cr caused rank wr.
func (m *pairMatrix) at(cr, wr int) float64 {
	if row := m.rows[cr]; row != nil {
		return row[wr]
	}
	return 0
}

// pairTop returns the topN largest entries of row r (by=true: the ranks r
// made wait) or of column r (by=false: the ranks r waited for).
func (a *analyzer) pairTop(r int, row bool, topN int) []datamodel.RankAmount {
	if a.pair == nil {
		return nil
	}
	n := a.rn.WorldSize
	var out []datamodel.RankAmount
	for o := 0; o < n; o++ {
		v := a.pair.at(r, o)
		if !row {
			v = a.pair.at(o, r)
		}
		if v > 0 {
			out = append(out, datamodel.RankAmount{Rank: int32(o), NS: v})
		}
	}
	return largestAmounts(out, topN)
}

// worstEntry is one of the top-N instances, corrected and raw. In a
// partitioned pass, process 0's entries hold only the entry skew until
// the instances are fetched at the end from the owner ref names.
type worstEntry struct {
	inst, raw datamodel.Instance
	ref       *partWorstRef
}

// worstHeap is a min-heap by entry skew holding the top-N instances.
type worstHeap []worstEntry

func (h worstHeap) Len() int { return len(h) }

func (h worstHeap) Less(i, j int) bool { return h[i].inst.EntrySkew < h[j].inst.EntrySkew }

func (h worstHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *worstHeap) Push(x any) { *h = append(*h, x.(worstEntry)) }

func (h *worstHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// FormatNS formats a duration in ns with a readable unit.
func FormatNS(ns float64) string {
	v := math.Abs(ns)
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

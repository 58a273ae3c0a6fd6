package merge

import (
	"math"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// rcProg simulates an MPI program exactly, so that every wait state, and
// so every expected delay cost, is known: ranks compute, meet in
// MPI_Allreduce (everyone leaves lat after the last entered) and exchange
// halos (each rank posts Irecv, Isend to its neighbours, then waits in
// MPI_Waitall until the neighbours' sends arrived, lat after they were
// posted).
type rcProg struct {
	n     int
	t     []int64
	evs   [][]trace.Event
	seq   uint32
	req   []uint32
	waits []float64 // per rank: every wait state's time, as simulated
	lat   int64
	rc    *RootCauseStream // of the last run
	// cpDepth, when set, replaces the stream's critical-path chain depth.
	cpDepth int
	// bigArena gives the critical path's arena room for the whole run,
	// so that it is never compacted.
	bigArena bool
	// frozenNodes makes a rank's frozen part of its critical path a node
	// of its own at each of its turns (RootCauseStream.cpFrozen 0).
	frozenNodes bool
	// comms are more communicators (windows) of every rank.
	comms []trace.Comm
	rma   *RMAStream // the one-sided analysis of the last run
}

func newRCProg(n int) *rcProg {
	p := &rcProg{n: n, t: make([]int64, n), evs: make([][]trace.Event, n), req: make([]uint32, n),
		waits: make([]float64, n), lat: 3}
	for r := range p.t {
		p.t[r] = 1000
	}
	return p
}

func (p *rcProg) compute(d func(r int) int64) {
	for r := range p.t {
		p.t[r] += d(r)
	}
}

func (p *rcProg) allreduce(site uint64) {
	last := int64(0)
	for _, t := range p.t {
		last = max(last, t)
	}
	lasti := -1
	for r, t := range p.t {
		if t == last && lasti < 0 {
			lasti = r
		}
	}
	for r := range p.t {
		p.evs[r] = append(p.evs[r], trace.Event{Op: trace.OpAllreduce, Comm: 0, Seq: p.seq, Root: -1,
			Sent: 8, Recv: 8, Callsite: site, EnterNS: p.t[r], ExitNS: last + p.lat})
		if r != lasti {
			p.waits[r] += float64(last - p.t[r])
		}
		p.t[r] = last + p.lat
	}
	p.seq++
}

// halo exchanges with the neighbours nb(r) (ring or line).
func (p *rcProg) halo(site uint64, nb func(r int) []int) {
	post := make([]int64, p.n)
	for r := range p.t {
		post[r] = p.t[r] + 1 // Irecvs at t, Isends at t+1
	}
	for r := range p.t {
		peers := nb(r)
		var recs []trace.Event
		var reqs []uint32
		for i, q := range peers {
			p.req[r]++
			reqs = append(reqs, p.req[r])
			recs = append(recs, trace.Event{Op: trace.OpIrecv, Root: -1, Peer: int32(q), Tag: 5, Recv: 8, Req: p.req[r],
				Callsite: site + uint64(i), EnterNS: p.t[r], ExitNS: p.t[r]})
		}
		for i, q := range peers {
			p.req[r]++
			reqs = append(reqs, p.req[r])
			recs = append(recs, trace.Event{Op: trace.OpIsend, Root: -1, Peer: int32(q), Tag: 5, Sent: 8, Req: p.req[r],
				Callsite: site + 0x10 + uint64(i), EnterNS: post[r], ExitNS: post[r]})
		}
		enter := post[r] + 1
		done := enter
		for _, q := range peers {
			done = max(done, post[q]+p.lat)
		}
		exit := done + 1
		if w := min(maxPost(post, peers), exit) - enter; w > 0 {
			p.waits[r] += float64(w) // Late Sender: until the last send was posted
		}
		for i, q := range peers {
			recs = append(recs, trace.Event{Op: trace.OpWaitall, Root: -1, Peer: int32(q), Tag: 5, Recv: 8, Req: reqs[i],
				Seq: uint32(i), Callsite: site + 0x20, EnterNS: enter, ExitNS: exit})
		}
		for i, q := range peers {
			recs = append(recs, trace.Event{Op: trace.OpWaitall, Root: -1, Peer: int32(q), Tag: 5, Sent: 8, Req: reqs[len(peers)+i],
				Seq: uint32(len(peers) + i), Callsite: site + 0x20, EnterNS: enter, ExitNS: exit})
		}
		p.evs[r] = append(p.evs[r], recs...)
		p.t[r] = exit
	}
}

func maxPost(post []int64, peers []int) int64 {
	m := int64(math.MinInt64)
	for _, q := range peers {
		m = max(m, post[q])
	}
	return m
}

// ring and line give a rank's neighbours.
func ring(n int) func(int) []int {
	return func(r int) []int { return []int{(r + n - 1) % n, (r + 1) % n} }
}

func line(n int) func(int) []int {
	return func(r int) []int {
		var l []int
		if r > 0 {
			l = append(l, r-1)
		}
		if r < n-1 {
			l = append(l, r+1)
		}
		return l
	}
}

// run analyses the program with the raw clock (its times are the truth).
func (p *rcProg) run(t *testing.T) *datamodel.RootCauseResult {
	t.Helper()
	members := make([]int32, p.n)
	for i := range members {
		members[i] = int32(i)
	}
	run := &rundir.Run{WorldSize: p.n}
	for r := 0; r < p.n; r++ {
		evs := p.evs[r]
		m := rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: p.n},
			Comms: append([]trace.Comm{{ID: trace.CommWorldID, Local: 0, Kind: "world", Members: members}}, p.comms...)}
		src := &rundir.MemSource{M: m, Events: evs, ChunkSize: 64}
		run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &src.M, Src: src})
	}
	pass, err := Prepare(run, Options{Clock: correct.ClockRaw})
	if err != nil {
		t.Fatal(err)
	}
	rc := NewRootCauseStream(run, RootCauseOptions{}, nil)
	if p.cpDepth > 0 {
		rc.cpDepth = p.cpDepth
	}
	if p.frozenNodes {
		rc.cpFrozen = 0
	}
	if p.bigArena {
		rc.cpa.nodes = make([]cpNode, 1, 1<<20)
		rc.cpa.ents = make([]rcEnt, 0, 1<<22)
		rc.cpa.stints = make([]cpStint, 1, 1<<20)
	}
	p.rc = rc
	pass.AddStreamSink(rc)
	p.rma = NewRMAStream(run, RMAOptions{})
	pass.AddStreamSink(p.rma)
	if _, err := pass.Run(); err != nil {
		t.Fatal(err)
	}
	res := rc.Result()
	// Every wait ends somewhere: costs, small causes, no delay, unresolved.
	sum := res.AttributedNS + res.SmallNS + res.NoDelayNS + res.UnresolvedNS
	if math.Abs(sum-res.TotalWaitNS) > 1e-6*max(1, res.TotalWaitNS) {
		t.Errorf("attributed %v + small %v + no delay %v + unresolved %v = %v, want the total wait %v",
			res.AttributedNS, res.SmallNS, res.NoDelayNS, res.UnresolvedNS, sum, res.TotalWaitNS)
	}
	return res
}

func (p *rcProg) totalWait() float64 {
	s := 0.0
	for _, w := range p.waits {
		s += w
	}
	return s
}

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// TestRootCause_PropagationChainAlongALine: rank 0 computes Δ longer
// before a halo exchange on a line of 5 ranks; exchange k makes rank k
// wait, because rank k-1 was made late by the one before. All the waiting
// is rank 0's delay: directly the first wait, the next three through the
// ranks between (a chain of 4 steps).
func TestRootCause_PropagationChainAlongALine(t *testing.T) {
	const n, delta = 5, 100000
	p := newRCProg(n)
	p.allreduce(0x2000)
	for it := 0; it < 20; it++ {
		p.compute(func(r int) int64 {
			if r == 0 {
				return 500 + delta
			}
			return 500
		})
		for k := 0; k < n-1; k++ {
			p.halo(0x1000+uint64(k)*0x100, line(n))
			p.compute(func(int) int64 { return 50 })
		}
		p.allreduce(0x2000)
	}
	res := p.run(t)
	if !within(res.TotalWaitNS, p.totalWait(), 1e-9) {
		t.Fatalf("total wait %v, simulated %v", res.TotalWaitNS, p.totalWait())
	}
	if len(res.Causes) == 0 {
		t.Fatal("no root cause")
	}
	top := res.Causes[0]
	if top.Ranks != "0" || top.Call || !strings.Contains(top.Region, "→") {
		t.Fatalf("top cause %+v, want rank 0's compute region", top)
	}
	if top.Share < 0.99 {
		t.Errorf("top cause share %.4f, want >= 0.99 (%+v)", top.Share, res)
	}
	// direct: rank 1's waits in the first exchange; the rest propagated
	if top.PropagatedNS < 2.5*top.DirectNS {
		t.Errorf("direct %v propagated %v: want the three later steps propagated", top.DirectNS, top.PropagatedNS)
	}
	via := map[int32]bool{}
	for _, v := range top.Via {
		via[v.Rank] = true
	}
	for _, r := range []int32{1, 2, 3} {
		if !via[r] {
			t.Errorf("via %+v lacks rank %d", top.Via, r)
		}
	}
	for _, c := range res.Causes[1:] {
		if c.Share > 0.01 {
			t.Errorf("cause %+v above 1%%: only rank 0 delays", c)
		}
	}
}

// TestRootCause_CollectiveOnlyExactCosts: in a program of Allreduces only,
// rank 3's extra work Δ in one region makes the three others wait Δ at
// each Allreduce: its cost is exactly their waiting.
func TestRootCause_CollectiveOnlyExactCosts(t *testing.T) {
	const n, delta, iters = 4, 20000, 50
	p := newRCProg(n)
	for it := 0; it < iters; it++ {
		p.compute(func(r int) int64 { return 1000 })
		p.allreduce(0x100)
		p.compute(func(r int) int64 {
			if r == 3 {
				return 1000 + delta
			}
			return 1000
		})
		p.allreduce(0x200)
	}
	res := p.run(t)
	want := float64(3 * delta * iters)
	if !within(res.TotalWaitNS, want, 1e-9) || len(res.Causes) == 0 {
		t.Fatalf("total wait %v, want %v; causes %+v", res.TotalWaitNS, want, res.Causes)
	}
	top := res.Causes[0]
	if top.Ranks != "3" || !within(top.CostNS, want, 0.01) || top.PropagatedNS != 0 {
		t.Errorf("top %+v, want rank 3 with cost %v, all direct", top, want)
	}
	if top.Region != "0x100 → 0x200" {
		t.Errorf("region %q, want 0x100 → 0x200", top.Region)
	}
	if top.Waits != 3*iters {
		t.Errorf("waits %d, want %d", top.Waits, 3*iters)
	}
	// Critical path: rank 3's slow region is on it every iteration; its
	// imbalance indicator is the extra time over the mean.
	cp := res.CriticalPath
	var slow *datamodel.CPRegion
	for i := range cp.Regions {
		if cp.Regions[i].Region == "0x100 → 0x200" {
			slow = &cp.Regions[i]
		}
	}
	if slow == nil {
		t.Fatalf("critical path %+v lacks the slow region", cp)
	}
	wantPath := float64(iters * (1000 + delta))
	if !within(slow.PathNS, wantPath, 0.01) || slow.Ranks != "3" {
		t.Errorf("slow region on the path %+v, want %v on rank 3", slow, wantPath)
	}
	mean := float64(iters) * (1000 + delta/4.0)
	if !within(slow.ImbalanceNS, wantPath-mean, 0.01) {
		t.Errorf("imbalance %v, want %v", slow.ImbalanceNS, wantPath-mean)
	}
	// Marks: each of rank 3's slow regions, and a critical path that
	// covers the run without gaps or overlaps.
	var rcMarks, cpMarks []datamodel.Mark
	for _, m := range p.rc.Marks(res, 1) {
		if m.Kind == datamodel.MarkRootCause {
			rcMarks = append(rcMarks, m)
		} else {
			cpMarks = append(cpMarks, m)
		}
	}
	if len(rcMarks) != iters {
		t.Errorf("%d root-cause marks, want one per slow region (%d)", len(rcMarks), iters)
	}
	for _, m := range rcMarks {
		if m.Rank != 3 || !within(m.End-m.Start, 1000+delta, 1e-9) {
			t.Errorf("mark %+v, want rank 3's region of %d ns", m, 1000+delta)
			break
		}
	}
	if len(cpMarks) == 0 {
		t.Fatal("no critical-path marks")
	}
	for i := 1; i < len(cpMarks); i++ {
		if cpMarks[i].Start != cpMarks[i-1].End {
			t.Errorf("critical path stays %+v and %+v do not meet", cpMarks[i-1], cpMarks[i])
			break
		}
	}
	span := cpMarks[len(cpMarks)-1].End - cpMarks[0].Start
	if !within(span, cp.LengthNS, 1e-6) {
		t.Errorf("critical path drawn over %v ns, its length is %v", span, cp.LengthNS)
	}
}

// TestRootCause_SeveralCausesRanked: two delays of different sizes in
// different phases are both found, the larger first, each with its own
// waits.
func TestRootCause_SeveralCausesRanked(t *testing.T) {
	const n, iters = 4, 30
	p := newRCProg(n)
	p.allreduce(0x200)
	for it := 0; it < iters; it++ {
		p.compute(func(r int) int64 {
			if r == 1 {
				return 1000 + 5000
			}
			return 1000
		})
		p.allreduce(0x100)
		p.compute(func(r int) int64 {
			if r == 2 {
				return 1000 + 40000
			}
			return 1000
		})
		p.allreduce(0x200)
	}
	res := p.run(t)
	if len(res.Causes) < 2 {
		t.Fatalf("causes %+v", res.Causes)
	}
	a, b := res.Causes[0], res.Causes[1]
	if a.Ranks != "2" || !within(a.CostNS, 3*40000*iters, 0.01) {
		t.Errorf("first %+v, want rank 2, %v", a, 3*40000*iters)
	}
	if b.Ranks != "1" || !within(b.CostNS, 3*5000*iters, 0.01) {
		t.Errorf("second %+v, want rank 1, %v", b, 3*5000*iters)
	}
}

// TestRootCause_HaloThenCollectiveBlamesTheDelayedRank is the issue's
// program: rank 2 is slow before a ring halo exchange, which makes ranks
// 1 and 3 late for the Allreduce after it; rank 0 waits there for them.
// The root cause is rank 2's region, with ≥ 90 % of all waiting; ranks 1
// and 3 only passed the delay on and are not causes.
func TestRootCause_HaloThenCollectiveBlamesTheDelayedRank(t *testing.T) {
	const n = 4
	p := newRCProg(n)
	for it := 0; it < 200; it++ {
		p.compute(func(int) int64 { return 2000 })
		p.allreduce(0x100)
		p.compute(func(r int) int64 {
			if r == 2 {
				return 8000
			}
			return 2000
		})
		p.halo(0x200, ring(n))
		p.compute(func(int) int64 { return 2000 })
		p.allreduce(0x300)
	}
	res := p.run(t)
	top := res.Causes[0]
	if top.Ranks != "2" || top.Share < 0.9 {
		t.Fatalf("top %+v, want rank 2 with >= 90%% of %v", top, res.TotalWaitNS)
	}
	if top.Region != "0x100 → 0x200" {
		t.Errorf("region %q", top.Region)
	}
	for _, c := range res.Causes[1:] {
		if c.Share > 0.01 {
			t.Errorf("%+v: a rank that passed the delay on listed above 1%%", c)
		}
	}
	if top.PropagatedNS <= 0 {
		t.Errorf("no propagated cost: rank 0's waits at the Allreduce come from rank 2 through 1 and 3")
	}
}

// TestRootCause_BalancedProgramHasNoCause: with every rank doing the
// same work there is no wait and no cause.
func TestRootCause_BalancedProgramHasNoCause(t *testing.T) {
	p := newRCProg(4)
	for it := 0; it < 50; it++ {
		p.compute(func(int) int64 { return 3000 })
		p.halo(0x200, ring(4))
		p.allreduce(0x300)
	}
	res := p.run(t)
	if res.TotalWaitNS != 0 || len(res.Causes) != 0 {
		t.Errorf("balanced: wait %v, causes %+v", res.TotalWaitNS, res.Causes)
	}
}

func TestRankList_Ranges(t *testing.T) {
	for _, c := range []struct {
		in   []int32
		want string
	}{{nil, ""}, {[]int32{2}, "2"}, {[]int32{0, 1, 2, 3, 5, 9, 10}, "0-3,5,9-10"}} {
		if got := RankList(c.in); got != c.want {
			t.Errorf("RankList(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRootCause_RegionsSharedAcrossLayouts: ranks that load the program
// at the same address share one layout of the region table, ranks at
// another address get their own, and the same code (object, offset)
// is one region on all of them, with each rank's own count and time.
func TestRootCause_RegionsSharedAcrossLayouts(t *testing.T) {
	const n = 4
	run := &rundir.Run{WorldSize: n}
	base := []uint64{0x400000, 0x400000, 0x7f0000000000, 0x7f0000000000}
	for r := 0; r < n; r++ {
		m := rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: n,
			Objects: []trace.Object{{Path: "/bin/app", Base: base[r], Lo: base[r] + 0x1000, Hi: base[r] + 0x9000}}}}
		run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &m})
	}
	s := NewRootCauseStream(run, RootCauseOptions{}, nil)
	if got := len(s.layoutObjs); got != 3 { // none, and two addresses
		t.Fatalf("%d layouts, want 3", got)
	}
	if s.ranks.at(0).layout != s.ranks.at(1).layout || s.ranks.at(0).layout == s.ranks.at(2).layout {
		t.Fatalf("layouts %d %d %d %d: want ranks 0,1 and 2,3 to share", s.ranks.at(0).layout, s.ranks.at(1).layout, s.ranks.at(2).layout, s.ranks.at(3).layout)
	}
	for r := 0; r < n; r++ {
		rk := s.ranks.at(int32(r))
		for k := 0; k <= r; k++ { // rank r runs each region r+1 times
			st, id := s.region(rk, base[r]+0x2000, base[r]+0x3000, 0)
			st.count++
			st.total += 10
			if id != 0 {
				t.Fatalf("rank %d: compute region %d, want 0 (the same sites on every rank)", r, id)
			}
			st, id = s.region(rk, base[r]+0x3000, 0, trace.OpAllreduce)
			st.count++
			st.total += 1
			if id != 1 {
				t.Fatalf("rank %d: call region %d, want 1", r, id)
			}
		}
	}
	if len(s.regions) != 2 || s.nRegs != 4 {
		t.Errorf("%d regions and %d table entries, want 2 and 4 (2 per layout)", len(s.regions), s.nRegs)
	}
	for r := 0; r < n; r++ {
		if st := s.ranks.at(int32(r)).stats[0]; st.count != r+1 || st.total != float64(10*(r+1)) {
			t.Errorf("rank %d: compute region count %d time %v, want %d and %d", r, st.count, st.total, r+1, 10*(r+1))
		}
	}
}

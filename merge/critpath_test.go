package merge

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
)

// TestCriticalPath_SameWhateverTheChainDepth: the critical path (its
// profile and its stays on ranks) does not depend on how long a path's
// chain of nodes grows before it is flattened, from a flatten at every
// second node to none in the run.
func TestCriticalPath_SameWhateverTheChainDepth(t *testing.T) {
	const n = 6
	p := newRCProg(n)
	for it := 0; it < 300; it++ {
		p.compute(func(r int) int64 { return 1000 + int64((r*7+it*13)%11)*97 })
		p.allreduce(0x100)
		p.compute(func(r int) int64 { return 500 + int64((r*3+it*5)%7)*131 })
		p.halo(0x200, ring(n))
		if it%3 == 0 {
			p.compute(func(r int) int64 { return 300 + int64((r+it)%5)*53 })
			p.halo(0x300, line(n))
		}
	}
	depths := []int{2, 3, 17, cpMinDepth, 1 << 20}
	var want *datamodel.RootCauseResult
	var wantMarks []datamodel.Mark
	for _, d := range depths {
		p.cpDepth = d
		res := p.run(t)
		marks := p.rc.Marks(res, 1)
		if len(res.CriticalPath.Regions) == 0 {
			t.Fatalf("depth %d: empty critical path", d)
		}
		if want == nil {
			want, wantMarks = res, marks
			continue
		}
		if !reflect.DeepEqual(res.CriticalPath, want.CriticalPath) {
			t.Errorf("depth %d: critical path %+v, want %+v (depth %d)", d, res.CriticalPath, want.CriticalPath, depths[0])
		}
		if !reflect.DeepEqual(marks, wantMarks) {
			t.Errorf("depth %d: %d marks differ from depth %d's %d", d, len(marks), depths[0], len(wantMarks))
		}
	}
}

// TestCPDepthFor_BoundedByTheNodeBudget: the chain depth shares
// cpNodeBudget nodes over the ranks, within [cpMinDepth, cpMaxDepth].
func TestCPDepthFor_BoundedByTheNodeBudget(t *testing.T) {
	for _, c := range []struct{ ranks, want int }{
		{0, cpMaxDepth}, {1, cpMaxDepth}, {8, cpNodeBudget / 8}, {64, cpNodeBudget / 64},
		{128, cpMinDepth}, {16384, cpMinDepth},
	} {
		if got := cpDepthFor(c.ranks); got != c.want {
			t.Errorf("cpDepthFor(%d) = %d, want %d", c.ranks, got, c.want)
		}
	}
}

// TestCriticalPath_SameWithAndWithoutArenaCompactions: the critical
// path's nodes and stays, copied to a new arena whenever one is full,
// give the same path (profile and stays) as an arena that never fills,
// whatever the chain depth.
func TestCriticalPath_SameWithAndWithoutArenaCompactions(t *testing.T) {
	const n = 7
	p := newRCProg(n)
	for it := 0; it < 400; it++ {
		p.compute(func(r int) int64 { return 800 + int64((r*5+it*11)%13)*71 })
		p.allreduce(0x100)
		p.compute(func(r int) int64 { return 400 + int64((r*3+it*7)%5)*151 })
		p.halo(0x200, ring(n))
	}
	for _, depth := range []int{3, cpMinDepth} {
		p.cpDepth, p.bigArena = depth, true
		want := p.run(t)
		wantMarks := p.rc.Marks(want, 1)
		if c := p.rc.cpa.compactions; c != 0 {
			t.Fatalf("depth %d: %d compactions of the big arena, want 0", depth, c)
		}
		p.bigArena = false
		got := p.run(t)
		if c := p.rc.cpa.compactions; c < 4 {
			t.Fatalf("depth %d: %d compactions, want several (the test needs them)", depth, c)
		}
		if !reflect.DeepEqual(got.CriticalPath, want.CriticalPath) {
			t.Errorf("depth %d: with compactions %+v, without %+v", depth, got.CriticalPath, want.CriticalPath)
		}
		if marks := p.rc.Marks(got, 1); !reflect.DeepEqual(marks, wantMarks) {
			t.Errorf("depth %d: %d marks with compactions, %d without", depth, len(marks), len(wantMarks))
		}
	}
}

// TestCriticalPath_FoldSumsSegmentsInOrder: a rank's own part of its
// path, summed from its segment ring only when needed (when the ring is
// about to overwrite a segment, or at the end), equals adding each
// segment as it came, also when the ring wrapped many times and the
// part restarted inside a call (a wait taken).
func TestCriticalPath_FoldSumsSegmentsInOrder(t *testing.T) {
	s := NewRootCauseStream(&rundir.Run{WorldSize: 1}, RootCauseOptions{HistoryPerRank: 16}, nil)
	r := s.rank(0)
	rng := rand.New(rand.NewPCG(1, 2))
	var want rcPath
	want.rank = 0
	for i := 0; i < 1000; i++ {
		g := rcSeg{start: float64(i), dur: float64(rng.IntN(5)) * 0.1, region: int32(rng.IntN(23))}
		p := s.push(r, g)
		want.add(g.region, g.dur)
		if i == 500 { // a wait of 0.05 taken in this call: the part restarts
			r.cp.pending = r.cp.pending[:0]
			r.cp.from, r.cp.ovPos, r.cp.ovDur = p, p+1, max(0, g.dur-0.05)
			want.pending = want.pending[:0]
			want.add(g.region, max(0, g.dur-0.05))
		}
	}
	if len(r.segs) != 16 {
		t.Fatalf("ring of %d segments, want 16", len(r.segs))
	}
	r.fold(r.n)
	if !reflect.DeepEqual(r.cp.pending, want.pending) {
		t.Errorf("folded part %v, want %v", r.cp.pending, want.pending)
	}
}

// TestRootCause_FlatListsSwitchToAnIndexWhenLong: a side's propagated
// causes and a rank's partners, kept in flat slices and indexed by a map
// beyond their linear limit, give the sums a map would.
func TestRootCause_FlatListsSwitchToAnIndexWhenLong(t *testing.T) {
	for _, keys := range []int{1, rcPropLinear, rcPropLinear + 1, 5 * rcPropLinear} {
		var sd rcSide
		want := map[int64]float64{}
		rng := rand.New(rand.NewPCG(3, uint64(keys)))
		for i := 0; i < 20*keys; i++ {
			k, a := int64(rng.IntN(keys))<<32|7, float64(rng.IntN(100))
			sd.propAdd(k, a)
			want[k] += a
		}
		got := map[int64]float64{}
		for _, e := range sd.prop {
			if _, dup := got[e.cause]; dup {
				t.Fatalf("%d keys: cause %x twice", keys, e.cause)
			}
			got[e.cause] = e.amt
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d keys: prop %v, want %v", keys, got, want)
		}
		var r rcRank
		for i := 0; i < 3*keys; i++ {
			p := int32(i % keys)
			r.addPeer(p, rcSync{mine: uint64(i + 1), theirs: uint64(i + 1), t: float64(i)})
		}
		if len(r.peers) != keys {
			t.Errorf("%d partners: %d kept", keys, len(r.peers))
		}
		for p := int32(0); p < int32(keys); p++ {
			h := r.peer(p, false)
			last := 3*keys - keys + int(p) // the last i with i % keys == p
			if h == nil || h.y[0].mine != uint64(last+1) {
				t.Errorf("%d partners: partner %d: %+v, want the sync at %d first", keys, p, h, last+1)
			}
		}
		if r.peer(int32(keys), false) != nil {
			t.Errorf("%d partners: a partner never seen is found", keys)
		}
	}
}

// TestCriticalPath_OneNodePerInstanceWhenTheSameRankIsLast: when the
// same rank enters N×N collectives last turn after turn, each instance
// makes one node of the critical path (the rank's part from its earlier
// turns is copied into the waiters' node, not made a node of its own),
// and the path (profile and stays) is the one made with a node per turn.
func TestCriticalPath_OneNodePerInstanceWhenTheSameRankIsLast(t *testing.T) {
	const n, iters = 5, 300
	p := newRCProg(n)
	for it := 0; it < iters; it++ {
		slow := 0
		if it%10 == 9 { // now and then another rank is last
			slow = 3
		}
		p.compute(func(r int) int64 {
			if r == slow {
				return 2000 + int64(it%7)*13
			}
			return 700 + int64((r*5+it*3)%11)*29
		})
		p.allreduce(0x100)
		p.compute(func(r int) int64 {
			if r == slow {
				return 300
			}
			return 100 + int64((r+it)%3)*17
		})
		p.allreduce(0x200)
	}
	const instances = 2 * iters
	p.bigArena = true
	p.frozenNodes = true // a node of the frozen part at every turn
	want := p.run(t)
	wantMarks := p.rc.Marks(want, 1)
	perTurn := len(p.rc.cpa.nodes) - 1
	if perTurn < 3*instances/2 {
		t.Fatalf("a node per turn: %d nodes for %d instances, want more than 1.5 an instance (the test needs the same rank last)", perTurn, instances)
	}
	p.frozenNodes = false
	got := p.run(t)
	// one node an instance, and one more when a frozen part passes
	// cpMaxFrozen amounts (two a turn here: a fifth of the turns)
	if nodes := len(p.rc.cpa.nodes) - 1; nodes > instances+instances/4 {
		t.Errorf("%d nodes for %d instances (%d with a node per turn), want at most 1.25 an instance", nodes, instances, perTurn)
	}
	if !reflect.DeepEqual(got.CriticalPath, want.CriticalPath) {
		t.Errorf("critical path %+v, with a node per turn %+v", got.CriticalPath, want.CriticalPath)
	}
	if marks := p.rc.Marks(got, 1); !reflect.DeepEqual(marks, wantMarks) {
		t.Errorf("%d marks, with a node per turn %d", len(marks), len(wantMarks))
	}
}

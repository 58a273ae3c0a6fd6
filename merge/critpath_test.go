package merge

import (
	"reflect"
	"testing"
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
	var want *RootCauseResult
	var wantMarks []Mark
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

// TestCPChunkFor_SmallArraysBeyond128Ranks: pending arrays serve several
// calls up to 128 ranks, one call's worth beyond.
func TestCPChunkFor_SmallArraysBeyond128Ranks(t *testing.T) {
	for _, c := range []struct{ ranks, want int }{{1, 16}, {8, 16}, {128, 16}, {129, 4}, {16384, 4}} {
		if got := cpChunkFor(c.ranks); got != c.want {
			t.Errorf("cpChunkFor(%d) = %d, want %d", c.ranks, got, c.want)
		}
	}
}

package merge

import (
	"testing"

	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// TestSiteIndexOf_KeepsTheLowestRanksPC: two ranks load the same object
// at different bases (ASLR), so one call site has two raw pcs; the site
// keeps rank 0's whichever rank's decoder reached it first, so the
// outputs' callsite pc does not depend on the goroutines' order.
func TestSiteIndexOf_KeepsTheLowestRanksPC(t *testing.T) {
	const addr = 0x1234
	rank := func(r int, base uint64) *rankState {
		return &rankState{in: &rundir.RankInput{Rank: r}, sites: map[uint64]int32{},
			objs: []trace.Object{{Path: "/app", Base: base, Lo: base, Hi: base + 0x10000}}}
	}
	bases := []uint64{0x400000, 0x7f0000, 0x550000}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {2, 0, 1}} {
		a := &analyzer{siteIndex: map[siteKey]int32{}}
		ranks := []*rankState{rank(0, bases[0]), rank(1, bases[1]), rank(2, bases[2])}
		var sites []int32
		for _, r := range order {
			sites = append(sites, a.siteOf(ranks[r], bases[r]+addr))
		}
		if sites[0] != sites[1] || sites[1] != sites[2] || len(a.sites) != 1 {
			t.Fatalf("order %v: sites %v (%d distinct), want one site for one (object, address)", order, sites, len(a.sites))
		}
		if got := a.sites[0]; got.pc != bases[0]+addr || got.obj != "/app" || got.addr != addr {
			t.Errorf("order %v: site %+v, want rank 0's pc %#x", order, got, bases[0]+addr)
		}
	}
}

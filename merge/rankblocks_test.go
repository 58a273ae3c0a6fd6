package merge

import (
	"testing"
	"unsafe"
)

// TestRankBlocks_StatesStayPutAndAllocatePerBlock: the table of rank
// states (rankBlocks, here of the point-to-point stream's) gives every
// rank made a zero state of its own that does not move when later ranks
// (in any order, far beyond the table) get theirs, answers nil for ranks
// without one (negative, below len but not made, beyond the table),
// keeps len at 1 + the largest rank made, and allocates per block of
// rankBlockLen ranks, not per rank.
func TestRankBlocks_StatesStayPutAndAllocatePerBlock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ranks []int32
	}{
		{"ascending", seqRanks(0, 4096, 1)},
		{"descending", seqRanks(4095, -1, -1)},
		{"sparse", []int32{5, 70000, 63, 64, 1 << 20, 0, 127, 128}},
		{"every third", seqRanks(1, 3000, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tab rankBlocks[p2pRankState]
			made := map[int32]*p2pRankState{}
			top := int32(-1)
			for _, r := range tc.ranks {
				if tab.at(r) != nil {
					t.Fatalf("rank %d: a state before it was made", r)
				}
				rs := tab.make(r)
				if rs.order != 0 || rs.npend != 0 {
					t.Fatalf("rank %d: new state not zero (order %d, %d requests)", r, rs.order, rs.npend)
				}
				rs.order = int(r) + 1 // a mark the state must keep
				made[r] = rs
				top = max(top, r)
				if tab.len() != int(top)+1 {
					t.Fatalf("after rank %d: len %d, want %d", r, tab.len(), top+1)
				}
			}
			for r, rs := range made {
				if got := tab.at(r); got != rs || rs.order != int(r)+1 {
					t.Fatalf("rank %d: at gives %p, made %p (order %d, want %d)", r, got, rs, rs.order, r+1)
				}
			}
			for _, r := range []int32{-1, -64, -1 << 31, top + 1, top + rankBlockLen, 1<<31 - 1} {
				if rs := tab.at(r); rs != nil {
					t.Fatalf("rank %d (none made): at gives state of rank %d", r, rs.rank)
				}
			}
			for r := range int32(tab.len()) {
				if _, ok := made[r]; !ok && tab.at(r) != nil {
					t.Fatalf("rank %d (not made, below len): at gives a state", r)
				}
			}
		})
	}
	// one allocation a block (and the table's growth), not one a rank
	const n = 4096
	allocs := testing.AllocsPerRun(3, func() {
		var tab rankBlocks[p2pRankState]
		for r := range int32(n) {
			tab.make(r)
		}
	})
	if limit := float64(n/rankBlockLen + 32); allocs > limit {
		t.Fatalf("%d ranks: %.0f allocations, want at most %.0f (one a block of %d)", n, allocs, limit, rankBlockLen)
	}
	// neighbours are neighbours in memory
	var tab rankBlocks[p2pRankState]
	a, b := tab.make(10), tab.make(11)
	if d := uintptr(unsafe.Pointer(b)) - uintptr(unsafe.Pointer(a)); d != unsafe.Sizeof(p2pRankState{}) {
		t.Fatalf("ranks 10 and 11 lie %d bytes apart, want %d", d, unsafe.Sizeof(p2pRankState{}))
	}
}

// seqRanks is from, from+step, ... up to and without to (step ≠ 0).
func seqRanks(from, to, step int32) []int32 {
	var rs []int32
	for r := from; step > 0 && r < to || step < 0 && r > to; r += step {
		rs = append(rs, r)
	}
	return rs
}

package merge

import "testing"

// TestMemberPositions_AreTheFirstPositionAScanFinds compares
// memberPositions.of, which indexes long member lists by world rank, with
// a scan of the list for every rank of the world: lists long enough to be
// indexed and short ones, a rank listed twice (damaged metadata: the
// first position counts), members outside the world, ranks that are not
// members, and two lists of the same length asked in turn (an index must
// belong to its list).
func TestMemberPositions_AreTheFirstPositionAScanFinds(t *testing.T) {
	const world = 256
	iota := func(n, from, stride int) []int32 {
		l := make([]int32, n)
		for i := range l {
			l[i] = int32(from + i*stride)
		}
		return l
	}
	reversed := iota(world, world-1, -1)
	dup := iota(world, 0, 1)
	dup[200] = 7 // rank 7 at 7 and at 200; rank 200 not a member
	outside := iota(world, 0, 1)
	outside[3], outside[4] = -5, world+9
	for _, tc := range []struct {
		name  string
		lists [][]int32
	}{
		{"world", [][]int32{iota(world, 0, 1)}},
		{"world reversed", [][]int32{reversed}},
		{"a rank listed twice", [][]int32{dup}},
		{"members outside the world", [][]int32{outside}},
		{"every other rank (indexed: an eighth of the world or more)", [][]int32{iota(world/2, 1, 2)}},
		{"short list (scanned)", [][]int32{iota(5, 10, 3)}},
		{"two lists of one length in turn", [][]int32{iota(world, 0, 1), reversed, iota(world, 0, 1), reversed}},
		{"empty", [][]int32{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := memberPositions{world: world}
			for _, members := range tc.lists {
				for rank := -1; rank <= world; rank++ {
					want := int32(-1)
					for i, w := range members {
						if int(w) == rank {
							want = int32(i)
							break
						}
					}
					if got := p.of(members, rank); got != want {
						t.Fatalf("rank %d: position %d, a scan finds %d", rank, got, want)
					}
				}
			}
			if long := len(tc.lists[0]) >= memberIndexMin; long != (len(p.index) > 0) {
				t.Errorf("list of %d members: %d indexes made", len(tc.lists[0]), len(p.index))
			}
		})
	}
}

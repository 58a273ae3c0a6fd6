package merge

import (
	"slices"
	"testing"

	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// TestRootCauseStream_EachCauseIsMadeOnceAndVisitedInKeyOrder: a cause
// looked up through its rank's array by region (causeOf, the
// attribution's path) or by its key (cause) is one object, made once,
// whatever the order of the lookups, for regions beyond the array's first
// size, a negative region and a rank without state (the odd keys'
// map); eachCause, which the result reads, visits every cause made once,
// in the order of the keys (the order of the map's sorted keys before).
func TestRootCauseStream_EachCauseIsMadeOnceAndVisitedInKeyOrder(t *testing.T) {
	run := &rundir.Run{WorldSize: 3}
	for r := 0; r < 3; r++ {
		run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: 3}}})
	}
	for _, tc := range []struct {
		name    string
		lookups [][2]int32 // rank, region
	}{
		{"one region", [][2]int32{{0, 0}, {0, 0}}},
		{"regions growing past the array", [][2]int32{{1, 0}, {1, 5}, {1, 300}, {1, 5}, {1, 0}}},
		{"ranks in reverse order", [][2]int32{{2, 2}, {0, 2}, {1, 1}, {0, 2}, {2, 2}}},
		{"a negative region", [][2]int32{{2, -1}, {2, -1}, {2, 1}, {1, 4}}},
		{"ranks without state", [][2]int32{{7, 0}, {1, 3}, {-1, 2}, {7, 0}, {0, 9}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewRootCauseStream(run, RootCauseOptions{}, nil)
			seen := map[int64]*rcCause{}
			for i, l := range tc.lookups {
				k := rcCauseKey(l[0], l[1])
				var c *rcCause
				if i%2 == 0 && l[1] >= 0 && s.ranks.at(l[0]) != nil {
					c = s.causeOf(s.ranks.at(l[0]), l[1])
				} else {
					c = s.cause(k)
				}
				if c == nil {
					t.Fatalf("cause (%d, %d) = nil", l[0], l[1])
				}
				if p, ok := seen[k]; ok && p != c {
					t.Fatalf("cause (%d, %d) made a second time", l[0], l[1])
				}
				seen[k] = c
				if got := s.causeIf(k); got != c {
					t.Fatalf("causeIf(%d, %d) = %p, want %p", l[0], l[1], got, c)
				}
			}
			if got := s.causeIf(rcCauseKey(0, 1000)); got != nil {
				t.Fatalf("causeIf of a cause never made = %p", got)
			}
			var keys []int64
			s.eachCause(func(k int64, c *rcCause) {
				if seen[k] != c {
					t.Errorf("eachCause: key (%d, %d) with %p, want %p", int32(k>>32), int32(uint32(k)), c, seen[k])
				}
				keys = append(keys, k)
			})
			want := make([]int64, 0, len(seen))
			for k := range seen {
				want = append(want, k)
			}
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Fatalf("eachCause visited %v, want %v (every cause once, in key order)", keys, want)
			}
		})
	}
}

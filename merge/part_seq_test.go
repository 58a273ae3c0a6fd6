package merge

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestLastSeqs_AgreesWithAMapWhateverTheListLength: a decoder's table of
// the last sequence number per (rank, communicator) answers as a map keyed
// by both does, whether a rank's communicators fit its list or spill into
// the map beyond it.
func TestLastSeqs_AgreesWithAMapWhateverTheListLength(t *testing.T) {
	defer func(n int) { seqListMax = n }(seqListMax)
	for _, tc := range []struct {
		listMax, ranks, comms int
	}{{16, 8, 3}, {16, 4, 40}, {1, 5, 4}, {0, 3, 5}, {2, 1, 1000}} {
		t.Run(fmt.Sprintf("list%d-ranks%d-comms%d", tc.listMax, tc.ranks, tc.comms), func(t *testing.T) {
			seqListMax = tc.listMax
			rng := rand.New(rand.NewSource(int64(tc.comms)))
			got, want := newLastSeqs(tc.ranks), map[[2]int32]int64{}
			for i := 0; i < 20000; i++ {
				r, c := int32(rng.Intn(tc.ranks)), int32(rng.Intn(tc.comms)*7) // indices not dense
				v, ok := got.get(r, c)
				w, wok := want[[2]int32{r, c}]
				if ok != wok || v != w {
					t.Fatalf("step %d: get(%d, %d) = %d, %v; want %d, %v", i, r, c, v, ok, w, wok)
				}
				if rng.Intn(2) == 0 {
					n := rng.Int63n(1 << 40)
					got.set(r, c, n)
					want[[2]int32{r, c}] = n
				}
			}
		})
	}
}

package merge

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRootCause_NxNWaitsAgreeWithCollectiveWaits checks that the
// root-cause stream's one loop over an N×N instance (nxnLastTwo, then
// nxnWaitFor for each member as nxnWaiters calls it) finds the same
// waiters, the same waits bit for bit and the
// same members waited for as CollectiveWaitsFlow, on random instances
// with ties, NaN, ±Inf, −0, members that send or receive nothing and
// flows of the wrong length (unknown).
func TestRootCause_NxNWaitsAgreeWithCollectiveWaits(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 8))
	odd := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0}
	cases := []struct {
		name string
		flow func(n int) Flow
	}{
		{"unknown flow", func(int) Flow { return Flow{} }},
		{"every member sends and receives", func(n int) Flow {
			s, r := make([]uint64, n), make([]uint64, n)
			for i := range s {
				s[i], r[i] = 8, 8
			}
			return Flow{s, r}
		}},
		{"some members send or receive nothing", func(n int) Flow {
			s, r := make([]uint64, n), make([]uint64, n)
			for i := range s {
				s[i], r[i] = uint64(rng.IntN(2)*8), uint64(rng.IntN(2)*8)
			}
			return Flow{s, r}
		}},
		{"a flow of the wrong length", func(n int) Flow { return Flow{Sent: make([]uint64, n+1), Recv: make([]uint64, n+1)} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			waiters := 0
			for k := 0; k < 20000; k++ {
				n := 1 + rng.IntN(9)
				enter, exit := make([]float64, n), make([]float64, n)
				for i := range enter {
					enter[i] = float64(rng.IntN(6)) // ties
					exit[i] = enter[i] + float64(rng.IntN(8))
					if rng.IntN(25) == 0 {
						enter[i] = odd[rng.IntN(len(odd))]
					}
					if rng.IntN(25) == 0 {
						exit[i] = odd[rng.IntN(len(odd))]
					}
				}
				flow := tc.flow(n)
				wait, cause := make([]float64, n), make([]int, n)
				CollectiveWaitsFlow(WaitNxN, -1, enter, exit, flow, wait, cause)
				// the instance's records, as the stream stores them
				mem, bytes := make([]rcMember, n), flow.known(n)
				for i := range mem {
					mem[i].enter, mem[i].exit = enter[i], exit[i]
					if bytes {
						mem[i].sent, mem[i].recv = flow.Sent[i], flow.Recv[i]
					}
				}
				last, second := nxnLastTwo(mem, bytes)
				for i := range enter {
					w, j := 0.0, -1
					if last >= 0 { // as nxnWaiters: each member for the last, that one for the second-last
						j = last
						if i == last {
							j = second
						}
						ok := false
						if j >= 0 {
							w, ok = nxnWaitFor(&mem[i], bytes, mem[j].enter)
						}
						if !ok {
							w, j = 0, -1
						}
					}
					want := cause[i]
					if wait[i] == 0 {
						want = -1
					}
					if j != want || j >= 0 && math.Float64bits(w) != math.Float64bits(wait[i]) {
						t.Fatalf("enter %v exit %v flow %v: member %d waits %v for %d, CollectiveWaitsFlow %v for %d",
							enter, exit, flow, i, w, j, wait[i], cause[i])
					}
					if j >= 0 {
						waiters++
					}
				}
			}
			if waiters == 0 {
				t.Fatal("no member waited: the comparison compared nothing")
			}
		})
	}
}

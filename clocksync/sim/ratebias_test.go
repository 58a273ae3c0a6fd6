package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/gclock/gclock/clocksync"
)

// TestSync_NoBiasFromTheRateDifference: the full sync (H2HCA with its end
// anchor) on 4 nodes of one rank each, as the namespace hosts of
// TestNetns_AccuracyOverTCP's hosts4_x1_linear: nodes alternate between
// +100 and −100 ppm (GCLOCK_FAKE_CLOCK's two pairs), TCP-like hops (8 µs,
// 1 µs jitter), 20 seeds. The error at the sync's end of the nodes whose
// rate differs from rank 0's must average out over the seeds: an offset
// read after its ping-pong loop (SKaMPI-Offset's timestamp before
// decisions.md D80) put every one of them late by part of the loop, one
// sign per rate difference. The nodes with rank 0's rate are the control.
func TestSync_NoBiasFromTheRateDifference(t *testing.T) {
	const seeds = 20
	for _, fast := range []bool{false, true} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			var sumOdd, sumEven, worst float64
			var nOdd, nEven int
			for seed := uint64(1); seed <= seeds; seed++ {
				p := DefaultParams(4, 4, seed)
				p.DriftMax, p.Asymmetry = 0, 0
				p.InterLatency, p.InterJitter = 8e-6, 1e-6
				p.FastPath = fast
				w := New(p)
				for i := range w.Clocks {
					w.Clocks[i].Skew = 100e-6 * float64(1-2*(i%2))
				}
				cfg := clocksync.DefaultConfig()
				res := make([]*clocksync.Result, p.Ranks)
				err := w.Run(func(r int, tr clocksync.Transport, clk *Clock) error {
					c := cfg
					c.NodeID, c.SocketID = w.NodeOf(r), w.NodeOf(r)
					var err error
					res[r], err = clocksync.Sync(c, tr, clk)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				T := w.MaxNow()
				for r := 1; r < p.Ranks; r++ {
					e := w.Error(r, res[r].Global, T)
					worst = math.Max(worst, math.Abs(e))
					if r%2 == 1 {
						sumOdd, nOdd = sumOdd+e, nOdd+1
					} else {
						sumEven, nEven = sumEven+e, nEven+1
					}
				}
			}
			odd, even := sumOdd/float64(nOdd), sumEven/float64(nEven)
			t.Logf("mean error at the sync's end: rate differs %+.1f ns, same rate %+.1f ns; worst %.1f ns", odd*1e9, even*1e9, worst*1e9)
			if math.Abs(odd) > 10e-9 {
				t.Errorf("the nodes whose rate differs from rank 0's are off by %+.1f ns on average over %d seeds (same rate: %+.1f ns): a bias of the rate difference", odd*1e9, seeds, even*1e9)
			}
		})
	}
}

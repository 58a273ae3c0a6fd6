package sim

import (
	"math"
	"sync"
	"testing"

	"github.com/gclock/gclock/clocksync"
)

// TestSyncBound_HoldsAgainstTruth: every rank's sync-path bound
// (Result.Knot after the full H2HCA sync, SyncKnotBound after the
// offset-only resync), widened by its slope bound from the measurement it
// was proven at to the end of the sync (KnotBound.Within), must contain
// the rank's exact error at the end of its sync, and must be known (>= 0)
// on every rank (0 on the reference and its node). The slack is float
// rounding only.
func TestSyncBound_HoldsAgainstTruth(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ranks, nodes int
	}{
		{"8 ranks on 2 nodes", 8, 2},
		{"64 ranks on 8 nodes", 64, 8},
		{"1024 ranks on 64 nodes", 1024, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams(tc.ranks, tc.nodes, 7)
			cfg := clocksync.DefaultConfig()
			w := New(p)
			type row struct{ err, bound, rerr, rbound float64 }
			rows := make([]row, p.Ranks)
			var mu sync.Mutex
			err := w.Run(func(r int, tr clocksync.Transport, clk *Clock) error {
				c := cfg
				c.NodeID, c.SocketID = w.NodeOf(r), w.NodeOf(r)
				res, err := clocksync.Sync(c, tr, clk)
				if err != nil {
					return err
				}
				now := w.Now(r)
				e := math.Abs(w.Error(r, res.Global, now))
				b := res.Knot.Within(w.Error(r, res.Global, now) + w.RefTime(now))
				w.Advance(r, 5)
				alg, err := clocksync.NewResyncAlg(c, res.Model)
				if err != nil {
					return err
				}
				g, err := alg.SyncClocks(tr, clk)
				if err != nil {
					return err
				}
				now = w.Now(r)
				re := math.Abs(w.Error(r, g, now))
				k, ok := clocksync.SyncKnotBound(tr, g)
				rb := -1.0
				if ok {
					rb = k.Within(w.Error(r, g, now) + w.RefTime(now))
				}
				if res.Bound < 0 {
					b = -1
				}
				mu.Lock()
				rows[r] = row{e, b, re, rb}
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			const slack = 1e-9
			var worstRatio, maxBound, maxRBound float64
			for r, x := range rows {
				if r == 0 {
					if x.bound != 0 || x.rbound != 0 || x.err != 0 {
						t.Errorf("rank 0: bound %g / %g, error %g; want 0 (the reference)", x.bound, x.rbound, x.err)
					}
					continue
				}
				if x.bound < 0 || x.rbound < 0 {
					t.Fatalf("rank %d: bound not known: sync %g, resync %g", r, x.bound, x.rbound)
				}
				if x.err > x.bound+slack {
					t.Errorf("rank %d: sync error %.1f ns outside its bound %.1f ns", r, x.err*1e9, x.bound*1e9)
				}
				if x.rerr > x.rbound+slack {
					t.Errorf("rank %d: resync error %.1f ns outside its bound %.1f ns", r, x.rerr*1e9, x.rbound*1e9)
				}
				if x.bound > 0 {
					worstRatio = math.Max(worstRatio, x.err/x.bound)
				}
				maxBound, maxRBound = math.Max(maxBound, x.bound), math.Max(maxRBound, x.rbound)
			}
			t.Logf("max bound %.0f ns after the sync, %.0f ns after the resync; largest error/bound %.2f", maxBound*1e9, maxRBound*1e9, worstRatio)
		})
	}
}

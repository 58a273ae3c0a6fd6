package clocksync

import (
	"math"
	"testing"
)

// TestJudgeKnot_DisagreesWhenTheClockBends: a knot on the line through
// the two before it is calm, one that misses it by more than ResyncTolNS
// disagrees, in between keeps; without two earlier knots it keeps.
func TestJudgeKnot_DisagreesWhenTheClockBends(t *testing.T) {
	a, b := KnotPoint{0, 100}, KnotPoint{2e9, 300}
	for _, tc := range []struct {
		name string
		a, b KnotPoint
		k    KnotPoint
		want KnotVerdict
	}{
		{"on the line", a, b, KnotPoint{4e9, 500}, KnotCalm},
		{"a little off", a, b, KnotPoint{4e9, 500 + ResyncTolNS/2}, KnotKeep},
		{"bent", a, b, KnotPoint{4e9, 500 - 2*ResyncTolNS}, KnotDisagree},
		{"one earlier knot only", b, b, KnotPoint{4e9, 1e6}, KnotKeep},
	} {
		if got, _ := JudgeKnot(tc.a, tc.b, tc.k); got != tc.want {
			t.Errorf("%s: verdict %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestNextResyncInterval_HalvesOnDisagreementAndKeepsTheBudget: disagreement
// halves the interval down to GCLOCK_RESYNC/8, calm lengthens it by half
// up to 2·GCLOCK_RESYNC, and the interval never gets shorter than
// GCLOCK_RESYNC where the resyncs would then take more than ResyncBudget of
// the run.
func TestNextResyncInterval_HalvesOnDisagreementAndKeepsTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cur            float64
		disagree, calm bool
		cost, want     float64
	}{
		{"disagree", 2, true, false, 1e-4, 1},
		{"disagree at the floor", 0.25, true, false, 1e-4, 0.25},
		{"calm", 2, false, true, 1e-4, 3},
		{"calm at the ceiling", 4, false, true, 1e-4, 4},
		{"keep", 2, false, false, 1e-4, 2},
		{"costly resync: the budget sets the floor", 2, true, false, 1.5e-3, 1.5},
		{"very costly: GCLOCK_RESYNC wins", 2, false, false, 0.02, 2},
	} {
		got := NextResyncInterval(tc.cur, 2, tc.disagree, tc.calm, tc.cost)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: next interval %g s, want %g s", tc.name, got, tc.want)
		}
		if got < 2 && tc.cost/got > ResyncBudget*(1+1e-9) {
			t.Errorf("%s: cost %g s per %g s is over the budget", tc.name, tc.cost, got)
		}
	}
}

// TestResyncCost_RunningMeanNeverBelowTheLatest: the first epoch's cost is
// taken as it is, a quick epoch after slow ones moves the cost by a
// quarter only, a slow one sets it at once.
func TestResyncCost_RunningMeanNeverBelowTheLatest(t *testing.T) {
	for _, tc := range []struct{ prev, c, want float64 }{
		{0, 0.004, 0.004},
		{0.004, 0.0, 0.003},
		{0.001, 0.004, 0.004},
	} {
		if got := ResyncCost(tc.prev, tc.c); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ResyncCost(%g, %g) = %g, want %g", tc.prev, tc.c, got, tc.want)
		}
	}
}

package clocksync

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestJudgeKnot_DisagreesWhenTheClockBends: a knot on the polynomial
// through the knots before it (a line through two, a cubic through four)
// is calm, one that misses it by far more than the smooth model's
// tolerance disagrees, in between keeps; without two earlier knots before
// it, it keeps; only the latest four count.
func TestJudgeKnot_DisagreesWhenTheClockBends(t *testing.T) {
	line := []KnotPoint{{0, 100}, {2e9, 300}}
	cubic := func(t int64) float64 { x := float64(t) * 1e-9; return 50 + 30*x - 4*x*x + 0.5*x*x*x }
	var four []KnotPoint
	for _, tt := range []int64{0, 1e9, 2.5e9, 4e9} {
		four = append(four, KnotPoint{tt, cubic(tt)})
	}
	// a line miss of m is a model miss of 0.18 m
	lineTol := ResyncTolNS / SplineMissRatio[0]
	for _, tc := range []struct {
		name string
		prev []KnotPoint
		k    KnotPoint
		want KnotVerdict
	}{
		{"on the line", line, KnotPoint{4e9, 500}, KnotCalm},
		{"a little off the line", line, KnotPoint{4e9, 500 + lineTol/2}, KnotKeep},
		{"bent off the line", line, KnotPoint{4e9, 500 - 2*lineTol}, KnotDisagree},
		{"on the cubic through four, unevenly spaced", four, KnotPoint{5.5e9, cubic(5.5e9)}, KnotCalm},
		{"off the cubic by 2 µs", four, KnotPoint{5.5e9, cubic(5.5e9) + 2000}, KnotDisagree},
		{"older knots than four are not used", append([]KnotPoint{{-1e9, 1e9}}, four...), KnotPoint{5.5e9, cubic(5.5e9)}, KnotCalm},
		{"one earlier knot only", line[1:], KnotPoint{4e9, 1e6}, KnotKeep},
		{"no earlier knot before the new one", line, KnotPoint{1e9, 1e6}, KnotKeep},
	} {
		if got, miss := JudgeKnot(tc.prev, tc.k); got != tc.want {
			t.Errorf("%s: verdict %d (estimated miss %.1f ns), want %d", tc.name, got, miss, tc.want)
		}
	}
}

// TestJudgeKnot_FollowsTheSplineNotTheLine: on a 20 µs / 20 s sine with
// knots 1 s apart (which the spline follows within 0.01 µs, and straight
// lines miss by 0.25 µs), no knot disagrees at any phase, while the
// straight-line judge this replaced (0.5 µs on the line's miss) disagreed
// at 2 s; and at 4 s some knot does (the spline then misses by 0.14 µs).
func TestJudgeKnot_FollowsTheSplineNotTheLine(t *testing.T) {
	sine := func(t int64, ph float64) float64 { return 20e3 * math.Sin(2*math.Pi*float64(t)*1e-9/20+ph) }
	for _, tc := range []struct {
		name         string
		h            float64 // s between knots
		wantDisagree bool
	}{
		{"1 s: the spline follows", 1, false},
		{"4 s: the spline misses", 4, true},
	} {
		disagree := 0
		for p := 0; p < 64; p++ {
			ph := 2 * math.Pi * float64(p) / 64
			var ks []KnotPoint
			for i := 0; i < 5; i++ {
				tt := int64(float64(i) * tc.h * 1e9)
				ks = append(ks, KnotPoint{tt, sine(tt, ph)})
			}
			if v, _ := JudgeKnot(ks[:4], ks[4]); v == KnotDisagree {
				disagree++
			}
		}
		if (disagree > 0) != tc.wantDisagree {
			t.Errorf("%s: %d of 64 phases disagree", tc.name, disagree)
		}
	}
}

// TestNextResyncInterval_HalvesOnDisagreementWithinItsBounds: disagreement
// halves the interval down to GCLOCK_RESYNC/8, calm lengthens it by half
// up to 2·GCLOCK_RESYNC, otherwise it stays.
func TestNextResyncInterval_HalvesOnDisagreementWithinItsBounds(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cur            float64
		disagree, calm bool
		want           float64
	}{
		{"disagree", 2, true, false, 1},
		{"disagree at the floor", 0.25, true, false, 0.25},
		{"calm", 2, false, true, 3},
		{"calm at the ceiling", 4, false, true, 4},
		{"keep", 2, false, false, 2},
	} {
		if got := NextResyncInterval(tc.cur, 2, tc.disagree, tc.calm); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: next interval %g s, want %g s", tc.name, got, tc.want)
		}
	}
}

// TestResyncCost_RunningMeanOfTheEpochs: the first epoch's cost is taken
// as it is, every later one moves the expectation by a quarter of the
// difference, a costly one too (it is charged in the running total).
func TestResyncCost_RunningMeanOfTheEpochs(t *testing.T) {
	for _, tc := range []struct{ prev, c, want float64 }{
		{0, 0.004, 0.004},
		{0.004, 0.0, 0.003},
		{0.001, 0.005, 0.002},
	} {
		if got := ResyncCost(tc.prev, tc.c); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ResyncCost(%g, %g) = %g, want %g", tc.prev, tc.c, got, tc.want)
		}
	}
}

// TestResyncSpend_EarliestKeepsTwoEpochsInBudget: the earliest start of
// the next resync is where the cost so far plus two epochs at the
// expected cost is the budget's share of the run; a measured cost
// replaces its estimate; before any cost is known the first resync is
// free, and without a budget there is no wait.
func TestResyncSpend_EarliestKeepsTwoEpochsInBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		book   []float64 // estimates booked, in order
		settle float64   // then the latest's measured cost (0: none)
		budget float64
		want   float64 // s
	}{
		{"nothing known: free", nil, 0, 0.001, 0},
		{"one epoch of 1 ms", []float64{0.001}, 0, 0.001, 3},
		{"three of 1 ms", []float64{0.001, 0.001, 0.001}, 0, 0.001, 5},
		{"measured 4 ms instead of 1", []float64{0.001}, 0.004, 0.001, 12},
		{"a costly epoch pushes the next out by itself and a quarter", []float64{0.001, 0.049}, 0, 0.001, 76},
		{"no budget", []float64{0.001}, 0, 0, 0},
	} {
		var s ResyncSpend
		for _, c := range tc.book {
			s.Book(c)
		}
		s.Settle(tc.settle)
		if got := s.Earliest(tc.budget); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: earliest %g s, want %g s (%+v)", tc.name, got, tc.want, s)
		}
	}
}

// TestResyncSpend_ShareStaysWithinBudget is the simulated check of the
// rule: resyncs every `interval` s at most, none before
// ResyncSpend.Earliest, epochs at the drawn costs (known one epoch late,
// as in the recorder), and the one at MPI_Finalize at the end: the
// resyncs' share of the run stays within the budget whenever no epoch
// costs more than the expectation it was planned with (constant, slowly
// rising and falling costs), and exceeds it by at most the excess of the
// epochs that did (a spike under load) and the latest booking's shortfall.
func TestResyncSpend_ShareStaysWithinBudget(t *testing.T) {
	for _, tc := range []struct {
		name          string
		interval, run float64
		cost          func(i int, rng *rand.Rand) float64
	}{
		{"cheap epochs: the interval rules", 2, 600, func(int, *rand.Rand) float64 { return 1e-4 }},
		{"costly epochs: the budget rules", 0.25, 600, func(int, *rand.Rand) float64 { return 5e-3 }},
		{"8 s run, 4 ms epochs", 0.25, 8, func(int, *rand.Rand) float64 { return 4e-3 }},
		{"rising cost", 0.25, 600, func(i int, _ *rand.Rand) float64 { return 1e-3 * (1 + 0.05*float64(i)) }},
		{"loaded: 0.1-50 ms at random", 0.25, 600, func(_ int, rng *rand.Rand) float64 { return 1e-4 * math.Pow(500, rng.Float64()) }},
		{"a 60 ms spike among 1 ms epochs", 0.5, 60, func(i int, _ *rand.Rand) float64 {
			if i == 3 {
				return 0.06
			}
			return 1e-3
		}},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		var s ResyncSpend
		s.Next = tc.cost(0, rng) // the end anchor's time, as the recorder's first expectation
		now, last, spent, excess, prev := 0.0, 0.0, 0.0, 0.0, 0.0
		n := 0
		for {
			start := max(last+tc.interval, s.Earliest(ResyncBudget))
			final := start >= tc.run
			if final {
				start = tc.run
			}
			c := tc.cost(n, rng)
			// what the plan did not foresee: more than the expected
			// cost, and the latest epoch's booking (the slowest rank's
			// time up to the agreement) under its measured span
			excess += max(0, c-s.Next) + 0.1*c
			s.Settle(prev) // the previous epoch's span, reported now
			s.Book(0.9 * c)
			prev = c
			spent += c
			now = start + c
			last = now
			n++
			if final {
				break
			}
		}
		share := spent / now
		t.Logf("%s: %d epochs, %.4f %% of %.0f s", tc.name, n, 100*share, now)
		if share > ResyncBudget+excess/now+1e-12 {
			t.Errorf("%s: resyncs took %.4f %% of the run, over the budget %.2f %% plus the unforeseen %.4f %%", tc.name, 100*share, 100*ResyncBudget, 100*excess/now)
		}
		if tc.interval >= 2 && n < int(tc.run/tc.interval)-1 {
			t.Errorf("%s: %d epochs in %.0f s at %g s intervals: the budget held back cheap epochs", tc.name, n, tc.run, tc.interval)
		}
	}
}

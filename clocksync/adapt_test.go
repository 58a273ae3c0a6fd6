package clocksync

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestJudgeKnot_DisagreesWhenTheClockBends: a knot on the polynomial
// through the knots before it (a line through two, a cubic through four)
// is calm, one that misses it by far more than the smooth model's
// tolerance disagrees, in between keeps; without two earlier knots before
// it, it keeps; only the latest four count.
func TestJudgeKnot_DisagreesWhenTheClockBends(t *testing.T) {
	line := []KnotPoint{{T: 0, Off: 100}, {T: 2e9, Off: 300}}
	cubic := func(t int64) float64 { x := float64(t) * 1e-9; return 50 + 30*x - 4*x*x + 0.5*x*x*x }
	var four []KnotPoint
	for _, tt := range []int64{0, 1e9, 2.5e9, 4e9} {
		four = append(four, KnotPoint{T: tt, Off: cubic(tt)})
	}
	// a line miss of m is a model miss of 0.18 m
	lineTol := ResyncTolNS / SplineMissRatio[0]
	for _, tc := range []struct {
		name string
		prev []KnotPoint
		k    KnotPoint
		want KnotVerdict
	}{
		{"on the line", line, KnotPoint{T: 4e9, Off: 500}, KnotCalm},
		{"a little off the line", line, KnotPoint{T: 4e9, Off: 500 + lineTol/2}, KnotKeep},
		{"bent off the line", line, KnotPoint{T: 4e9, Off: 500 - 2*lineTol}, KnotDisagree},
		{"on the cubic through four, unevenly spaced", four, KnotPoint{T: 5.5e9, Off: cubic(5.5e9)}, KnotCalm},
		{"off the cubic by 2 µs", four, KnotPoint{T: 5.5e9, Off: cubic(5.5e9) + 2000}, KnotDisagree},
		{"older knots than four are not used", append([]KnotPoint{{T: -1e9, Off: 1e9}}, four...), KnotPoint{T: 5.5e9, Off: cubic(5.5e9)}, KnotCalm},
		{"one earlier knot only", line[1:], KnotPoint{T: 4e9, Off: 1e6}, KnotKeep},
		{"no earlier knot before the new one", line, KnotPoint{T: 1e9, Off: 1e6}, KnotKeep},
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
				ks = append(ks, KnotPoint{T: tt, Off: sine(tt, ph)})
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
// difference, a costly one by a quarter of at most twice the expectation
// (its excess is charged in the running total, as debt).
func TestResyncCost_RunningMeanOfTheEpochs(t *testing.T) {
	for _, tc := range []struct{ prev, c, want float64 }{
		{0, 0.004, 0.004},
		{0.004, 0.0, 0.003},
		{0.001, 0.0015, 0.001125},
		{0.001, 0.005, 0.00125},
		{0.001, 0.080, 0.00125},
	} {
		if got := ResyncCost(tc.prev, tc.c); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ResyncCost(%g, %g) = %g, want %g", tc.prev, tc.c, got, tc.want)
		}
	}
}

// TestResyncSpend_EarliestKeepsTwoEpochsInBudget: the earliest start of
// the next resync is where the cost so far plus two epochs at the
// expected cost is the budget's share of the run; a measured cost
// replaces its estimate; an epoch costing more than expected puts its
// excess in debt, and the next start then comes twice the latest gap
// after the latest start (a probe: the load may last), the ones after it
// at the gap that repays the excess evenly over twice the run time the
// budget needs for it (at most twice the steady spacing), but not before
// the total without the debt fits; before any cost is known the first
// resync is free, and without a budget there is no wait.
func TestResyncSpend_EarliestKeepsTwoEpochsInBudget(t *testing.T) {
	type booking struct{ at, est float64 }
	for _, tc := range []struct {
		name   string
		book   []booking // epochs booked, in order
		settle float64   // then the latest's measured cost (0: none)
		budget float64
		want   float64 // s
		debt   float64 // s
	}{
		{"nothing known: free", nil, 0, 0.001, 0, 0},
		{"one epoch of 1 ms", []booking{{1, 0.001}}, 0, 0.001, 3, 0},
		{"three of 1 ms", []booking{{3, 0.001}, {5, 0.001}, {7, 0.001}}, 0, 0.001, 5, 0},
		{"measured 4 ms instead of 1", []booking{{1, 0.001}}, 0.004, 0.001, 12, 0},
		// full: (1 + 49 + 2·1.25 ms) / 0.1 % = 52.5 s; without the debt
		// 4.5 s; right after the costly epoch 5 s + 2·2 s = 9 s (the
		// even repayment alone: 1.25 ms / (0.1 % − 0.05 %) = 2.5 s after
		// 5 s)
		{"a costly epoch: the next gap doubles once", []booking{{3, 0.001}, {5, 0.049}}, 0, 0.001, 9, 0.048},
		{"measured costlier than booked: the same debt", []booking{{3, 0.001}, {5, 0.010}}, 0.049, 0.001, 9, 0.048},
		// after a normal epoch at 9 s: the excess 47.5 + 0.25 ms repaid
		// evenly, 1.25 ms / (0.1 % − 0.05 %) = 2.5 s after 9 s
		{"then even gaps", []booking{{3, 0.001}, {5, 0.049}, {9, 0.00125}}, 0, 0.001, 11.5, 0.048},
		// full: (1 + 4 + 2·1.25 ms) / 0.1 % = 7.5 s, before 9 s
		{"a small debt: the full rule comes first", []booking{{3, 0.001}, {5, 0.004}}, 0, 0.001, 7.5, 0.003},
		// without the debt: (3 + 1 + 2·(0.75·3 + 0.25·1) ms) / 0.1 % = 9 s
		{"cheaper than expected: no debt", []booking{{3, 0.003}, {5, 0.001}}, 0, 0.001, 9, 0},
		{"no budget", []booking{{1, 0.001}}, 0, 0, 0, 0},
	} {
		var s ResyncSpend
		for _, b := range tc.book {
			s.Book(b.at, b.est, tc.budget)
		}
		s.Settle(tc.settle)
		if got := s.Earliest(tc.budget); math.Abs(got-tc.want) > 1e-9 || math.Abs(s.Debt-tc.debt) > 1e-12 {
			t.Errorf("%s: earliest %g s, debt %g s, want %g s, %g s (%+v)", tc.name, got, s.Debt, tc.want, tc.debt, s)
		}
	}
}

// TestResyncSpend_CostlyEpochIsRepaidAtEvenGaps: resyncs every 2 s at
// 1 ms each (the interval rules: 0.05 %), and the fifth epoch (at 10 s)
// of 60 ms. The gap right after it doubles once (a probe: the load may
// last), then the excess is repaid at gaps of at most twice the
// budget's steady spacing for the expected cost (1.25 ms / 0.1 %:
// 2.5 s), shrinking back to the interval's 2 s as the total nears the
// budget's line; the rule before doubled the gaps on (4, 8, 16, 31 s), and a
// 20 µs / 20 s sine is then tens of µs off between those knots
// (TestResyncSchedule_ACostlyEpochLeavesNoLongGapOnASine in
// clocksync/sim/longrun). The share at the run's end (120 s) is within
// the budget.
func TestResyncSpend_CostlyEpochIsRepaidAtEvenGaps(t *testing.T) {
	var s ResyncSpend
	s.Next = 0.001
	var starts []float64
	last := 0.0
	for {
		start := max(last+2, s.Earliest(ResyncBudget))
		if start >= 120 {
			break
		}
		c := 0.001
		if len(starts) == 4 {
			c = 0.060
		}
		s.Settle(s.Pending) // the span reported one epoch late: as booked
		s.Book(start, c, ResyncBudget)
		starts = append(starts, start)
		last = start + c
	}
	var gaps []float64
	for i := 1; i < len(starts); i++ {
		gaps = append(gaps, math.Round((starts[i]-starts[i-1])*1e3)/1e3)
	}
	t.Logf("gaps %v, spent %.4f s, debt %.4f s", gaps, s.Total(), s.Debt)
	if len(gaps) < 5 || gaps[4] <= 2.001 {
		t.Errorf("gaps %v s: the costly epoch stretched nothing", gaps)
	}
	for i, g := range gaps {
		if lim := map[bool]float64{true: 4.002, false: 2.5}[i == 4]; g > lim+1e-9 {
			t.Errorf("gap %d is %.3f s, over %.3f s: gaps %v", i, g, lim, gaps)
		}
		if i > 5 && g > gaps[i-1]+1e-9 {
			t.Errorf("gap %d (%.3f s) longer than the one before (%.3f s): the repayment is not even", i, g, gaps[i-1])
		}
	}
	if share := s.Total() / 120; share > ResyncBudget {
		t.Errorf("resyncs took %.4f %% of 120 s, over the budget", 100*share)
	}
}

// TestResyncSpend_ShareStaysWithinBudget is the simulated check of the
// rule: resyncs every `interval` s at most, none before
// ResyncSpend.Earliest, epochs at the drawn costs (known one epoch late,
// as in the recorder), and the one at MPI_Finalize at the end: the
// resyncs' share of the run stays within the budget whenever no epoch
// costs more than the expectation it was planned with (constant, slowly
// rising and falling costs), and exceeds it by at most the excess of the
// epochs that did (a spike under load) and the latest booking's shortfall;
// under lasting load (every epoch costing more than expected) by no more
// than one epoch's excess.
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
		{"lasting load: 10 ms epochs after five of 1 ms", 0.25, 40, func(i int, _ *rand.Rand) float64 {
			if i < 5 {
				return 1e-3
			}
			return 10e-3
		}},
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
			s.Book(start, 0.9*c, ResyncBudget)
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
		if strings.HasPrefix(tc.name, "lasting load") && share > ResyncBudget+10e-3/now {
			// only the largest single excess may stay out of the budget
			t.Errorf("%s: resyncs took %.4f %% of the run, over the budget %.2f %% plus one epoch's excess", tc.name, 100*share, 100*ResyncBudget)
		}
		if share > ResyncBudget+excess/now+1e-12 {
			t.Errorf("%s: resyncs took %.4f %% of the run, over the budget %.2f %% plus the unforeseen %.4f %%", tc.name, 100*share, 100*ResyncBudget, 100*excess/now)
		}
		if tc.interval >= 2 && n < int(tc.run/tc.interval)-1 {
			t.Errorf("%s: %d epochs in %.0f s at %g s intervals: the budget held back cheap epochs", tc.name, n, tc.run, tc.interval)
		}
	}
}

// TestResyncSeedCost_ScalesTheAnchorToTheResyncsPingPongs: the first
// resync's expected cost is the end anchor's time scaled by the ratio of
// the resyncs' ping-pongs to the anchor's, by no less than a half when
// the resyncs measure with fewer, in full when with more; unknown counts
// leave the anchor's time.
func TestResyncSeedCost_ScalesTheAnchorToTheResyncsPingPongs(t *testing.T) {
	for _, tc := range []struct {
		anchorPP, resyncPP int
		want               float64
	}{
		{50, ResyncPingPongs, 0.5e-3}, // 16/50 = 0.32: a half
		{50, 40, 0.8e-3},
		{50, 50, 1e-3},
		{50, 100, 2e-3},
		{0, 16, 1e-3},
		{50, 0, 1e-3},
	} {
		if got := ResyncSeedCost(1e-3, tc.anchorPP, tc.resyncPP); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("anchor 1 ms with %d ping-pongs, resyncs with %d: %g s, want %g s", tc.anchorPP, tc.resyncPP, got, tc.want)
		}
	}
}

// TestJudgeKnot_NoisyKnotsKeepTheInterval: knots 0.25 s apart on a
// straight clock with Gaussian errors of 0.5 µs (loose knots over TCP
// between namespace hosts), judged from the four before each: without
// their noise (Noise 0) most disagree, which halved the interval down to
// GCLOCK_RESYNC/8 (78 epochs in 4.8 s in CI); with it, at most 1 % do. A
// 100 ppm frequency step between two knots still disagrees through that
// noise, and a knot that misses by 2 µs where the knots are exact still
// disagrees. With their noise known most are calm (a miss within its
// noise's standard deviation, KnotCalmZ), so a halving is undone; without
// it few are (4 %: those under ResyncTolNS/4 by chance).
func TestJudgeKnot_NoisyKnotsKeepTheInterval(t *testing.T) {
	const sigma, h = 500.0, 250e6
	rng := rand.New(rand.NewPCG(3, 38))
	straight := func(tt int64) float64 { return 1e6 + 10e3*float64(tt)*1e-9 }
	for _, tc := range []struct {
		name      string
		noise     float64 // the knots' Noise
		maxShare  float64 // the largest share of knots that may disagree
		minShare  float64 // the smallest share that must
		calm      [2]float64
		stepAfter bool // a 100 ppm step just after the fourth knot
	}{
		{"noise unknown", 0, 1, 0.5, [2]float64{0, 0.1}, false},
		{"noise known", sigma, 0.01, 0, [2]float64{0.6, 0.8}, false},
		{"noise known, 100 ppm step", sigma, 1, 0.95, [2]float64{0, 0.02}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const trials = 1000
			disagree, calm := 0, 0
			for range trials {
				var ks []KnotPoint
				for i := range 5 {
					tt := int64(float64(i) * h * (1 + 0.04*(rng.Float64()-0.5)))
					off := straight(tt) + sigma*rng.NormFloat64()
					if tc.stepAfter && i == 4 {
						off += 100e-6 * float64(tt-ks[3].T-10e6)
					}
					ks = append(ks, KnotPoint{T: tt, Off: off, Noise: tc.noise})
				}
				switch v, _ := JudgeKnot(ks[:4], ks[4]); v {
				case KnotDisagree:
					disagree++
				case KnotCalm:
					calm++
				}
			}
			share := float64(disagree) / trials
			t.Logf("%d of %d knots disagree, %d calm", disagree, trials, calm)
			if c := float64(calm) / trials; c < tc.calm[0] || c > tc.calm[1] {
				t.Errorf("%.1f %% of the knots are calm, want %.0f-%.0f %%", 100*c, 100*tc.calm[0], 100*tc.calm[1])
			}
			if share > tc.maxShare || share < tc.minShare {
				t.Errorf("%.1f %% of the knots disagree, want %.0f-%.0f %%", 100*share, 100*tc.minShare, 100*tc.maxShare)
			}
		})
	}
	exact := []KnotPoint{{T: 0, Off: straight(0)}, {T: 250e6, Off: straight(250e6)}, {T: 500e6, Off: straight(500e6)}, {T: 750e6, Off: straight(750e6)}}
	if v, _ := JudgeKnot(exact, KnotPoint{T: 1e9, Off: straight(1e9) + 2000}); v != KnotDisagree {
		t.Errorf("exact knots, the new one 2 µs off: verdict %d, want disagree", v)
	}
}

// TestKnotNoise_IsTheTypicalSpreadScaled: the median of the spreads
// times KnotNoisePerSpread; none: 0.
func TestKnotNoise_IsTheTypicalSpreadScaled(t *testing.T) {
	for _, tc := range []struct {
		spreads []float64
		want    float64
	}{
		{nil, 0},
		{[]float64{600}, 600 * KnotNoisePerSpread},
		{[]float64{100, 5000, 600}, 600 * KnotNoisePerSpread},
		{[]float64{400, 600, 5000, 100}, 500 * KnotNoisePerSpread},
	} {
		if got := KnotNoise(tc.spreads); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("KnotNoise(%v) = %g, want %g", tc.spreads, got, tc.want)
		}
	}
}

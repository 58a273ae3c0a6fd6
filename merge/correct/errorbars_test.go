package correct

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/trace"
)

// noisyEpochs are knots every 2 s over 40 s of a linear clock (100 ppm),
// each knot's offset off by a Gaussian error of sigma ns.
func noisyEpochs(sigma float64, seed uint64) []trace.Epoch {
	rng := rand.New(rand.NewPCG(seed, 1))
	var eps []trace.Epoch
	for i := 0; i <= 20; i++ {
		at := int64(i) * 2e9
		eps = append(eps, trace.Epoch{Index: i, EndNS: at, Params: map[string]string{"bound_ns": strconv.Itoa(int(10 * sigma))},
			Model: trace.Model{T0: at, Slope: 100e-6, Intercept: 1e6 + 100e-6*float64(at) + sigma*rng.NormFloat64()}})
	}
	return eps
}

// TestErrorBars_FollowTheLocalError: on knots every 2 s of a linear clock
// with 10 ns of noise, the bar is widest around a disturbed knot (1 µs
// off): five knots away it is under a third of that; a knot with twice
// the median sync-path bound and a residual over the noise gets a bar of
// at least its bound; and a frequency step the model took (a hinge) does
// not read as noise: the bars far from it stay as without the step.
func TestErrorBars_FollowTheLocalError(t *testing.T) {
	const n = 21
	rng := rand.New(rand.NewPCG(5, 38))
	ts := make([]int64, n)
	base := make([]float64, n)
	bounds := make([]float64, n)
	for i := range ts {
		ts[i] = int64(i) * 2e9
		base[i] = 1e6 + 100e-6*float64(ts[i]) + 10*rng.NormFloat64()
		bounds[i] = 300
	}
	bar := func(off, bnd []float64, t int64) float64 {
		return newErrorBars(newOffsetCurve(ts, off, DefaultScheme), bnd).at(t)
	}
	typical := bar(base, bounds, ts[4])
	if typical <= 0 || typical > 100 {
		t.Fatalf("bar at a knot with 10 ns noise: %.1f ns, want a few times 10", typical)
	}
	// a disturbed knot: wide there, typical four knots away
	off := append([]float64(nil), base...)
	off[10] += 1000
	if b := bar(off, bounds, ts[10]); b < 1000 {
		t.Errorf("bar at a knot 1 µs off: %.1f ns, want ≥ 1000", b)
	}
	if b, far := bar(off, bounds, ts[10]), bar(off, bounds, ts[15]); far > b/3 {
		t.Errorf("bar five knots from the disturbed one %.1f ns, at it %.1f ns: want under a third (the typical is %.1f ns)", far, b, typical)
	}
	// a knot with twice the median bound, 100 ns off: its bound
	off = append([]float64(nil), base...)
	off[10] += 100
	bnd := append([]float64(nil), bounds...)
	bnd[10] = 600
	if b := bar(off, bnd, ts[10]); b < 600 {
		t.Errorf("bar at a knot with twice the median bound and 100 ns off: %.1f ns, want ≥ its bound 600", b)
	}
	// a 1 ppm frequency step inside interval 10 (the kink rule takes it)
	off = append([]float64(nil), base...)
	step := float64(ts[10]) + 1e9
	for i := range off {
		off[i] += 1e-6 * max(0, float64(ts[i])-step)
	}
	if c := newOffsetCurve(ts, off, DefaultScheme); len(c.hinges) == 0 {
		t.Fatalf("the kink rule did not take a 1 ppm step in mid-interval")
	}
	if b := bar(off, bounds, ts[4]); b > 1.3*typical {
		t.Errorf("bar far from a frequency step the model took: %.1f ns, without the step %.1f ns", b, typical)
	}
	// in the middle of an interval the model's noise is averaged: smaller
	if mid := bar(base, bounds, ts[4]+1e9); mid >= typical {
		t.Errorf("bar mid-interval %.1f ns, at the knot %.1f ns: want smaller (the curve averages two knots)", mid, typical)
	}
}

// TestErrorBars_CoverARandomWalkBetweenFewKnots: a random-walk frequency
// (0.05 ppm/√s) seen through 7 knots 2-4 s apart, as an adapted run of
// about 20 s places them (init, resyncs 2, 3, 4, 4, 4 s later, the
// finalize sync 0.2-4 s after the last), each knot off by a Gaussian
// 10 ns: between the knots the spline misses the walk's wander by up to
// several times the knots' noise, which 7 knots' residuals hardly show
// (on real MPI 90 % coverage, issue 38). Over 1200 runs the true error
// lies within the bar at ≥ 99 % of all probes, with sync-path bounds of
// 10σ and of 20σ (the real run's 190-390 ns), at most 1 % of the runs
// have a coverage of their own under 99 % (with the wander floor,
// BarWander, 8 and 7 of 1200; before it 47 and 36), and the median bar
// stays under 40× the median error (the 8 s runs' limit).
func TestErrorBars_CoverARandomWalkBetweenFewKnots(t *testing.T) {
	const sigma, seeds = 10.0, 1200
	for _, tc := range []struct {
		name  string
		bound float64 // every knot's sync-path bound, ns
	}{
		{"bounds 10σ", 10 * sigma},
		{"bounds 20σ", 20 * sigma},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs, bars []float64
			var low []float64 // seeds' coverage under 99 %
			for seed := uint64(1); seed <= seeds; seed++ {
				ins, err := trace.ParseFakeClock(fmt.Sprintf("1e6:10+rw(1s,0.05ppm,%d)", seed))
				if err != nil {
					t.Fatal(err)
				}
				in := ins[0]
				off := func(x float64) float64 { return in.Recorded(x) - x }
				rng := rand.New(rand.NewPCG(seed, 77))
				ts := []int64{1e8}
				for _, gap := range []float64{2, 3, 4, 4, 0.5 + 3.5*rng.Float64(), 0.2} {
					ts = append(ts, ts[len(ts)-1]+int64(gap*1e9*(1+0.02*(2*rng.Float64()-1))))
				}
				o := make([]float64, len(ts))
				bounds := make([]float64, len(ts))
				for i, x := range ts {
					o[i] = off(float64(x)) + sigma*rng.NormFloat64()
					bounds[i] = tc.bound
				}
				n0 := len(errs)
				var in0 int
				errs, bars, in0 = probeRun(errs, bars, ts, o, bounds, off)
				if cv := float64(in0) / float64(len(errs)-n0); cv < 0.99 {
					low = append(low, cv)
				}
			}
			in := 0
			for i := range errs {
				if errs[i] <= bars[i] {
					in++
				}
			}
			cov := float64(in) / float64(len(errs))
			mb, me := median(bars), median(errs)
			t.Logf("%s: coverage %.2f%%, median bar %.1f ns, median error %.1f ns (%.2f×), %d seeds; %d runs under 99%%: %.3f", tc.name, 100*cov, mb, me, mb/me, seeds, len(low), low)
			if cov < 0.99 {
				t.Errorf("%s: the true error lies within the bar at %.2f%% of the probes, want ≥ 99%%", tc.name, 100*cov)
			}
			if len(low) > seeds/100 {
				t.Errorf("%s: %d of %d runs have their true error within the bar at under 99%% of their probes (%.3f), want at most %d", tc.name, len(low), seeds, low, seeds/100)
			}
			if mb > 40*me {
				t.Errorf("%s: median bar %.1f ns is %.2f× the median error %.1f ns, want ≤ 40×", tc.name, mb, mb/me, me)
			}
		})
	}
}

// unevenSpacings are knot times (s) the resync budget gives under load:
// the gaps doubling after a costly epoch (the budget's rule before D73), a
// 40 s run like make bench's 4-rank sine row (short intervals, then 8 s
// held off, twice), and short intervals followed by 8 s ones at once (the
// budget's rule before the doubling).
var unevenSpacings = []struct {
	name string
	at   []float64
}{
	{"doubling gaps", []float64{0.1, 2.1, 4.1, 6.1, 8.1, 12.1, 20.1, 36.1, 38.1, 40.1, 40.3}},
	{"bench-like", []float64{0.1, 1.1, 2.1, 2.6, 3.1, 3.6, 4.1, 5.1, 6.1, 14.1, 15.1, 16.1, 16.6, 17.1, 17.6, 18.1, 19.1, 27.1, 28.1, 29.1, 30.1, 31.1, 38.1, 40, 40.2}},
	{"short then long", []float64{0.1, 0.6, 1.1, 1.6, 2.1, 2.6, 3.1, 3.6, 4.1, 12.1, 20.1, 28.1, 36.1, 40, 40.2}},
}

// TestErrorBars_FollowTheIntervalLengthOnUnevenSpacing: on the uneven
// knots of unevenSpacings (each ±10 ms, 40 seeds, every injected shape,
// knot noise σ = 10 and 130 ns, sync-path bounds 10σ), the true error of
// the default model lies within the bar at ≥ 97.5 % of the probes (every
// 10 ms) in every row but the sine on the doubling gaps at σ = 10 ns
// (≥ 96.5 %: 96.84 % since the kink rules judge a bend at the
// candidate's own spacing, 97.91 % before, while the model misses that
// sine by 34 µs in its 16 s gap either way; the budget no longer doubles
// the gaps, D73), and at ≥ 99 % with σ = 130 ns and on the doubling
// gaps but for the sine: the bar carries the model's
// share from short intervals to long ones as a bend grows (h⁴), scales
// each residual to the interval's length, counts what the bounds cannot
// explain of a residual as bend, and keeps the random-walk floor on the
// long intervals. Before, the long intervals got the short ones' bars:
// 32-100 % (the sine 38.6 % on the doubling gaps). The price is the
// ratio: the median bar is 7.5-71× the median error (0.3-12× before), since
// most of the probes lie in the long intervals, where the bar assumes the
// worst bend the knots allow. The table is logged.
func TestErrorBars_FollowTheIntervalLengthOnUnevenSpacing(t *testing.T) {
	var tab strings.Builder
	for _, sp := range unevenSpacings {
		for _, sh := range studyShapes {
			for _, sigma := range []float64{10, 130} {
				var errs, bars []float64
				for seed := uint64(1); seed <= 40; seed++ {
					ts, o, off := jitteredKnots(t, sh, seed, sp.at, sigma)
					errs, bars = probeBars(errs, bars, ts, o, sigma, off)
				}
				in := 0
				for i := range errs {
					if errs[i] <= bars[i] {
						in++
					}
				}
				cov := float64(in) / float64(len(errs))
				ratio := median(bars) / median(errs)
				fmt.Fprintf(&tab, "%-16s %-26s σ %3.0f ns: coverage %6.2f %%, median bar / error %5.1f×\n", sp.name, sh.name, sigma, 100*cov, ratio)
				want := 0.975
				if sigma == 130 || sp.name == "doubling gaps" && !strings.HasPrefix(sh.name, "sine") {
					want = 0.99
				}
				if sigma == 10 && sp.name == "doubling gaps" && strings.HasPrefix(sh.name, "sine") {
					want = 0.965
				}
				if cov < want {
					t.Errorf("%s, %s, σ %g ns: the true error lies within the bar at %.2f %% of the probes, want ≥ %.1f %%", sp.name, sh.name, sigma, 100*cov, 100*want)
				}
				if ratio > 75 {
					t.Errorf("%s, %s, σ %g ns: median bar %.1f× the median error, want ≤ 75×", sp.name, sh.name, sigma, ratio)
				}
			}
		}
	}
	t.Logf("error bars on uneven knots, 40 seeds:\n%s", tab.String())
}

// TestErrorBars_CoverAFrequencyStepInsideAnInterval: a 1 ppm frequency
// step at 20 s ± half an interval (200 seeds), knots every 2, 2.7 (make
// bench's 4-rank step row: 15 knots over 40 s) and 4 s, Gaussian knot
// errors of 10-40 ns, bounds 10σ. Where the kink rule took the step
// inside an interval the model there is two extrapolated lines and their
// crossing, whose noise the spline's gain G does not show; the bars
// within one interval of the step must cover ≥ 99 % of the probes at 2
// and 2.7 s (98.2-98.9 % before the lines' own noise counted, which is
// what made the bench's 4-rank step row read 95.5 %) and ≥ 98.5 % at 4 s,
// and outside the kink's interval the bars must be exactly those without
// it (the widening is local). The table is logged.
func TestErrorBars_CoverAFrequencyStepInsideAnInterval(t *testing.T) {
	var tab strings.Builder
	for _, spacing := range []float64{2e9, 2.7e9, 4e9} {
		for _, sigma := range []float64{10, 20, 40} {
			var in, n, kinked int
			for seed := uint64(1); seed <= 200; seed++ {
				rng := rand.New(rand.NewPCG(seed, 77))
				stepAt := 20e9 + (rng.Float64()-0.5)*spacing
				ins, err := trace.ParseFakeClock(fmt.Sprintf("1e6:10+step(%.4fs,1ppm)", stepAt/1e9))
				if err != nil {
					t.Fatal(err)
				}
				off := func(tt float64) float64 { return ins[0].Recorded(tt) - tt }
				ts, o := studyKnots(off, 40e9, spacing, sigma, rng)
				c := newOffsetCurve(ts, o, DefaultScheme)
				bounds := make([]float64, len(ts))
				for i := range bounds {
					bounds[i] = 10 * sigma
				}
				q := newErrorBars(c, bounds)
				plain := *q
				plain.kinks = nil
				if q.kinks != nil {
					kinked++
				}
				i := 0
				for tt := ts[0]; tt <= ts[len(ts)-1]; tt += 1e7 {
					for i < len(ts)-2 && tt > ts[i+1] {
						i++
					}
					b := q.at(tt)
					k := sort.Search(len(q.ts), func(k int) bool { return q.ts[k] >= tt })
					inKink := q.kinks != nil && k > 0 && k < len(q.ts) && q.kinks[k-1].t > 0
					if pb := plain.at(tt); !inKink && b != pb {
						t.Fatalf("h %g s σ %g seed %d: bar %.2f ns at %.3f s outside the kink's interval, %.2f ns without the kink's noise: the widening must stay in its interval", spacing/1e9, sigma, seed, b, float64(tt)/1e9, pb)
					}
					if math.Abs(float64(tt)-stepAt) >= spacing {
						continue
					}
					n++
					if math.Abs(c.at(i, tt)-off(float64(tt))) <= b {
						in++
					}
				}
			}
			cov := float64(in) / float64(n)
			fmt.Fprintf(&tab, "knots %.1f s apart, σ %2.0f ns: step inside an interval in %d of 200 runs; coverage within one interval of the step %.2f %%\n", spacing/1e9, sigma, kinked, 100*cov)
			want := 0.99
			if spacing > 3e9 {
				want = 0.985
			}
			if kinked < 150 {
				t.Errorf("h %g s σ %g: the kink rule took the step inside an interval in %d of 200 runs: the test does not exercise the kink's bars", spacing/1e9, sigma, kinked)
			}
			if cov < want {
				t.Errorf("h %g s σ %g: the true error lies within the bar at %.2f %% of the probes within one interval of the step, want ≥ %.1f %%", spacing/1e9, sigma, 100*cov, 100*want)
			}
		}
	}
	t.Logf("a 1 ppm step at 20 s ± half an interval, 200 seeds:\n%s", tab.String())
}

// fewKnotShapes are the injected clocks of the tests' 8 s runs
// (tests/nonlinear_test.go TestAccuracy_ResyncHoldsNonLinearClocks), each
// with its phase, step time or walk drawn from the seed.
var fewKnotShapes = []shapeCase{
	{"linear 100 ppm", func(uint64) string { return "5e6:100" }},
	{"step 1 ppm", func(s uint64) string { return fmt.Sprintf("1e6:10+step(%.3fs,1ppm)", 1+6*float64(s%101)/101) }},
	{"sine 20 µs / 20 s", func(s uint64) string { return fmt.Sprintf("1e6:10+sin(20us,20s,%.3f)", 2*math.Pi*float64(s%89)/89) }},
	{"random walk 0.05 ppm/√s", func(s uint64) string { return fmt.Sprintf("1e6:10+rw(1s,0.05ppm,%d)", s) }},
}

// injectedOffset is the offset (ns) at time x (ns) of a clock injected
// by the GCLOCK_FAKE_CLOCK node spec.
func injectedOffset(t *testing.T, spec string) func(float64) float64 {
	t.Helper()
	ins, err := trace.ParseFakeClock(spec)
	if err != nil {
		t.Fatal(err)
	}
	in := ins[0]
	return func(x float64) float64 { return in.Recorded(x) - x }
}

// fewKnotRun places a rank's knots as the recorder does in an 8 s run
// with GCLOCK_RESYNC=2 and adapted intervals: the init sync's knot
// 0.01-0.6 s after the anchor, resyncs at the first round after each
// interval (rounds of 40 ms), the interval judged after each knot by the
// recorder's own rule (clocksync.JudgeKnot on the measured offsets,
// clocksync.NextResyncInterval), the resync opening MPI_Finalize when the
// last knot is at least 1 s old, and the full sync's knot 10-600 ms after
// it. Each knot's offset is off(t) plus a Gaussian error of sigma ns, its
// sync-path bound the run's ratio (drawn from boundLo-boundHi) times sigma,
// ±10 % (on real MPI at 2 ranks: 140-380 ns for knots within 20 ns, about
// 10σ under load, 20-30σ on a quiet machine).
func fewKnotRun(off func(float64) float64, sigma, boundLo, boundHi float64, rng *rand.Rand) (ts []int64, o, bounds []float64) {
	const base = 2.0 // GCLOCK_RESYNC, s
	ratio := boundLo + (boundHi-boundLo)*rng.Float64()
	add := func(t float64) {
		ts = append(ts, int64(t*1e9))
		o = append(o, off(t*1e9)+sigma*rng.NormFloat64())
		bounds = append(bounds, sigma*ratio*(0.9+0.2*rng.Float64()))
	}
	t := 0.01 + 0.59*rng.Float64()
	end := t + 8 + 0.4*rng.Float64() // 200 rounds of 40 ms sleep and two collectives
	add(t)
	interval := base
	for {
		next := ts[len(ts)-1] + int64((interval+0.04*rng.Float64())*1e9)
		if float64(next) >= end*1e9 {
			break
		}
		var prev []clocksync.KnotPoint
		for i := range ts {
			prev = append(prev, clocksync.KnotPoint{T: ts[i], Off: o[i]})
		}
		add(float64(next) / 1e9)
		v, _ := clocksync.JudgeKnot(prev, clocksync.KnotPoint{T: ts[len(ts)-1], Off: o[len(o)-1]})
		interval = clocksync.NextResyncInterval(interval, base, v == clocksync.KnotDisagree, v == clocksync.KnotCalm)
	}
	if end-float64(ts[len(ts)-1])/1e9 >= base/2 {
		add(end)
	}
	add(end + 0.01 + 0.59*rng.Float64())
	return ts, o, bounds
}

// fewKnotResult is what fewKnotStudy measured for one shape.
type fewKnotResult struct {
	shape            string
	cover            float64
	low              []float64 // coverage of the runs under 99 %
	ratio            float64
	knotsLo, knotsHi int
}

// fewKnotStudy runs seeds 8 s runs of every shape of fewKnotShapes with
// knot noise sigma and returns, per shape, the coverage of all probes
// (every 10 ms between the first and the last knot, as clockprog's events
// lie), the runs whose own coverage is under 99 %, the median bar over
// the median error, and the number of knots the runs had.
func fewKnotStudy(t *testing.T, sigma, boundLo, boundHi float64, seeds uint64) []fewKnotResult {
	t.Helper()
	var res []fewKnotResult
	for _, sh := range fewKnotShapes {
		r := fewKnotResult{shape: sh.name, knotsLo: 1 << 30}
		var errs, bars []float64
		in := 0
		for seed := uint64(1); seed <= seeds; seed++ {
			off := injectedOffset(t, sh.spec(seed))
			rng := rand.New(rand.NewPCG(seed, uint64(sigma)*1000+7))
			ts, o, bounds := fewKnotRun(off, sigma, boundLo, boundHi, rng)
			r.knotsLo, r.knotsHi = min(r.knotsLo, len(ts)), max(r.knotsHi, len(ts))
			n0 := len(errs)
			var in0 int
			errs, bars, in0 = probeRun(errs, bars, ts, o, bounds, off)
			in += in0
			if cv := float64(in0) / float64(len(errs)-n0); cv < 0.99 {
				r.low = append(r.low, cv)
			}
		}
		r.cover = float64(in) / float64(len(errs))
		r.ratio = median(bars) / median(errs)
		sort.Float64s(r.low)
		res = append(res, r)
	}
	return res
}

// TestErrorBars_CoverEveryRunWithFewKnots: in runs of 8 s, whose 5-8
// knots are placed as the recorder places them (fewKnotRun: adapted
// intervals of 0.25-4 s, the finalize pair), on every injected shape
// (linear, a 1 ppm frequency step at 1-7 s, a 20 µs / 20 s sine, a
// 0.05 ppm/√s random walk), with Gaussian knot errors of 5 and 20 ns and
// sync-path bounds of 10-30σ (a quiet machine) and 8-12σ (under load),
// the true error lies within the error bar at ≥ 99 % of all probes and,
// run by run, at ≥ 99 % of its own probes in ≥ 99 % of the 1000 runs: a
// run with few knots whose noise estimate reads low, or whose step the
// model placed wrong, must not leave its timestamps outside their bars
// (real runs of TestAccuracy_ResyncHoldsNonLinearClocks read 94.4-96.8 %
// now and then). Before the bars counted the steps the knots cannot place
// (kinkAlternatives) 43 and 19 step runs of 1000 were under 99 % at
// 10-30σ; before the few-knot noise (fewKnotNoise) 9-23 linear and
// random-walk runs at 8-12σ. The
// median bar over the median error is logged (issue 38 asks ≤ 4×) and
// must stay ≤ 40×, but on the sine ≤ 250×: with 6-8 knots a smooth bend
// reads as a random walk's wander and the bars take its floor (BarWander,
// D38: 110-230× here).
func TestErrorBars_CoverEveryRunWithFewKnots(t *testing.T) {
	const seeds = 1000
	var tab strings.Builder
	for _, cs := range []struct{ sigma, boundLo, boundHi float64 }{{5, 10, 30}, {20, 10, 30}, {5, 8, 12}, {20, 8, 12}} {
		sigma := cs.sigma
		for _, r := range fewKnotStudy(t, sigma, cs.boundLo, cs.boundHi, seeds) {
			worst := ""
			if len(r.low) > 0 {
				worst = fmt.Sprintf(", lowest %.2f %%", 100*r.low[0])
			}
			fmt.Fprintf(&tab, "σ %2.0f ns, bounds %2.0f-%2.0fσ: %-24s %d-%d knots: coverage %6.2f %%, runs under 99 %%: %3d of %d%s; median bar / median error %5.1f×\n",
				sigma, cs.boundLo, cs.boundHi, r.shape, r.knotsLo, r.knotsHi, 100*r.cover, len(r.low), seeds, worst, r.ratio)
			if r.cover < 0.99 {
				t.Errorf("σ %g ns, %s: the true error lies within the bar at %.2f %% of the probes, want ≥ 99 %%", sigma, r.shape, 100*r.cover)
			}
			if len(r.low) > seeds/100 {
				t.Errorf("σ %g ns, %s: %d of %d runs have their true error within the bar at under 99 %% of their probes (lowest %.2f %%), want at most %d", sigma, r.shape, len(r.low), seeds, 100*r.low[0], seeds/100)
			}
			limit := 40.0
			if strings.HasPrefix(r.shape, "sine") {
				limit = 250
			}
			if r.ratio > limit {
				t.Errorf("σ %g ns, %s: median bar %.1f× the median error, want ≤ %g×", sigma, r.shape, r.ratio, limit)
			}
		}
	}
	t.Logf("error bars in 8 s runs with adapted resyncs, %d seeds:\n%s", seeds, tab.String())
}

// TestErrorBars_TheBoundIsTheCeilingOfTheCommonError: over TCP the
// sync-path bound (13-25 µs) is mostly the path's symmetric latency, and
// BarBias of it made bars 6-203× the median error on the kept runs of
// issue 38 (knots 15-1,100 ns off). With 9 or more knots the share for an
// error common to all knots is capped at BarBiasNoise σ (D95). Knots every
// 2 s over 40 s (and 5 over 8 s), 40 seeds, a linear clock and a
// 20 µs / 20 s sine, Gaussian knot noise σ plus an error common to all
// knots:
//   - TCP-like (bound 200σ, common error 0 and 1.8σ, the largest the kept
//     runs showed): the true error lies within the bar at ≥ 99 % of the
//     probes and the median bar is at most maxRatio × the median error
//     (the bound's share alone made 17-52×);
//   - emulated-node-like (bound 40σ): the median bar is within 1 % of the
//     one BarBias of the bound gives (the cap bites only where σ reads
//     under a third of the bound / BarBiasNoise, and then little);
//   - 5 knots that agree to 2 ns, 100 ns off together, bound 19 µs (a
//     3-knot TCP run was so): too few knots to say what the noise is, the
//     bound's share stays, the bars cover ≥ 99 %.
func TestErrorBars_TheBoundIsTheCeilingOfTheCommonError(t *testing.T) {
	linear := func(x float64) float64 { return 1e6 + 10e-6*x }
	sine := func(x float64) float64 { return 1e6 + 10e-6*x + 2e4*math.Sin(2*math.Pi*x/20e9) }
	for _, tc := range []struct {
		name          string
		off           func(float64) float64
		span, gap     float64 // s
		sigma, common float64 // ns: each knot's Gaussian noise, the error all share (times a random sign)
		bound         float64 // ns
		maxRatio      float64 // median bar / median error; 0: bars as BarBias of the bound gives
	}{
		{"TCP linear", linear, 40, 2, 100, 0, 2e4, 24},
		{"TCP linear common 1.8σ", linear, 40, 2, 100, 180, 2e4, 10},
		{"TCP sine", sine, 40, 2, 100, 0, 2e4, 24},
		{"TCP sine common 1.8σ", sine, 40, 2, 100, 180, 2e4, 10},
		{"emulated linear", linear, 40, 2, 10, 20, 400, 0},
		{"emulated sine", sine, 40, 2, 10, 20, 400, 0},
		{"5 knots agreeing, 100 ns off together", linear, 8, 2, 2, 100, 1.9e4, 1e9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs, bars, refBars []float64
			for seed := uint64(1); seed <= 40; seed++ {
				rng := rand.New(rand.NewPCG(seed, 95))
				common := tc.common
				if rng.IntN(2) == 0 {
					common = -common
				}
				var ts []int64
				var o, bounds []float64
				for x := 0.1; x <= tc.span+0.1+1e-9; x += tc.gap {
					at := int64(x * 1e9 * (1 + 0.01*(2*rng.Float64()-1)))
					ts = append(ts, at)
					o = append(o, tc.off(float64(at))+common+tc.sigma*rng.NormFloat64())
					bounds = append(bounds, tc.bound)
				}
				errs, bars, _ = probeRun(errs, bars, ts, o, bounds, tc.off)
				if tc.maxRatio == 0 {
					old := barBiasNoise
					barBiasNoise = math.Inf(1)
					_, refBars, _ = probeRun(nil, refBars, ts, o, bounds, tc.off)
					barBiasNoise = old
				}
			}
			in := 0
			for i := range errs {
				if errs[i] <= bars[i] {
					in++
				}
			}
			cov := float64(in) / float64(len(errs))
			mb, me := median(bars), median(errs)
			t.Logf("%s: coverage %.2f%%, median bar %.1f ns, median error %.1f ns (%.2f×)", tc.name, 100*cov, mb, me, mb/me)
			if cov < 0.99 {
				t.Errorf("%s: the true error lies within the bar at %.2f%% of the probes, want ≥ 99%%", tc.name, 100*cov)
			}
			if tc.maxRatio == 0 {
				if rb := median(refBars); math.Abs(mb-rb) > 0.01*rb {
					t.Errorf("%s: median bar %.2f ns, want %.2f ns ± 1 %% (BarBias of the bound)", tc.name, mb, rb)
				}
			}
			if tc.maxRatio > 0 && mb > tc.maxRatio*me {
				t.Errorf("%s: median bar %.1f ns is %.2f× the median error %.1f ns, want ≤ %g×", tc.name, mb, mb/me, me, tc.maxRatio)
			}
		})
	}
}

package correct

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/trace"
)

// fewKnotShapes are the injected clocks of the tests' 8 s runs
// (tests/nonlinear_test.go TestAccuracy_ResyncHoldsNonLinearClocks), each
// with its phase, step time or walk drawn from the seed.
var fewKnotShapes = []shapeCase{
	{"linear 100 ppm", func(uint64) string { return "5e6:100" }},
	{"step 1 ppm", func(s uint64) string { return fmt.Sprintf("1e6:10+step(%.3fs,1ppm)", 1+6*float64(s%101)/101) }},
	{"sine 20 µs / 20 s", func(s uint64) string { return fmt.Sprintf("1e6:10+sin(20us,20s,%.3f)", 2*math.Pi*float64(s%89)/89) }},
	{"random walk 0.05 ppm/√s", func(s uint64) string { return fmt.Sprintf("1e6:10+rw(1s,0.05ppm,%d)", s) }},
}

// fewKnotRun places a rank's knots as the recorder does in an 8 s run
// with GCLOCK_RESYNC=2 and adapted intervals: the init sync's knot
// 0.01-0.6 s after the anchor, resyncs at the first round after each
// interval (rounds of 40 ms), the interval judged after each knot by the
// recorder's own rule (clocksync.JudgeKnot on the measured offsets,
// clocksync.NextResyncInterval), the resync opening MPI_Finalize when the
// last knot is at least 1 s old, and the full sync's knot 10-600 ms after
// it. Each knot's offset is off(t) plus a Gaussian error of sigma ns, its
// sync-path bound 10-30 sigma (on real MPI at 2 ranks: 140-380 ns for knots
// within 20 ns).
func fewKnotRun(off func(float64) float64, sigma float64, rng *rand.Rand) (ts []int64, o, bounds []float64) {
	const base = 2.0 // GCLOCK_RESYNC, s
	add := func(t float64) {
		ts = append(ts, int64(t*1e9))
		o = append(o, off(t*1e9)+sigma*rng.NormFloat64())
		bounds = append(bounds, sigma*(10+20*rng.Float64()))
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
func fewKnotStudy(t *testing.T, sigma float64, seeds uint64) []fewKnotResult {
	t.Helper()
	var res []fewKnotResult
	for _, sh := range fewKnotShapes {
		r := fewKnotResult{shape: sh.name, knotsLo: 1 << 30}
		var errs, bars []float64
		in := 0
		for seed := uint64(1); seed <= seeds; seed++ {
			ins, err := trace.ParseFakeClock(sh.spec(seed))
			if err != nil {
				t.Fatal(err)
			}
			inj := ins[0]
			off := func(x float64) float64 { return inj.Recorded(x) - x }
			rng := rand.New(rand.NewPCG(seed, uint64(sigma)*1000+7))
			ts, o, bounds := fewKnotRun(off, sigma, rng)
			r.knotsLo, r.knotsHi = min(r.knotsLo, len(ts)), max(r.knotsHi, len(ts))
			c := newOffsetCurve(ts, o, DefaultScheme)
			q := newErrorBars(c, bounds)
			i, n0, in0 := 0, len(errs), 0
			for x := ts[0]; x <= ts[len(ts)-1]; x += 1e7 {
				for i < len(ts)-2 && x > ts[i+1] {
					i++
				}
				e, b := math.Abs(c.at(i, x)-off(float64(x))), q.at(x)
				errs, bars = append(errs, e), append(bars, b)
				if e <= b {
					in0++
				}
			}
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
// sync-path bounds of 10-30σ, the true error lies within the error bar
// at ≥ 99 % of all probes and, run by run, at ≥ 99 % of its own probes
// in ≥ 99 % of the 1000 runs: a run with few knots whose noise estimate
// reads low must not leave its timestamps outside their bars (real runs
// of TestAccuracy_ResyncHoldsNonLinearClocks read 96.2-96.5 % now and
// then; simulated here before the bars counted the steps the knots
// cannot place, kinkAlternatives: 43 and 19 step runs of 1000). The
// median bar over the median error is logged (issue 38 asks ≤ 4×) and
// must stay ≤ 40×, but on the sine ≤ 250×: with 6-8 knots a smooth bend
// reads as a random walk's wander and the bars take its floor (BarWander,
// D38: 110-230× here).
func TestErrorBars_CoverEveryRunWithFewKnots(t *testing.T) {
	const seeds = 1000
	var tab strings.Builder
	for _, sigma := range []float64{5, 20} {
		for _, r := range fewKnotStudy(t, sigma, seeds) {
			worst := ""
			if len(r.low) > 0 {
				worst = fmt.Sprintf(", lowest %.2f %%", 100*r.low[0])
			}
			fmt.Fprintf(&tab, "σ %2.0f ns %-24s %d-%d knots: coverage %6.2f %%, runs under 99 %%: %3d of %d%s; median bar / median error %5.1f×\n",
				sigma, r.shape, r.knotsLo, r.knotsHi, 100*r.cover, len(r.low), seeds, worst, r.ratio)
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

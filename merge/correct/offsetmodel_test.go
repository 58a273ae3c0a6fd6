package correct

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// shapeCase is one injected clock shape of the offset-model study: the
// offset (ns) of a rank at time t (ns) for a seed.
type shapeCase struct {
	name string
	spec func(seed uint64) string // GCLOCK_FAKE_CLOCK node spec of the rank
}

var studyShapes = []shapeCase{
	{"linear 100 ppm", func(uint64) string { return "5e6:100" }},
	{"step 1 ppm", func(s uint64) string { return fmt.Sprintf("1e6:10+step(%.3fs,1ppm)", 15+10*float64(s%97)/97) }},
	{"sine 20 µs / 20 s", func(s uint64) string { return fmt.Sprintf("1e6:10+sin(20us,20s,%.3f)", 2*math.Pi*float64(s%89)/89) }},
	{"random walk 0.05 ppm/√s", func(s uint64) string { return fmt.Sprintf("1e6:10+rw(1s,0.05ppm,%d)", s) }},
	{"step + wander", func(s uint64) string {
		return fmt.Sprintf("1e6:10+step(%.3fs,1ppm)+sin(5us,30s,%.3f)+rw(1s,0.02ppm,%d)", 15+10*float64(s%97)/97, float64(s%13)/2, s)
	}},
}

// studyKnots places knots as the recorder does over a run of span ns: the
// init sync's end at 0.1 s, resyncs every interval (±2% jitter: they wait
// for an agreed collective), a resync opening MPI_Finalize and the full
// sync's end 0.2 s later; each knot's offset is the truth plus a Gaussian
// error of sigma ns.
func studyKnots(off func(float64) float64, span, interval, sigma float64, rng *rand.Rand) ([]int64, []float64) {
	var ts []int64
	ts = append(ts, 1e8)
	for t := 1e8 + interval; t < span-interval/2; t += interval {
		ts = append(ts, int64(t+interval*0.02*(2*rng.Float64()-1)))
	}
	ts = append(ts, int64(span), int64(span+2e8))
	o := make([]float64, len(ts))
	for i, t := range ts {
		o[i] = off(float64(t)) + sigma*rng.NormFloat64()
	}
	return ts, o
}

// modelMaxError is the largest |model − truth| over [ts[0], ts[n−1]]
// probed every 10 ms.
func modelMaxError(ts []int64, o []float64, s Scheme, off func(float64) float64) float64 {
	c := newOffsetCurve(ts, o, s)
	worst := 0.0
	i := 0
	for t := ts[0]; t <= ts[len(ts)-1]; t += 1e7 {
		for i < len(ts)-2 && t > ts[i+1] {
			i++
		}
		v := c.at(i, t)
		worst = math.Max(worst, math.Abs(v-off(float64(t))))
	}
	return worst
}

// TestOffsetModel_SchemesOnInjectedShapes is the measurement behind the
// default offset model (docs/explanation/decisions.md): every scheme on every injected
// shape of GCLOCK_FAKE_CLOCK, knots 2 s apart over 40 s, the knots' own
// errors Gaussian with σ = 0 (model error alone), 10 ns (shared memory)
// and 130 ns (TCP between namespace hosts, docs/explanation/clock-accuracy.md); the
// worst and median max error over 40 seeds. It asserts what the choice
// rests on: the default (spline with kinks) beats the straight line on the
// sine by 5× and on the step by 2×, is as good on the random walk (within
// 20%), and costs at most 1.5× the line's error on a linear clock with
// noisy knots.
func TestOffsetModel_SchemesOnInjectedShapes(t *testing.T) {
	schemes := []Scheme{LinearScheme, SplineScheme, SplineKinkScheme, BesselScheme, AkimaScheme, PCHIPScheme}
	const seeds = 40
	type cell struct{ worst, median float64 }
	res := map[string]map[Scheme]cell{}
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-26s %6s", "shape", "σ ns")
	for _, s := range schemes {
		fmt.Fprintf(&tab, " %17s", s.String()+" (max/med)")
	}
	tab.WriteString("\n")
	for _, sh := range studyShapes {
		for _, sigma := range []float64{0, 10, 130} {
			key := fmt.Sprintf("%s/%g", sh.name, sigma)
			res[key] = map[Scheme]cell{}
			errs := map[Scheme][]float64{}
			for seed := uint64(1); seed <= seeds; seed++ {
				off := shapeOffset(t, sh, seed)
				rng := rand.New(rand.NewPCG(seed, 38))
				ts, o := studyKnots(off, 40e9, 2e9, sigma, rng)
				for _, s := range schemes {
					errs[s] = append(errs[s], modelMaxError(ts, o, s, off))
				}
			}
			fmt.Fprintf(&tab, "%-26s %6g", sh.name, sigma)
			for _, s := range schemes {
				e := errs[s]
				sort.Float64s(e)
				c := cell{e[len(e)-1], e[len(e)/2]}
				res[key][s] = c
				fmt.Fprintf(&tab, " %8.3f/%-8.3f", c.worst/1e3, c.median/1e3)
			}
			tab.WriteString("\n")
		}
	}
	t.Logf("max |model − truth| (µs), knots every 2 s over 40 s, %d seeds:\n%s", seeds, tab.String())
	for _, tc := range []struct {
		key    string
		factor float64 // the default's worst must be ≤ linear's worst / factor
	}{
		{"sine 20 µs / 20 s/0", 5},
		{"sine 20 µs / 20 s/10", 5},
		{"step 1 ppm/0", 2},
		{"step 1 ppm/10", 2},
		{"step + wander/10", 1.5},
		{"random walk 0.05 ppm/√s/0", 1 / 1.2},
		{"random walk 0.05 ppm/√s/10", 1 / 1.2},
		{"linear 100 ppm/10", 1 / 1.5},
		{"linear 100 ppm/130", 1 / 1.5},
	} {
		lin, def := res[tc.key][LinearScheme].worst, res[tc.key][DefaultScheme].worst
		if def > lin/tc.factor {
			t.Errorf("%s: %v worst %.3f µs, linear %.3f µs: want ≤ linear/%.2f", tc.key, DefaultScheme, def/1e3, lin/1e3, tc.factor)
		}
	}
}

// barStudy returns, over every probe (every 10 ms between the first and
// last knot) of every seed, the true errors and the bars of the default
// model.
func barStudy(t *testing.T, sh shapeCase, span, sigma float64, heavy bool, seeds uint64) (errs, bars []float64) {
	t.Helper()
	for seed := uint64(1); seed <= seeds; seed++ {
		off := shapeOffset(t, sh, seed)
		rng := rand.New(rand.NewPCG(seed, 38))
		ts, o := studyKnots(off, span, 2e9, sigma, rng)
		if heavy { // one knot in 20 off by 5σ more
			for i := range o {
				if rng.IntN(20) == 0 {
					o[i] += 5 * sigma * (2*float64(rng.IntN(2)) - 1)
				}
			}
		}
		errs, bars = probeBars(errs, bars, ts, o, sigma, off)
	}
	return errs, bars
}

// probeBars appends to errs and bars, every 10 ms between the first and
// last knot (ts, measured offsets o), the default model's true error
// against off and its error bar, with sync-path bounds of 10σ (on real
// MPI 10-100× the typical miss).
func probeBars(errs, bars []float64, ts []int64, o []float64, sigma float64, off func(float64) float64) ([]float64, []float64) {
	bounds := make([]float64, len(ts))
	for i := range bounds {
		bounds[i] = 10 * sigma
	}
	errs, bars, _ = probeRun(errs, bars, ts, o, bounds, off)
	return errs, bars
}

// probeRun appends to errs and bars, every 10 ms between the first and
// last knot (ts, measured offsets o, sync-path bounds), the default
// model's true error against off and its error bar, and returns how many
// of the run's probes lie within their bars.
func probeRun(errs, bars []float64, ts []int64, o, bounds []float64, off func(float64) float64) ([]float64, []float64, int) {
	c := newOffsetCurve(ts, o, DefaultScheme)
	q := newErrorBars(c, bounds)
	i, in := 0, 0
	for tt := ts[0]; tt <= ts[len(ts)-1]; tt += 1e7 {
		for i < len(ts)-2 && tt > ts[i+1] {
			i++
		}
		e, b := math.Abs(c.at(i, tt)-off(float64(tt))), q.at(tt)
		errs, bars = append(errs, e), append(bars, b)
		if e <= b {
			in++
		}
	}
	return errs, bars, in
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestOffsetModel_ErrorBarsCoverTheTruth: on every injected shape, with
// knot errors of σ = 10 ns and 130 ns (Gaussian, and with one knot in 20
// off by 5σ more), in 40 s and 8 s runs, the true error of the default
// model lies within the error bar at ≥ 99 % of the probes (≥ 98 % with
// the heavy tails), and the median bar is at most a few times the median
// error (the table's ratio column). Issue 38 asks for 4×; for Gaussian
// knot errors even a bar that knows σ exactly and follows the curve's
// noise gain needs ≈ 3.9× for 99 % (the reference line logged below), and
// σ estimated from 20 knots spreads by a quarter, so the noise-dominated
// rows reach 5-6×. Where the clock wanders (sine, random walk, step +
// wander at σ = 10 ns) the residuals hold the wander too and the bar
// counts it as noise: 9-13×; with the 5 knots of an 8 s run a bend and
// noise give the same single fourth difference and the bar takes it as
// noise, capped by the sync-path bound (simulated here as 10σ): up to
// 38×. The test guards those figures: 6× where the noise dominates
// (linear and step at 40 s: 6.5×), 8× for every shape at σ = 130 ns, 14× at
// σ = 10 ns and with heavy tails, 40× in 8 s runs. See
// docs/explanation/clock-accuracy.md "Error bars" and errorbars.go.
func TestOffsetModel_ErrorBarsCoverTheTruth(t *testing.T) {
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-26s %4s %6s %5s %9s %9s %9s %7s\n", "shape", "run", "σ ns", "tails", "coverage", "med bar", "med err", "ratio")
	type run struct {
		span  float64
		sigma float64
		heavy bool
	}
	var runs []run
	for _, sigma := range []float64{10, 130} {
		for _, heavy := range []bool{false, true} {
			runs = append(runs, run{40e9, sigma, heavy})
		}
	}
	runs = append(runs, run{8e9, 10, false}, run{8e9, 130, false})
	for _, sh := range studyShapes {
		for _, rn := range runs {
			sigma, heavy := rn.sigma, rn.heavy
			errs, bars := barStudy(t, sh, rn.span, sigma, heavy, 40)
			in := 0
			for i := range errs {
				if errs[i] <= bars[i] {
					in++
				}
			}
			cov := float64(in) / float64(len(errs))
			mb, me := median(bars), median(errs)
			fmt.Fprintf(&tab, "%-26s %3gs %6g %5v %8.2f%% %9.1f %9.1f %6.2f×\n", sh.name, rn.span/1e9, sigma, heavy, 100*cov, mb, me, mb/me)
			want := 0.99
			if heavy {
				want = 0.98
			}
			if cov < want {
				t.Errorf("%s %g s σ %g (heavy tails %v): the true error lies within the bar at %.2f%% of the probes, want ≥ %.0f%%", sh.name, rn.span/1e9, sigma, heavy, 100*cov, 100*want)
			}
			limit := 14.0
			switch {
			case rn.span < 20e9:
				limit = 40
			case !heavy && (strings.HasPrefix(sh.name, "linear") || strings.HasPrefix(sh.name, "step 1")):
				limit = 6.5
			case !heavy && sigma == 130:
				limit = 8
			}
			if mb > limit*me {
				t.Errorf("%s %g s σ %g (heavy tails %v): median bar %.1f ns is %.2f× the median error %.1f ns, want ≤ %g×", sh.name, rn.span/1e9, sigma, heavy, mb, mb/me, me, limit)
			}
		}
	}
	z, ratio := knownSigmaReference(t)
	t.Logf("error bars of the default model, knots every 2 s over 40 s and 8 s, 40 seeds:\n%s"+
		"reference: a bar z·σ·G(t) with σ known exactly needs z = %.2f for 99 %% on the linear clock, a median ratio of %.2f×", tab.String(), z, ratio)
}

// knownSigmaReference returns, for the linear clock with Gaussian knot
// errors (σ = 10 ns, 40 s runs), the multiple z of the exactly known
// noise carried through the curve (σ·G(t), errorBars' G) that covers 99 %
// of the probes, and the median ratio of that bar to the error: the floor
// no estimate of σ can go under.
func knownSigmaReference(t *testing.T) (z, ratio float64) {
	t.Helper()
	const sigma = 10
	var q, errs, g []float64
	for seed := uint64(1); seed <= 40; seed++ {
		off := func(tt float64) float64 { return 5e6 + 100e-6*tt }
		rng := rand.New(rand.NewPCG(seed, 38))
		ts, o := studyKnots(off, 40e9, 2e9, sigma, rng)
		c := newOffsetCurve(ts, o, DefaultScheme)
		unit := make([]float64, len(ts))
		for i := range unit {
			unit[i] = sigma
		}
		b := &errorBars{ts: ts, model: make([]float64, len(ts)-1), scale: 1}
		b.gKnot, b.gMid = noiseGains(ts, unit)
		i := 0
		for tt := ts[0]; tt <= ts[len(ts)-1]; tt += 1e7 {
			for i < len(ts)-2 && tt > ts[i+1] {
				i++
			}
			e, gt := math.Abs(c.at(i, tt)-off(float64(tt))), b.at(tt)
			errs, g = append(errs, e), append(g, gt)
			q = append(q, e/gt)
		}
	}
	sort.Float64s(q)
	z = q[len(q)*99/100]
	return z, z * median(g) / median(errs)
}

// TestOffsetModel_StepAtAKnotStaysStraight: a 1 ppm frequency step that
// falls on a knot (or within 2% of an interval from it) leaves straight
// lines on both sides, which the default model must keep (a spline
// through the corner rings by about 0.1 × step × spacing), and a step
// inside an interval is found where the two lines meet.
func TestOffsetModel_StepAtAKnotStaysStraight(t *testing.T) {
	for _, tc := range []struct {
		name  string
		at    float64 // step time, s
		span  int     // knots every 2 s up to span s, then one 0.2 s later (the finalize pair)
		limit float64 // ns
	}{
		{"on knot 10", 20, 40, 1},
		{"1% after knot 10", 20.02, 40, 20}, // straight lines: 19.8 ns
		{"mid-interval", 21, 40, 1},
		{"a third into the interval", 20.66, 40, 1},
		// an 8 s run: the step falls next to an end knot, where only one
		// side could show a straight line; no kink is taken there (a sine
		// would read as one), and the spline stays under straight lines'
		// 495 ns
		{"8 s run, second interval", 3.1, 8, 360},
		{"8 s run, last full interval", 6.9, 8, 360},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ts []int64
			var o []float64
			off := func(x float64) float64 { return 1e6 + 10e-6*x + 1e-6*max(0, x-tc.at*1e9) }
			for i := 0; i <= tc.span/2; i++ {
				ts = append(ts, int64(i)*2e9)
			}
			ts = append(ts, ts[len(ts)-1]+2e8)
			for _, x := range ts {
				o = append(o, off(float64(x)))
			}
			if e := modelMaxError(ts, o, DefaultScheme, off); e > tc.limit {
				t.Errorf("max error %.1f ns (limit %g ns; straight lines give %.1f ns)", e, tc.limit, modelMaxError(ts, o, LinearScheme, off))
			}
		})
	}
}

// smoothedKnots returns the knots moved as a smoother weighted by each
// knot's estimated noise would move them (the alternatives of
// TestOffsetModel_KnotsAreInterpolatedNotSmoothed): a knot within the
// noise is shrunk toward its neighbours' cubic prediction by the share of
// its residual that is its own error (1/ρ² for pure noise, less where a
// bend shows), and with replace a knot the error bars take as disturbed
// (errorbars.go) is replaced by that prediction.
func smoothedKnots(ts []int64, o []float64, replace bool) []float64 {
	keep := keptKnots(ts)
	if len(keep) < 6 {
		return o
	}
	kts := make([]int64, len(keep))
	koff := make([]float64, len(keep))
	for k, i := range keep {
		kts[k], koff[k] = ts[i], o[i]
	}
	A := looOp(kts)
	r := applyLoo(A, koff)
	sigma, z2 := looNoise(kts, A, r)
	out := append([]float64(nil), o...)
	for k, i := range keep {
		rho2 := 0.0
		for _, w := range A[k] {
			rho2 += w * w
		}
		if rho2 == 0 || r[k] == 0 {
			continue
		}
		if math.Abs(r[k]) > BarOutlier*math.Sqrt(rho2)*sigma && z2[k] > BarOutlier2*sigma {
			if replace {
				out[i] = o[i] - r[k]*(1-sigma*sigma/(r[k]*r[k]))
			}
			continue
		}
		out[i] = o[i] - r[k]/rho2*math.Min(1, rho2*sigma*sigma/(r[k]*r[k]))
	}
	return out
}

// TestOffsetModel_KnotsAreInterpolatedNotSmoothed is the measurement
// behind interpolating every knot rather than smoothing them by their
// estimated noise (docs/explanation/decisions.md, "Knots are interpolated,
// not smoothed"): knots 2 s and 0.5 s apart (an adapted interval) over
// 40 s, Gaussian knot errors of 10 and 130 ns, and with one knot in 20
// off by 8σ more; worst max |model − truth| over 40 seeds. Shrinking the
// knots within the noise gains at most a third anywhere (1.30× with heavy
// tails, ≤ 1.18× without) and loses 1.7× on a step 0.5 s apart (its
// kink's knots are pulled off the two lines); replacing the knots that
// stand out by their neighbours' prediction loses by far on the sine (its
// end knots' one-sided residuals stand out: 0.12 → 7.6 µs) and the step.
func TestOffsetModel_KnotsAreInterpolatedNotSmoothed(t *testing.T) {
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-26s %5s %5s %5s %10s %10s %10s\n", "shape", "gap s", "σ ns", "tails", "interp", "shrunk", "replaced")
	bestGain, stepLoss, replaceLoss := 0.0, 0.0, 0.0
	for _, gap := range []float64{2e9, 0.5e9} {
		for _, sh := range studyShapes {
			for _, sigma := range []float64{10, 130} {
				for _, heavy := range []bool{false, true} {
					var a, b, c []float64
					for seed := uint64(1); seed <= 40; seed++ {
						off := shapeOffset(t, sh, seed)
						rng := rand.New(rand.NewPCG(seed, 38))
						ts, o := studyKnots(off, 40e9, gap, sigma, rng)
						if heavy {
							for i := range o {
								if rng.IntN(20) == 0 {
									o[i] += 8 * sigma * (2*float64(rng.IntN(2)) - 1)
								}
							}
						}
						a = append(a, modelMaxError(ts, o, DefaultScheme, off))
						b = append(b, modelMaxError(ts, smoothedKnots(ts, o, false), DefaultScheme, off))
						c = append(c, modelMaxError(ts, smoothedKnots(ts, o, true), DefaultScheme, off))
					}
					sort.Float64s(a)
					sort.Float64s(b)
					sort.Float64s(c)
					wa, wb, wc := a[len(a)-1], b[len(b)-1], c[len(c)-1]
					fmt.Fprintf(&tab, "%-26s %5g %5g %5v %10.3f %10.3f %10.3f\n", sh.name, gap/1e9, sigma, heavy, wa/1e3, wb/1e3, wc/1e3)
					bestGain = math.Max(bestGain, wa/wb)
					if strings.HasPrefix(sh.name, "step 1") {
						stepLoss = math.Max(stepLoss, wb/wa)
					}
					replaceLoss = math.Max(replaceLoss, wc/wa)
				}
			}
		}
	}
	t.Logf("worst max |model − truth| (µs), 40 s, 40 seeds:\n%s", tab.String())
	t.Logf("shrinking: at best %.2f× lower, on the step up to %.2f× higher; replacing: up to %.1f× higher", bestGain, stepLoss, replaceLoss)
	if bestGain > 1.35 {
		t.Errorf("shrinking the knots lowers the worst error by %.2f× somewhere: over the third the decision rests on, revisit it", bestGain)
	}
	if stepLoss < 1.5 {
		t.Errorf("shrinking the knots costs the step at most %.2f×: the decision rests on it being 1.5× worse there, revisit it", stepLoss)
	}
	if replaceLoss < 10 {
		t.Errorf("replacing the knots that stand out costs at most %.1f×: the decision rests on it being far worse, revisit it", replaceLoss)
	}
}

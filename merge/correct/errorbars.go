package correct

import (
	"math"
	"sort"
)

// Error bars of the offset model (issue 38 §4). The true error of a
// corrected timestamp has two parts: the knots' own errors carried
// through the curve, and what the curve misses of the clock between
// knots. The bar follows both where they are, rather than being one width
// per rank (for Gaussian knot errors no bar of one width can be under
// 3.8× the median error at 99 % coverage, and a one-width bar must be as
// wide as the worst interval everywhere):
//
//	bar(t) = hypot(BarZ · κ(n) · G(t), BarBias · B) + 4u(1−u) · M_i + K_i(t)
//
// G(t) is the knots' noise carried to t: sqrt(Σ_j L_j(t)² s_j²), L_j the
// curve's response to a unit error at knot j (a cubic spline is linear in
// its knot values), s_j knot j's estimated noise; at a knot G is that
// knot's own s, in the middle of an interval about 0.86 of it (the curve
// averages its neighbours). M_i is the model's error in the middle of
// interval i (0 at its knots: the curve passes through them), u the
// position in it. κ(n) = sqrt(1 + 4/(n−2) + 20/(n−2)²) widens for a noise
// estimated from few knots (1.11 at 21 knots, 1.89 at 5). B is the rank's
// median sync-path bound: an error common to all its knots (a delay
// asymmetry) shows in no residual; with 9 or more knots BarBias · B is at
// most BarBiasNoise · σ (the bound is its ceiling, D95). K_i(t) is the model's distance at t
// from the frequency steps the knots show around interval i that the
// model placed elsewhere or did not take (kinkAlternatives; 0 elsewhere).
//
// The noise is estimated from the knots themselves, not from the sync-path
// bound (a proven bound, but 10-100× the typical miss): each knot's
// leave-one-out residual r_j (its offset minus the cubic through up to two
// knots on each side, looResiduals) is, for independent knot errors of
// size σ, σ times a gain ρ_j set by the spacing (≈ 1.39 for equal
// spacing), plus the clock's bend over twice the spacing (≈ h⁴f⁗/6).
// Applying the leave-one-out operator once more cancels most of that bend
// (≈ (ωh)⁴/6 of it is left for a sine: 0.03 at 2 s knots on a 20 s sine)
// while the noise stays measurable, so σ comes from the twice-applied
// residuals r2_j divided by their exact noise gain for the actual spacing
// (adapted resyncs are not evenly spaced): their winsorised root mean
// square (robustScale), over the interior knots when there are 9 or more.
// σ never exceeds the median sync-path bound / BarZ (with five knots a
// bend and noise give the same single fourth difference; the bound caps
// what noise can be). With fewer than 9 knots σ is at least the
// once-applied residuals' (fewKnotNoise).
//
// A knot whose residual stands out of σ by BarOutlier in r and by
// BarOutlier2 in r2 (a sync disturbed by load: on real MPI 0.1-1.4 µs off
// among knots 10 ns off) gets its own residual as its noise (an isolated
// error E at knot j gives r_j ≈ E), never more than its own bound; the
// others get σ; a knot whose bound is BarLooseBound times the median and
// whose residual is over twice the noise's gets at least its bound / BarZ.
// M_i is at least the wander floor BarWander·sqrt(D·h_i³) with 6-8
// knots (D the frequency diffusion the secants show), and at least
// BarCurve times the largest excess of |r_j|/ρ_j over BarExcess·σ among the knots around interval i (a smooth bend: the
// spline misses by about h⁴f⁗/384 mid-interval where the residual holds
// h⁴f⁗/6), plus BarHinge·σ in an interval where the model took a
// frequency step (where the two lines meet is itself measured). Before
// all this the hinges of the steps the model took come off the knots:
// the model is not wrong there, and a step read as noise (a 1 ppm step
// inside an 8 s run gave 100 ns bars on 10 ns knots).
//
// Calibrated on the simulated knots of TestOffsetModel_ErrorBarsCoverTheTruth
// (every injected shape, Gaussian and heavy-tailed knot errors, 8 s and
// 40 s runs) and checked on real MPI with injected clocks
// (TestAccuracy_ResyncHoldsNonLinearClocks, make bench section 4).

// BarZ is the multiple of the carried noise G(t) the bar spans: 2.58 for
// 99 % of a Gaussian with σ known, more for σ estimated from 20 knots.
const BarZ = 3.2

// BarOutlier and BarOutlier2: a knot is disturbed when its leave-one-out
// residual exceeds BarOutlier times its noise's expected size and its
// twice-applied residual BarOutlier2 times (see BarZ).
const (
	BarOutlier  = 3.0
	BarOutlier2 = 2.0
)

// BarCurve is the share of the residuals' excess over BarExcess·σ that
// the model misses in the middle of an interval, BarHinge the σ added in
// an interval with a frequency step (see BarZ).
const (
	BarCurve  = 0.05
	BarExcess = 2.0
	BarHinge  = 2.0
)

// BarBias is the share of the median sync-path bound the bar allows for
// an error common to all of a rank's knots (a delay asymmetry the sync
// cannot see, and so neither can the residuals: 20-46 ns, 0.11-0.13 of
// the median bound, in real runs of 2 ranks), added in quadrature.
const BarBias = 0.155

// BarBiasNoise caps that share at this many times the knots' noise σ when
// σ comes from 9 or more knots (barInteriorFrom): the bound then serves as
// the ceiling only. Over TCP the sync-path bound (13-25 µs) is mostly the
// path's symmetric latency, and BarBias of it made bars of 2-7 µs on
// knots 15-1,100 ns off; there the knots' common error was at most 1.8 σ
// (0.006 of the bound), and the cap leaves a margin for their heavy
// tails (runs of knots off together: 10 σ left one trace at 99.3 %
// coverage, 5 σ three under 99 %). It bites only where the bound is over
// 77 σ: on emulated nodes the bound is 24-51 σ (as σ reads), and the
// bars there stay as they were but where σ reads low (D95).
const BarBiasNoise = 12.0

// barBiasNoise is BarBiasNoise; tests set it to +Inf for the rule before.
var barBiasNoise = BarBiasNoise

// BarWander is the floor of the model's miss M_i in the middle of an
// interval of length h, in units of sqrt(D·h³), D the frequency's
// diffusion the knots' secants show (wanderDiffusion), for runs of
// barWanderFrom up to barInteriorFrom knots: there the twice-applied
// residuals (σ) do not see a random walk's wander between knots and the
// once-applied ones hardly (on real MPI, 7 knots 2-4 s apart on a
// 0.05 ppm/√s walk: bars 46 ns, misses up to 82 ns, 90 % coverage). An
// integrated random walk misses straight lines mid-interval by
// sqrt(D·h³/48) = 0.144 sqrt(D·h³) rms; D from 4-5 secant changes is
// itself uncertain by a factor of several, hence the quantile and 0.5
// (0.35 left 1 run in 100 under 95 % coverage,
// TestErrorBars_CoverARandomWalkBetweenFewKnots). Not with 5 knots (σ
// takes the one fourth difference, capped by the bound: 100 % coverage
// on the 8 s runs already) nor from 9 (σ from 5+ interior residuals
// holds the wander). A smooth bend reads as a walk too: a 20 µs / 20 s
// sine on 7 knots, whose secants change by ppm but which the spline
// follows within 0.1 µs, gets bars of about 110× its median error (they
// covered 98 % of it without the floor).
// BarWanderQuantile is the quantile of the per-change estimates D is
// taken at.
const (
	BarWander         = 0.5
	BarWanderQuantile = 0.8
)

// barWanderFrom: the wander floor (BarWander) applies from this many
// knots up to barInteriorFrom.
const barWanderFrom = 6

// barInteriorFrom: with this many knots or more the two at each end do
// not enter the noise estimate.
const barInteriorFrom = 9

// BarLooseBound: a knot whose sync-path bound exceeds this many times
// its rank's median bound (a sync taken under worse conditions) and whose
// residual exceeds twice its noise's expected size may be off by its
// bound: its noise is at least bound / BarZ, so the bar there spans the
// bound (on real MPI with 4 ranks on 2 loaded cores, knots 1.1-2.0 µs off
// had bounds 1.5-2× the median and hid each other's residuals).
const BarLooseBound = 1.3

// looOp returns, per knot, the coefficients of its leave-one-out residual
// (looResiduals) on knots i−2 … i+2.
func looOp(ts []int64) [][5]float64 {
	n := len(ts)
	A := make([][5]float64, n)
	var xs [4]float64
	var idx [4]int
	for i := range n {
		k := 0
		for j := max(0, i-2); j <= min(n-1, i+2); j++ {
			if j != i {
				xs[k], idx[k] = float64(ts[j]-ts[i]), j
				k++
			}
		}
		if k < 2 {
			continue
		}
		A[i][2] = 1
		for a := range k {
			w := 1.0
			for b := range k {
				if b != a {
					w *= xs[b] / (xs[b] - xs[a])
				}
			}
			A[i][idx[a]-i+2] -= w
		}
	}
	return A
}

// applyLoo returns A·x for a leave-one-out operator A (looOp).
func applyLoo(A [][5]float64, x []float64) []float64 {
	y := make([]float64, len(x))
	for i := range x {
		for d := -2; d <= 2; d++ {
			if j := i + d; j >= 0 && j < len(x) {
				y[i] += A[i][d+2] * x[j]
			}
		}
	}
	return y
}

// errorBars is the error bar of the offset model through a rank's knots.
type errorBars struct {
	ts    []int64   // the knots the bars are built on (keptKnots)
	sigma float64   // the knots' typical noise (ns)
	noise []float64 // per knot: its estimated noise s_j (ns)
	gKnot []float64 // carried noise G at each knot (ns)
	gMid  []float64 // carried noise G at each interval's middle (ns)
	model []float64 // per interval: the model's error M_i at its middle (ns)
	scale float64   // BarZ · κ(n)
	bias  float64   // BarBias of the median sync-path bound (ns)
	// kinks: per interval, where the model's two lines meet (local ns) and
	// how much the slope changes there, when the kink rule took a
	// frequency step inside it (kinkBar); nil: none
	kinks []kinkAt
	// alts: per interval, the frequency steps the knots show there that
	// the model may have placed wrong or not taken (kinkAlternatives);
	// the bar covers the model's distance from each. nil: none
	alts  [][]altKink
	curve *offsetCurve // the model the bars are of (for alts)
}

// altKink is a frequency step the knots cannot rule out in one interval:
// from knot (t0, o0) the offset follows slope a up to tc, then slope b to
// knot (t1, o1) (tc ≥ t1: one line of slope a; tc ≤ t0: of slope b).
type altKink struct {
	t0, t1 int64
	o0, o1 float64
	a, b   float64
	tc     float64
}

// at is the alternative's offset at t.
func (k altKink) at(t int64) float64 {
	if float64(t) <= k.tc {
		return k.o0 + k.a*float64(t-k.t0)
	}
	return k.o1 - k.b*float64(k.t1-t)
}

// kinkAt is a frequency step the model took inside an interval: its two
// lines meet at t (local ns) and the slope changes by dslope there; t 0:
// none.
type kinkAt struct {
	t, dslope float64
}

// newErrorBars estimates the error bars of the model through the knots
// (see BarZ).
func newErrorBars(c *offsetCurve, bounds []float64) *errorBars {
	ts, off := c.ts, c.off
	alts := kinkAlternatives(c)
	hinged := len(c.hinges) > 0 && len(keptKnots(ts)) > 5
	if hinged {
		// The frequency steps the model took are no error of it: their
		// hinges come off the knots before the residuals are taken (a
		// step inside an 8 s run read as 100 ns of knot noise). Not with
		// five knots: their one fourth difference is all the evidence
		// of both the kink and the noise (a kink read into noise left
		// the bars of a linear clock at 98 %).
		off = append([]float64(nil), off...)
		for i, t := range ts {
			for _, h := range c.hinges {
				if x := float64(t) - h.t; x > 0 {
					off[i] -= h.dslope * x
				}
			}
		}
	}
	// the knots the curve is shaped by (a close knot's residual, over a
	// baseline of a few ms, says nothing of the noise)
	if keep := keptKnots(ts); len(keep) >= 3 && len(keep) < len(ts) {
		kts := make([]int64, len(keep))
		koff := make([]float64, len(keep))
		var kb []float64
		for k, i := range keep {
			kts[k], koff[k] = ts[i], off[i]
			if bounds != nil {
				kb = append(kb, bounds[i])
			}
		}
		ts, off, bounds = kts, koff, kb
	}
	n := len(ts)
	b := &errorBars{ts: ts, noise: make([]float64, n), model: make([]float64, max(0, n-1)), curve: c}
	if len(alts) == n-1 {
		b.alts = alts
	}
	k := 1 / float64(max(n-2, 1))
	b.scale = BarZ * math.Sqrt(1+4*k+20*k*k)
	A := looOp(ts)
	r := applyLoo(A, off)
	rho := make([]float64, n) // noise gain of r_j
	for i := range n {
		for _, w := range A[i] {
			rho[i] += w * w
		}
		rho[i] = math.Sqrt(rho[i])
	}
	var z2 []float64 // per knot: |r2_j| over its noise gain
	b.sigma, z2 = looNoise(ts, A, r)
	if n < barInteriorFrom {
		b.sigma = math.Max(b.sigma, fewKnotNoise(r, rho))
	}
	// A proven bound caps the noise: residuals beyond what knot errors
	// within it could make are the clock's bend (with five knots a bend
	// and noise give the same single fourth difference).
	var bs []float64
	for _, v := range bounds {
		if v > 0 {
			bs = append(bs, v)
		}
	}
	bmed := 0.0
	if len(bs) > 0 {
		bmed = medianOf(bs)
		b.sigma = math.Min(b.sigma, bmed/BarZ)
		b.bias = BarBias * bmed
		if n >= barInteriorFrom {
			// the bound is only the ceiling of the common error: over
			// TCP it is mostly the path's symmetric latency (BarBiasNoise)
			b.bias = math.Min(b.bias, barBiasNoise*b.sigma)
		}
	}
	// Disturbed knots: a knot whose residual stands out of the noise in
	// both the once- and the twice-applied residuals (a smooth bend only
	// in the first) gets its residual as its own noise (an isolated error
	// E at knot j gives r_j ≈ E), never more than its own bound.
	// (σ estimated again without the disturbed knots' neighbourhoods
	// was tried: lower bars far from them, but on real runs with adapted
	// intervals the lower σ left 96-99 % coverage where this has 100 %)
	disturbed := func(j int) bool {
		return rho[j] > 0 && math.Abs(r[j]) > BarOutlier*rho[j]*b.sigma && z2[j] > BarOutlier2*b.sigma
	}
	excess := make([]float64, n)
	for j := range n {
		b.noise[j] = b.sigma
		if rho[j] == 0 {
			continue
		}
		if disturbed(j) {
			b.noise[j] = math.Abs(r[j])
			if len(bounds) == n && bounds[j] > 0 {
				b.noise[j] = math.Min(b.noise[j], math.Max(b.sigma, bounds[j]))
				// What the knots' proven bounds cannot make of the
				// residual is the clock's bend (a 20 µs / 20 s sine
				// between knots 4-16 s apart, where the bend does not
				// cancel in the twice-applied residual either).
				if e := math.Abs(r[j]) - boundGain(A, bounds, j); e > 0 {
					excess[j] = e / rho[j]
				}
			}
			continue
		}
		excess[j] = max(0, math.Abs(r[j])/rho[j]-BarExcess*b.sigma)
	}
	// a knot taken under worse conditions than its rank's typical one
	// (BarLooseBound)
	for j := range n {
		if j < len(bounds) && bmed > 0 && bounds[j] > BarLooseBound*bmed && rho[j] > 0 && math.Abs(r[j]) > 2*rho[j]*b.sigma {
			b.noise[j] = math.Max(b.noise[j], bounds[j]/BarZ)
		}
	}
	// the model's share: BarCurve of the residuals' excess over the
	// noise around the interval (a smooth bend), each scaled from the
	// geometry the knot's residual was taken over to the interval's
	// length (bendScale: the knots are unevenly spaced where the resync
	// budget or the adaptation changed the interval)
	for i := range b.model {
		m := 0.0
		h := float64(ts[i+1] - ts[i])
		for j := max(0, i-1); j <= min(n-1, i+2); j++ {
			m = math.Max(m, excess[j]*bendScale(ts, j, h))
		}
		b.model[i] = BarCurve * m
	}
	spreadModel(ts, b.model)
	if hinged {
		// where the kink sits is itself measured (from three secants of
		// noisy knots): the intervals next to a hinge get BarHinge σ more,
		// and an interval with the kink inside it the two lines' own
		// noise (kinkBar)
		for _, h := range c.hinges {
			for i := range b.model {
				if float64(ts[i]) <= h.t+1 && h.t-1 <= float64(ts[i+1]) {
					b.model[i] += BarHinge * b.sigma
				}
				if i >= 1 && i+2 < n && float64(ts[i]) < h.t && h.t < float64(ts[i+1]) {
					if b.kinks == nil {
						b.kinks = make([]kinkAt, n-1)
					}
					b.kinks[i] = kinkAt{h.t, h.dslope}
				}
			}
		}
	}
	// the wander floor: what a random-walk frequency, as large as the
	// knots' secants show, leaves between knots (BarWander)
	// (from barInteriorFrom knots on, only over the intervals at least
	// barUnevenFrom times the median one: the residuals at the short
	// spacings do not hold the wander over the long ones)
	if long := unevenFloor(ts); n >= barWanderFrom && (n < barInteriorFrom || long > 0) {
		d := wanderDiffusion(ts, off, b.noise)
		for i := range b.model {
			h := float64(ts[i+1] - ts[i])
			if n >= barInteriorFrom && h < long {
				continue
			}
			b.model[i] = math.Max(b.model[i], BarWander*math.Sqrt(d*h)*h)
		}
	}
	b.gKnot, b.gMid = noiseGains(ts, b.noise)
	return b
}

// spreadModel carries the model's share from an interval to a longer
// neighbour, scaled as a smooth bend's miss grows (h⁴): M_i ≥
// M_j·(h_i/h_j)⁴ for i next to j with h_i > h_j, from both sides in turn
// so that it passes along a run of lengthening intervals. Where the resync
// budget stretches the intervals after short ones (2, 4, 8 s ...), the
// knots around a long interval show the bend at their own spacing only: on
// a 20 µs / 20 s sine the short intervals' bars of 0.1 µs were carried
// unchanged to an 8 s interval missed by 7.6 µs (simulated; 82.6 %
// coverage on the 4-rank sine in make bench). A random walk's miss grows
// only as h^1.5, so there the bar is generous. Intervals within
// spreadFrom of each other (a meeting's wait varies them by a few %) are
// left as they are.
func spreadModel(ts []int64, m []float64) {
	h := func(i int) float64 { return float64(ts[i+1] - ts[i]) }
	grow := func(i, j int) {
		if r := h(i) / h(j); r >= spreadFrom {
			m[i] = math.Max(m[i], m[j]*r*r*r*r)
		}
	}
	for i := 1; i < len(m); i++ {
		grow(i, i-1)
	}
	for i := len(m) - 2; i >= 0; i-- {
		grow(i, i+1)
	}
}

// unevenFloor is the interval length from which the wander floor
// (BarWander) applies in runs of barInteriorFrom knots or more:
// barUnevenFrom times the median interval when some interval is that long
// (the resync budget stretched the spacing), else 0 (none).
func unevenFloor(ts []int64) float64 {
	hs := make([]float64, 0, len(ts))
	for i := 1; i < len(ts); i++ {
		hs = append(hs, float64(ts[i]-ts[i-1]))
	}
	long := barUnevenFrom * medianOf(hs) // sorts hs
	if len(hs) == 0 || hs[len(hs)-1] < long {
		return 0
	}
	return long
}

// barUnevenFrom: see unevenFloor.
const barUnevenFrom = 2.0

// spreadFrom: spreadModel carries the model's share to an interval at
// least this many times longer than its neighbour.
const spreadFrom = 1.25

// boundGain is the largest leave-one-out residual of knot j that knot
// errors within their bounds can make: Σ_q |A_jq| · bound_q (0 when a
// bound is unknown: then nothing is proven).
func boundGain(A [][5]float64, bounds []float64, j int) float64 {
	g := 0.0
	for d := -2; d <= 2; d++ {
		if q := j + d; q >= 0 && q < len(bounds) && A[j][d+2] != 0 {
			if bounds[q] <= 0 {
				return math.Inf(1)
			}
			g += math.Abs(A[j][d+2]) * bounds[q]
		}
	}
	return g
}

// bendScale is how much more (or less) the model misses in the middle of
// an interval of length h than the leave-one-out residual of knot j shows
// of the same bend, relative to evenly spaced knots (where BarCurve is
// calibrated: 1 when knot j's neighbours are h apart). For a smooth bend
// the residual is f⁗/24 · Π|t_q − t_j| over the four knots it is
// predicted from, and the spline's miss mid-interval f⁗h⁴/384: so the
// scale is 4h⁴/Π (evenly spaced, Π = 4h⁴). Where the interval is shorter
// than the residual's geometry the bend shrinks more slowly for a random
// walk (its miss grows as h^1.5, not h⁴): the scale then goes down as the
// 3/8 power only. Knots with fewer than two neighbours each side (the
// ends: a lower-order prediction) keep 1. In a budget-stretched run the
// long interval after short ones got the short ones' bar (82.6 %
// coverage on a 20 µs / 20 s sine in make bench; simulated, 38 %).
func bendScale(ts []int64, j int, h float64) float64 {
	if j < 2 || j+2 >= len(ts) {
		return 1
	}
	p := 1.0
	for q := j - 2; q <= j+2; q++ {
		if q != j {
			p *= math.Abs(float64(ts[q] - ts[j]))
		}
	}
	if p <= 0 {
		return 1
	}
	r := 4 * h * h * h * h / p
	if r < 1 {
		return math.Pow(r, 3.0/8)
	}
	return r
}

// wanderDiffusion estimates the diffusion D (ns²/ns³: the variance a
// random-walk frequency gains per ns) from the changes of the knots'
// secant frequencies: over intervals a and b the change has variance
// D(a+b)/3 plus the knots' noise s carried through
// (s₋²/a² + s₀²(1/a+1/b)² + s₊²/b²), which is taken off. Each change gives
// one estimate; D is their BarWanderQuantile quantile (the largest of up
// to five: one squared change spreads like χ²₁).
func wanderDiffusion(ts []int64, off, s []float64) float64 {
	n := len(ts)
	if n < 3 {
		return 0
	}
	var ds []float64
	for j := 1; j < n-1; j++ {
		a, b := float64(ts[j]-ts[j-1]), float64(ts[j+1]-ts[j])
		df := (off[j+1]-off[j])/b - (off[j]-off[j-1])/a
		noise := s[j-1]*s[j-1]/(a*a) + s[j]*s[j]*(1/a+1/b)*(1/a+1/b) + s[j+1]*s[j+1]/(b*b)
		ds = append(ds, max(0, df*df-noise)/((a+b)/3))
	}
	sort.Float64s(ds)
	return ds[min(len(ds)-1, int(BarWanderQuantile*float64(len(ds))))]
}

// looNoise estimates the knots' typical noise σ from the twice-applied
// leave-one-out residuals r2 (r the once-applied ones), each divided by
// its exact noise gain for the spacing (see BarZ): the winsorised root
// mean square (robustScale) of the interior knots' (the two at each end,
// extrapolations, keep more of a bend) once there are barInteriorFrom
// knots. It returns σ and, per knot, |r2_j| over its gain.
func looNoise(ts []int64, A [][5]float64, r []float64) (sigma float64, z []float64) {
	n := len(ts)
	z = make([]float64, n)
	if n < 3 {
		return 0, z
	}
	zs := make([]float64, 0, n)
	for i := range n {
		// r2_i = Σ_k A_ik Σ_j A_kj e_j: the gain is the norm of row i of A·A
		var row [9]float64
		for d := -2; d <= 2; d++ {
			k := i + d
			if k < 0 || k >= n {
				continue
			}
			for e := -2; e <= 2; e++ {
				if j := k + e; j >= 0 && j < n {
					row[d+e+4] += A[i][d+2] * A[k][e+2]
				}
			}
		}
		v := 0.0
		for _, w := range row {
			v += w * w
		}
		if v > 0 {
			z[i] = math.Abs(r2At(A, r, i)) / math.Sqrt(v)
			if n < barInteriorFrom || i >= 2 && i < n-2 {
				zs = append(zs, z[i])
			}
		}
	}
	if len(zs) == 0 {
		return 0, z
	}
	return robustScale(zs), z
}

// fewKnotNoise is the knots' noise from the once-applied residuals r
// (noise gains rho): their winsorised RMS (robustScale). With fewer than
// barInteriorFrom knots σ is at least this: the twice-applied residuals of
// 5-8 knots share most of their knots, so their σ has 1.3-2.2 effective
// degrees of freedom (Satterthwaite, from the spacing) and read under a
// third of the true noise in 1 run of 10 (simulated, linear clock); the
// once-applied ones keep more of them and of a bend, which errs wide.
// On 8 s runs with bounds of 8-12σ, runs under 99 % coverage 9-23 → 3-6
// of 1000 (TestErrorBars_CoverEveryRunWithFewKnots).
func fewKnotNoise(r, rho []float64) float64 {
	var zs []float64
	for j := range r {
		if rho[j] > 0 {
			zs = append(zs, math.Abs(r[j])/rho[j])
		}
	}
	if len(zs) == 0 {
		return 0
	}
	return robustScale(zs)
}

// robustScale is σ of values |σ·Z| (Z standard normal): their root mean
// square winsorised at 2.5 times the median's estimate (E[min(Z², 6.25)]
// = 0.9775); the median alone spreads by a third over 20 knots, this by a
// quarter. zs is sorted in place.
func robustScale(zs []float64) float64 {
	sort.Float64s(zs)
	med := zs[len(zs)/2] / 0.6745
	ss := 0.0
	for _, v := range zs {
		v = math.Min(v, 2.5*med)
		ss += v * v
	}
	return math.Sqrt(ss / float64(len(zs)) / 0.9775)
}

// r2At is the twice-applied leave-one-out residual at knot i, r the
// once-applied ones.
func r2At(A [][5]float64, r []float64, i int) float64 {
	v := 0.0
	for d := -2; d <= 2; d++ {
		if j := i + d; j >= 0 && j < len(r) {
			v += A[i][d+2] * r[j]
		}
	}
	return v
}

// noiseGains returns the knots' noise s carried to every knot and every
// interval's middle by the default model: sqrt(Σ_j L_j(t)² s_j²), L_j the
// curve through a unit error at knot j alone (a cubic spline is linear in
// its knot values; its response to one knot decays by ≈ 0.27 per knot, so
// a window of 4 knots each side, 0.5 %, suffices). A short interval next
// to long ones (the finalize resync 0.2 s before the full sync's knot)
// makes the ends of the spline swing: the gain says so.
func noiseGains(ts []int64, s []float64) (atKnot, atMid []float64) {
	n := len(ts)
	atKnot = make([]float64, n)
	atMid = make([]float64, n-1)
	const w = 4
	for j := range n {
		lo, hi := max(0, j-w), min(n-1, j+w)
		sub := ts[lo : hi+1]
		v := make([]float64, len(sub))
		v[j-lo] = 1
		c := smoothCurve(sub, v, SplineScheme) // the knots given: already the kept ones
		s2 := s[j] * s[j]
		for k := range sub {
			atKnot[lo+k] += v[k] * v[k] * s2
			if k+1 < len(sub) {
				x := c.at(k, sub[k]+(sub[k+1]-sub[k])/2)
				atMid[lo+k] += x * x * s2
			}
		}
	}
	for i := range atKnot {
		atKnot[i] = math.Sqrt(atKnot[i])
	}
	for i := range atMid {
		atMid[i] = math.Sqrt(atMid[i])
	}
	return atKnot, atMid
}

// at is the bar at t. Beyond the end knots it grows as a slope error of
// bar/h would (h the end interval).
func (b *errorBars) at(t int64) float64 {
	ts := b.ts
	n := len(ts)
	switch {
	case t < ts[0]:
		return b.in(0, ts[0]) * (1 + float64(ts[0]-t)/float64(ts[1]-ts[0]))
	case t > ts[n-1]:
		return b.in(n-2, ts[n-1]) * (1 + float64(t-ts[n-1])/float64(ts[n-1]-ts[n-2]))
	}
	i := sort.Search(n, func(i int) bool { return ts[i] >= t }) // ts[i-1] < t <= ts[i]
	return b.in(max(0, i-1), t)
}

// in is the bar at t in interval i (ts[i] ≤ t ≤ ts[i+1]).
func (b *errorBars) in(i int, t int64) float64 {
	ts := b.ts
	u := float64(t-ts[i]) / float64(ts[i+1]-ts[i])
	g := (1-u)*b.gKnot[i] + u*b.gKnot[i+1] + 4*u*(1-u)*(b.gMid[i]-(b.gKnot[i]+b.gKnot[i+1])/2)
	if b.kinks != nil && b.kinks[i].t > 0 {
		g = math.Max(g, b.kinkNoise(i, float64(t)))
	}
	return math.Hypot(b.scale*g, b.bias) + 4*u*(1-u)*b.model[i] + b.altMiss(i, t)
}

// altMiss is the model's largest distance at t in interval i from the
// frequency steps the knots cannot rule out there (kinkAlternatives).
func (b *errorBars) altMiss(i int, t int64) float64 {
	if b.alts == nil || len(b.alts[i]) == 0 {
		return 0
	}
	c := b.curve
	j := sort.Search(len(c.ts), func(j int) bool { return c.ts[j] >= t })
	m := c.at(min(max(0, j-1), len(c.ts)-2), t)
	miss := 0.0
	for _, k := range b.alts[i] {
		miss = math.Max(miss, math.Abs(m-k.at(t)))
	}
	return miss
}

// kinkAlternatives returns, per interval of the knots the bars are built
// on (keptKnots, as newErrorBars), the frequency steps the knots show
// there that the model may have placed elsewhere or not taken at all:
// wherever the secants on either side of an interval differ by more
// than KinkRatio times the change next to them (on the sides that have
// one: next to an end knot only one does, where the model takes no
// kink) and by more than KinkRatio times the typical bend, the two lines
// through those secants, meeting inside the interval where its own
// secant puts them (or the interval's chord when they cannot), and the
// chords of the intervals on either side. nil when there is none.
//
// The kink rules of the model (smoothCurve) judge a step by both sides,
// and a step near a knot is taken at the knot: in 8 s runs of 5-8 knots
// a 1 ppm step next to an end knot left the spline ringing by up to
// 0.4 µs through the end interval, and a step 0.2 s before the knot the
// model took it at left the straight interval 0.19 µs off; the bars
// there covered 93-96 % of a run (TestErrorBars_CoverEveryRunWithFewKnots).
func kinkAlternatives(c *offsetCurve) [][]altKink {
	keep := keptKnots(c.ts)
	if len(keep) < 3 {
		keep = keep[:0]
		for i := range c.ts {
			keep = append(keep, i)
		}
	}
	n := len(keep)
	if n < 4 {
		return nil
	}
	ts := make([]int64, n)
	off := make([]float64, n)
	for k, i := range keep {
		ts[k], off[k] = c.ts[i], c.off[i]
	}
	h := make([]float64, n-1)
	m := make([]float64, n-1)
	for i := range h {
		h[i] = float64(ts[i+1] - ts[i])
		m[i] = (off[i+1] - off[i]) / h[i]
	}
	bends := make([]float64, 0, n-2)
	for j := 0; j+1 < n-1; j++ {
		bends = append(bends, math.Abs(m[j+1]-m[j])*(h[j]+h[j+1])/2)
	}
	typical := medianOf(bends)
	chord := func(i int) altKink {
		return altKink{ts[i], ts[i+1], off[i], off[i+1], m[i], m[i], float64(ts[i+1])}
	}
	var alts [][]altKink
	for j := 1; j+1 < n-1; j++ {
		a, b := m[j-1], m[j+1]
		jump := math.Abs(b - a)
		around, sides := 0.0, 0
		if j >= 2 {
			around += math.Abs(m[j-1] - m[j-2])
			sides++
		}
		if j+2 < n-1 {
			around += math.Abs(m[j+2] - m[j+1])
			sides++
		}
		if sides == 0 || jump <= KinkRatio*around || jump*h[j] <= KinkRatio*typical {
			continue
		}
		if alts == nil {
			alts = make([][]altKink, n-1)
		}
		k := chord(j)
		if u := (m[j] - b) / (a - b); u > 0 && u < 1 {
			k.a, k.b, k.tc = a, b, float64(ts[j])+u*h[j]
		}
		alts[j] = append(alts[j], k)
		alts[j-1] = append(alts[j-1], chord(j-1))
		alts[j+1] = append(alts[j+1], chord(j+1))
	}
	return alts
}

// kinkNoise is the knots' noise carried to t (ns, as G) in interval i, where the
// model took a frequency step (smoothCurve's kink rule): there the model
// is two straight lines, the left one through knots i−1 and i extended
// forward, the right one through knots i+1 and i+2 extended back, meeting
// where they cross. Each line's error at t grows as it is extrapolated:
// (1+v)²s_i² + v²s_{i−1}², v the distance from knot i in units of the
// interval before (likewise on the right), up to √5 times a knot's noise
// at the far end, where the spline's gain G is below one. And the
// crossing itself moves by the two lines' difference there over the
// slope change: between the true step and the crossing the model follows
// the wrong line, off by up to that difference. So within BarZ·κ times
// the crossing's spread of it (in time: its noise over the slope change)
// the gain also counts both lines' noise at the crossing. In the
// simulated 1 ppm step with knots 2.7-4 s apart the bars without this
// covered 98.1-98.9 % of the probes within one interval of the step
// (99.7 % elsewhere; TestErrorBars_CoverAFrequencyStepInsideAnInterval:
// now 98.8-99.6 %). make bench's 4-rank step row read 95.5 %: what two
// ranks of three missing the step's interval of 15 would give.
func (b *errorBars) kinkNoise(i int, t float64) float64 {
	ts, s := b.ts, b.noise
	left := func(x float64) float64 { // variance of the left line at x
		v := (x - float64(ts[i])) / float64(ts[i]-ts[i-1])
		return (1+v)*(1+v)*s[i]*s[i] + v*v*s[i-1]*s[i-1]
	}
	right := func(x float64) float64 {
		w := (float64(ts[i+1]) - x) / float64(ts[i+2]-ts[i+1])
		return (1+w)*(1+w)*s[i+1]*s[i+1] + w*w*s[i+2]*s[i+2]
	}
	k := b.kinks[i]
	side := left(t)
	if t > k.t {
		side = right(t)
	}
	cross := left(k.t) + right(k.t)
	v := side
	if k.dslope == 0 || math.Abs(t-k.t) <= b.scale*math.Sqrt(cross)/math.Abs(k.dslope) {
		v += cross
	}
	return math.Sqrt(v)
}

// medianOf is the median of v (sorted in place; 0 when empty).
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

package correct

import (
	"math"
	"sort"
)

// The offset model between sync knots (issue 38 §1, docs/explanation/decisions.md
// "A smooth offset model through the sync knots").
//
// The knots give a rank's offset (local − reference) at the end of each
// sync epoch. Between knots the offset follows a cubic Hermite curve: in
// interval i (knots i and i+1, width h, secant slope m) with u = (t−t_i)/h,
//
//	off(t) = o_i + h·u·[m + (1−u)·((d_i − m)·(1−u) − (d_{i+1} − m)·u)]
//
// which is the Hermite cubic with value o_i, o_{i+1} and derivative d_i,
// d_{i+1} at the ends, written as the chord plus a correction that
// vanishes at both knots (so the curve still passes through every knot, as
// the piecewise-linear one did). The derivatives come from a C² cubic
// spline through the knots (Scheme SplineScheme), chosen by the
// measurements in TestOffsetModel_SchemesOnInjectedShapes: with knots 2 s
// apart a straight line through a 20 µs / 20 s sine misses by ≈ 0.99 µs,
// the spline by ≈ 0.05 µs, and a 1 ppm frequency step inside an interval
// costs the spline at most ≈ 0.2 µs instead of up to 0.5 µs.
//
// Noisy knots: a derivative estimated from knots close together amplifies
// their measurement error (a 10 ns miss over a 100 ms interval is a slope
// error of 1e-7, which bends a 2 s interval by ≈ 30 ns). So knots much
// closer than the median spacing do not shape the curve (keptKnots), an
// end interval much longer than its neighbour leaves along its own
// secant (splineDerivs, LongEnd), and an interval LongInterval times as
// wide as its neighbour takes its slope at the knot between them at its
// own scale unless the spline's stands out of the knots' noise
// (longIntervalEnds).

// DefaultScheme is the offset model of --clock interp (and refined).
const DefaultScheme = SplineKinkScheme

// Scheme is how the knots' derivatives of the offset model are chosen.
type Scheme int

// Offset model schemes (all interpolate the knots).
const (
	// SplineScheme: a C² cubic spline, ends clamped to the parabola
	// through the first (last) three knots. The default of --clock interp.
	SplineScheme Scheme = iota
	// LinearScheme: straight lines between knots (--clock linear; the
	// interp of issue 10).
	LinearScheme
	// BesselScheme: each knot's derivative from the parabola through it
	// and its two neighbours (C¹ only).
	BesselScheme
	// AkimaScheme: Akima's weights on the neighbouring secants (follows a
	// kink; C¹ only).
	AkimaScheme
	// PCHIPScheme: Fritsch–Carlson monotone cubic (flat at every local
	// extremum of the knots).
	PCHIPScheme
	// SplineKinkScheme: SplineScheme, except in an interval whose
	// neighbours' secants differ by far more than their own neighbours'
	// (a frequency step inside it): there the two neighbouring lines,
	// extended to where they meet.
	SplineKinkScheme
)

func (s Scheme) String() string {
	switch s {
	case SplineScheme:
		return "spline"
	case LinearScheme:
		return "linear"
	case BesselScheme:
		return "bessel"
	case AkimaScheme:
		return "akima"
	case PCHIPScheme:
		return "pchip"
	case SplineKinkScheme:
		return "spline+kinks"
	}
	return "scheme?"
}

// knotDerivs returns the derivative of the offset model at every knot
// (len(ts) ≥ 2; ts strictly increasing).
func knotDerivs(ts []int64, off []float64, s Scheme) []float64 {
	return knotDerivsFrom(ts, off, s, math.NaN())
}

// knotDerivsFrom is knotDerivs with the first knot's measured slope
// (splineDerivsFrom; NaN: none).
func knotDerivsFrom(ts []int64, off []float64, s Scheme, firstSlope float64) []float64 {
	n := len(ts)
	h := make([]float64, n-1)
	m := make([]float64, n-1)
	for i := range h {
		h[i] = float64(ts[i+1] - ts[i])
		m[i] = (off[i+1] - off[i]) / h[i]
	}
	d := make([]float64, n)
	if s == LinearScheme || n == 2 {
		// with two knots every scheme is the straight line
		for i := range d {
			d[i] = m[min(i, n-2)]
		}
		if s == LinearScheme {
			return nil
		}
		return d
	}
	// parabola through knots 0,1,2 (n-3..n-1) at the end knots
	endDeriv := func(h0, h1, m0, m1 float64) float64 {
		return ((2*h0+h1)*m0 - h0*m1) / (h0 + h1)
	}
	d[0] = endDeriv(h[0], h[1], m[0], m[1])
	d[n-1] = endDeriv(h[n-2], h[n-3], m[n-2], m[n-3])
	switch s {
	case BesselScheme:
		for i := 1; i < n-1; i++ {
			d[i] = (h[i]*m[i-1] + h[i-1]*m[i]) / (h[i-1] + h[i])
		}
	case AkimaScheme:
		// secants relative to their mean, so that a constant drift
		// (which all share) does not enter the weights
		for i := 1; i < n-1; i++ {
			var w1, w2 float64
			if i+1 < n-1 {
				w1 = math.Abs(m[i+1] - m[i])
			}
			if i-2 >= 0 {
				w2 = math.Abs(m[i-1] - m[i-2])
			}
			if w1+w2 == 0 {
				d[i] = (h[i]*m[i-1] + h[i-1]*m[i]) / (h[i-1] + h[i])
			} else {
				d[i] = (w1*m[i-1] + w2*m[i]) / (w1 + w2)
			}
		}
	case PCHIPScheme:
		for i := 1; i < n-1; i++ {
			if m[i-1]*m[i] <= 0 {
				d[i] = 0
				continue
			}
			w1, w2 := 2*h[i]+h[i-1], h[i]+2*h[i-1]
			d[i] = (w1 + w2) / (w1/m[i-1] + w2/m[i])
		}
	case SplineScheme, SplineKinkScheme:
		return splineDerivsFrom(h, m, nil, firstSlope)
	}
	return d
}

// hermite is the offset at local time t in interval [t0, t1] with values
// o0, o1 and derivatives d0, d1 (chord plus a correction that is 0 at
// both ends).
func hermite(t, t0, t1 int64, o0, o1, d0, d1 float64) float64 {
	h := float64(t1 - t0)
	x := float64(t - t0)
	u := x / h
	m := (o1 - o0) / h
	return o0 + x*(m+(1-u)*((d0-m)*(1-u)-(d1-m)*u))
}

// hermiteSlope is the derivative of hermite at t: d0 at t0, d1 at t1.
func hermiteSlope(t, t0, t1 int64, o0, o1, d0, d1 float64) float64 {
	h := float64(t1 - t0)
	u := float64(t-t0) / h
	m := (o1 - o0) / h
	return m + (d0-m)*(1-u)*(1-3*u) - (d1-m)*u*(2-3*u)
}

// splineDerivs returns the knot derivatives of the C² cubic spline with
// not-a-knot ends (de Boor; scipy's CubicSpline default) through knots
// with interval widths h and secant slopes m (len(h) ≥ 2). fixed, when not
// nil, holds derivatives to keep (NaN: free): the spline is then C² only
// between fixed knots (each run between them a clamped spline).
func splineDerivs(h, m, fixed []float64) []float64 {
	return splineDerivsFrom(h, m, fixed, math.NaN())
}

// splineDerivsFrom is splineDerivs where the first knot's slope was
// measured (firstSlope: the init sync's fitted slope; NaN: none): a long
// first interval starts with it, limited by the secants next to it
// (longEndSlope).
func splineDerivsFrom(h, m, fixed []float64, firstSlope float64) []float64 {
	n := len(h) + 1
	d := make([]float64, n)
	if n == 3 && fixed == nil { // one parabola through the three knots
		d[0] = ((2*h[0]+h[1])*m[0] - h[0]*m[1]) / (h[0] + h[1])
		d[2] = ((2*h[1]+h[0])*m[1] - h[1]*m[0]) / (h[0] + h[1])
		d[1] = (h[1]*m[0] + h[0]*m[1]) / (h[0] + h[1])
		return d
	}
	// tridiagonal rows: a[i]·d[i-1] + b[i]·d[i] + c[i]·d[i+1] = r[i]
	a := make([]float64, n)
	b := make([]float64, n)
	c := make([]float64, n)
	r := make([]float64, n)
	for i := 1; i < n-1; i++ {
		a[i], b[i], c[i] = h[i], 2*(h[i-1]+h[i]), h[i-1]
		r[i] = 3 * (h[i]*m[i-1] + h[i-1]*m[i])
	}
	if n == 3 { // fixed ends: clamp to the end parabolas' slopes
		b[0], r[0] = 1, ((2*h[0]+h[1])*m[0]-h[0]*m[1])/(h[0]+h[1])
		b[2], r[2] = 1, ((2*h[1]+h[0])*m[1]-h[1]*m[0])/(h[0]+h[1])
	} else {
		// not-a-knot: the third derivative is continuous at knots 1 and n-2
		s := h[0] + h[1]
		b[0], c[0] = h[1], s
		r[0] = ((h[0]+2*s)*h[1]*m[0] + h[0]*h[0]*m[1]) / s
		s = h[n-2] + h[n-3]
		a[n-1], b[n-1] = s, h[n-3]
		r[n-1] = (h[n-2]*h[n-2]*m[n-3] + (2*s+h[n-2])*h[n-3]*m[n-2]) / s
	}
	for i, v := range fixed {
		if !math.IsNaN(v) {
			a[i], b[i], c[i], r[i] = 0, 1, 0, v
		}
	}
	// A long end interval (the knot of MPI_Finalize after short adapted
	// intervals): not-a-knot extends the neighbouring interval's cubic
	// over it, which multiplies the close knots' noise by the ratio of the
	// widths cubed (simulated: 2-25x the straight line's worst error at
	// 10-250 ns of knot noise). There the end leaves along its own
	// secant instead (decisions.md D56).
	if fixed == nil || math.IsNaN(fixed[0]) {
		if h[0] >= LongEnd*h[1] {
			a[0], b[0], c[0], r[0] = 0, 1, 0, longEndSlope(h, m, firstSlope)
		}
	}
	if fixed == nil || math.IsNaN(fixed[n-1]) {
		if h[n-2] >= LongEnd*h[n-3] {
			a[n-1], b[n-1], c[n-1], r[n-1] = 0, 1, 0, m[n-2]
		}
	}
	// Thomas algorithm
	for i := 1; i < n; i++ {
		w := a[i] / b[i-1]
		b[i] -= w * c[i-1]
		r[i] -= w * r[i-1]
	}
	d[n-1] = r[n-1] / b[n-1]
	for i := n - 2; i >= 0; i-- {
		d[i] = (r[i] - c[i]*d[i+1]) / b[i]
	}
	return d
}

// LongEnd: an end interval at least this many times as wide as its
// neighbour leaves the spline along its own secant (splineDerivs).
const LongEnd = 2.0

// LongInterval: an interval at least this many times as wide as its
// neighbour takes its slope at the knot between them at its own scale
// where the spline's is within its noise of it (longIntervalEnds). The spline amplifies the short
// side's noise σ by about 0.3·σ times the width ratio there; at twice
// (the adaptation halving the interval, a costly resync's longer gap)
// that is 0.6σ, and over all knots a 20 µs / 20 s sine's bend at 2-4 s
// spacing reads as noise to knotNoise (0.17 → 0.38 µs off with exact
// knots on 1.5 s then 3.8 s intervals).
const LongInterval = 4.0

// longIntervalSlope is the derivative at knot i, the near end of the
// long interval long (i or i−1; widths h, secants m): the parabola through
// the long interval's far knot, knot i, and the knot on the other side of
// i that lies at least the long interval's width H away (the farthest
// there is when none does; not beyond a knot whose derivative is fixed,
// a kink's), so that every knot it rests on is about H from knot i and
// their noise σ makes a slope error of about σ/H, not σ over the short
// width. On a smooth clock the parabola's slope misses by about the third
// derivative times H²/6, as a spline's would at spacing H.
func longIntervalSlope(h, m, fixed []float64, i, long int) float64 {
	H, mL := h[long], m[long]
	var span, sum float64
	if long == i { // the other side is to the left: intervals i-1, i-2, ...
		for k := i - 1; k >= 0; k-- {
			span += h[k]
			sum += h[k] * m[k]
			if span >= H || (fixed != nil && !math.IsNaN(fixed[k])) {
				break
			}
		}
	} else { // to the right: intervals i, i+1, ...
		for k := i; k < len(h); k++ {
			span += h[k]
			sum += h[k] * m[k]
			if span >= H || (fixed != nil && !math.IsNaN(fixed[k+1])) {
				break
			}
		}
	}
	// the parabola's derivative at its middle knot: each side's secant
	// weighted by the other side's width
	return (span*mL + H*sum/span) / (span + H)
}

// longIntervalEnds returns, per interval, the derivatives its Hermite
// curve takes at its start and end instead of the knots' (d: the
// spline's; NaN: the knot's), or nil when none differ. A long interval
// next to short ones (the knot of MPI_Finalize after short adapted
// intervals, a resync after the adaptation lengthened the interval):
// the spline's derivative at the knot between them is that of the short
// intervals' secants, whose noise (σ over the short width) the long
// interval's Hermite curve multiplies by its own width: 1 µs knot noise
// over TCP with knots 50 ms apart bent a 900 ms interval 2.6 µs off. The
// long interval starts (ends) there with the derivative estimated at its
// own scale (longIntervalSlope), moved towards the spline's by as much as
// the spline's stands out of its own noise (nearKnotSlope): with exact or
// quiet knots the spline's stands (a parabola over the long interval's
// scale misses a 20 µs / 20 s sine by up to 3 µs with 4 s intervals). The
// short intervals keep the spline's derivative, so the curve may turn at
// such a knot by about the short knots' slope noise (decisions.md D85).
// fixed marks the kink rules' knots (NaN: free; nil: none), which keep
// theirs.
func longIntervalEnds(h, m, fixed, d []float64) [][2]float64 {
	n := len(h) + 1
	if n < 4 || d == nil {
		return nil
	}
	var ends [][2]float64
	sigma := -1.0
	for i := 1; i < n-1; i++ {
		if fixed != nil && !math.IsNaN(fixed[i]) {
			continue
		}
		long, side := -1, 0
		switch {
		case h[i] >= LongInterval*h[i-1]:
			long, side = i, 0
		case h[i-1] >= LongInterval*h[i]:
			long, side = i-1, 1
		default:
			continue
		}
		if ends == nil {
			ends = make([][2]float64, n-1)
			for k := range ends {
				ends[k] = [2]float64{math.NaN(), math.NaN()}
			}
			sigma = knotNoise(h, m)
		}
		ends[long][side] = nearKnotSlope(d[i], longIntervalSlope(h, m, fixed, i, long), sigma*splineSlopeGain(h, i))
	}
	return ends
}

// NearKnotZ: at a long interval's near knot the spline's derivative is
// taken where it differs from the one at the long interval's scale by
// more than NearKnotZ times its own noise, less that much
// (nearKnotSlope).
const NearKnotZ = 3.0

// nearKnotSlope is the derivative a long interval takes at its near
// knot: the one at the interval's scale (scale), moved towards the
// spline's (spline) by as much as their difference exceeds NearKnotZ
// times the spline derivative's noise (noise: its standard deviation from
// the knots' noise). Where the difference is the short knots' noise, the
// scale's slope stands; where it is a bend the short knots resolve and the
// long scale does not, the spline's (less NearKnotZ·noise).
func nearKnotSlope(spline, scale, noise float64) float64 {
	diff := spline - scale
	ex := math.Max(0, math.Abs(diff)-NearKnotZ*noise)
	return scale + math.Copysign(ex, diff)
}

// knotNoise is the knots' typical noise σ (ns) from the widths h and
// secants m: the twice-applied leave-one-out residuals' robust scale
// (looNoise, as the error bars take it).
func knotNoise(h, m []float64) float64 {
	n := len(h) + 1
	ts := make([]int64, n)
	off := make([]float64, n)
	for k := range h {
		ts[k+1] = ts[k] + int64(math.Round(h[k]))
		off[k+1] = off[k] + h[k]*m[k]
	}
	A := looOp(ts)
	sigma, _ := looNoise(ts, A, applyLoo(A, off))
	return sigma
}

// splineSlopeGain is the standard deviation of the spline's derivative at
// knot i (splineDerivs, no fixed knots) per unit of independent knot
// noise: the norm of its response to each knot within NearKnotWindow
// knots (a spline's response to one knot decays by ≈ 0.27 per knot),
// solved on that window.
func splineSlopeGain(h []float64, i int) float64 {
	n := len(h) + 1
	lo, hi := max(0, i-NearKnotWindow), min(n-1, i+NearKnotWindow)
	hw := h[lo:hi]
	mw := make([]float64, len(hw))
	v := 0.0
	for j := lo; j <= hi; j++ {
		clear(mw)
		if j > lo {
			mw[j-lo-1] = 1 / hw[j-lo-1]
		}
		if j < hi {
			mw[j-lo] = -1 / hw[j-lo]
		}
		var g float64
		if len(hw) == 1 {
			g = mw[0]
		} else {
			g = splineDerivs(hw, mw, nil)[i-lo]
		}
		v += g * g
	}
	return math.Sqrt(v)
}

// NearKnotWindow: the knots on each side of a near knot whose noise its
// spline derivative's noise is taken from (splineSlopeGain).
const NearKnotWindow = 6

// longEndSlope is the derivative a long first interval (width h[0],
// secant m[0]) starts with: its secant, or where the slope there was
// measured (the init sync's fitted slope, measured: NaN when not) that
// slope, limited to what the secants next to it support: within 2·h0/(h0 +
// h1) times the largest change between the first four secants of m[0]
// (with an extremum inside the first interval its own two secants agree
// while the slope at its start does not: on a 20 µs / 20 s sine with
// 4 s and 2 s intervals the slope lay 5.7 times the first three knots'
// parabola's departure from m[0] away). The
// init sync is followed by a first interval twice the budget's steady
// spacing (its reserve for the MPI_Finalize epoch: the first resync waits
// until two epochs fit), and there the secant bent a 20 µs / 20 s sine
// up to 2.6 µs off with exact knots and 2 ms epochs (decisions.md D81).
// On a straight clock the secants agree and the limit is m0, so the fit's
// own slope error does not bend the interval; a fit its end anchor
// disagreed with is not offered (measuredFirstSlope).
func longEndSlope(h, m []float64, measured float64) float64 {
	if math.IsNaN(measured) {
		return m[0]
	}
	bend := 0.0
	for k := 0; k+1 < len(m) && k < 3; k++ {
		bend = math.Max(bend, math.Abs(m[k+1]-m[k]))
	}
	w := 2 * h[0] / (h[0] + h[1]) * bend
	return math.Max(m[0]-w, math.Min(m[0]+w, measured))
}

// KinkRatio: an interval is a kink (a frequency step inside it) when the
// secants on either side of it differ by more than KinkRatio times the
// change of secant next to them on both sides together.
const KinkRatio = 4.0

// BendScaleCap: the typical bend a kink must stand out of, scaled to the
// candidate's spacing as a smooth clock's bend grows, is at most this
// many times the bend scaled as knot noise's (smoothCurve): a smooth
// bend's scaling is trusted up to knots about 4 times as far apart as the
// typical ones.
const BendScaleCap = 16.0

// offsetCurve is the offset model through a rank's knots.
type offsetCurve struct {
	ts   []int64
	off  []float64
	d    []float64 // derivatives at the knots; nil: straight lines
	kink []float64 // per interval: u in (0,1) where the two lines meet, 0: none
	// straight: per interval, a straight line (next to a close knot); nil: none
	straight []bool
	// hinges: the frequency steps the kink rules took (where and by how
	// much the slope changes), for the error bars' residuals
	hinges []hinge
	// ends: per interval, the derivatives its Hermite curve takes at its
	// start and end where they are not the knots' (longIntervalEnds; NaN:
	// the knot's); nil: none
	ends [][2]float64
}

// endDerivs is the derivatives of Hermite interval i at its two ends.
func (c *offsetCurve) endDerivs(i int) (float64, float64) {
	d0, d1 := c.d[i], c.d[i+1]
	if c.ends != nil {
		if v := c.ends[i][0]; !math.IsNaN(v) {
			d0 = v
		}
		if v := c.ends[i][1]; !math.IsNaN(v) {
			d1 = v
		}
	}
	return d0, d1
}

// hinge is a frequency step the model took: at local time t the slope of
// the offset changes by dslope.
type hinge struct {
	t      float64
	dslope float64
}

// newOffsetCurve builds the model of scheme s through the knots.
func newOffsetCurve(ts []int64, off []float64, s Scheme) *offsetCurve {
	return newOffsetCurveFrom(ts, off, s, math.NaN())
}

// newOffsetCurveFrom is newOffsetCurve where the slope at the first knot
// was measured (firstSlope; NaN: not): a long first interval starts with
// it (longEndSlope).
func newOffsetCurveFrom(ts []int64, off []float64, s Scheme, firstSlope float64) *offsetCurve {
	n := len(ts)
	if s == LinearScheme || n < 3 {
		return &offsetCurve{ts: ts, off: off}
	}
	// Close knots: a knot nearer than CloseKnot median spacings to the
	// previous kept one (the full sync closing MPI_Finalize, 0.1-2 s after
	// the resync that opened it) gives a slope over a short baseline: its
	// error, divided by that baseline, would bend the curve around it.
	// The curve is built through the other knots; intervals touching a
	// close knot are straight.
	keep := keptKnots(ts)
	if len(keep) == n {
		return smoothCurveFrom(ts, off, s, firstSlope)
	}
	kts := make([]int64, len(keep))
	koff := make([]float64, len(keep))
	for k, i := range keep {
		kts[k], koff[k] = ts[i], off[i]
	}
	sub := smoothCurveFrom(kts, koff, s, firstSlope) // keptKnots keeps the first
	c := &offsetCurve{ts: ts, off: off, d: make([]float64, n), straight: make([]bool, n-1), hinges: sub.hinges}
	if sub.d == nil { // too few kept knots for a curve
		for i := range c.straight {
			c.straight[i] = true
		}
		return c
	}
	kept := make([]int, n) // per knot: its index in keep, -1 when close
	for i := range kept {
		kept[i] = -1
	}
	for k, i := range keep {
		kept[i] = k
		c.d[i] = sub.d[k]
	}
	// A close knot between two kept ones (a resync the adaptation placed
	// 0.25 s after the one before) takes the slope of the curve through
	// the kept knots there, so the intervals next to it follow that curve
	// (through the close knot's own value) instead of being straight: on a
	// 20 µs / 20 s sine a straight 2.7 s interval beside such a knot was
	// 0.88 µs off in `make bench` at load 3 (decisions.md D73). Close knots
	// after the last kept one (the full sync closing MPI_Finalize) keep
	// their straight intervals.
	inner := make([]int, n) // per knot: the sub-curve interval it lies in, -1: none usable
	for i := range inner {
		inner[i] = -1
	}
	for i, k := 0, 0; i < n; i++ {
		if kept[i] >= 0 {
			k = kept[i]
			continue
		}
		if k+1 < len(keep) && ts[i] < ts[keep[k+1]] && !(sub.straight != nil && sub.straight[k]) && !(sub.kink != nil && sub.kink[k] > 0) {
			inner[i] = k
			c.d[i] = sub.slopeAt(k, ts[i])
		}
	}
	for i := range n - 1 {
		a, b := kept[i], kept[i+1]
		if (a < 0 && inner[i] < 0) || (b < 0 && inner[i+1] < 0) {
			c.straight[i] = true
			continue
		}
		if sub.ends != nil { // a long kept interval's own slopes at its ends
			e := [2]float64{math.NaN(), math.NaN()}
			if a >= 0 && a+1 < len(keep) {
				e[0] = sub.ends[a][0]
			}
			if b >= 1 {
				e[1] = sub.ends[b-1][1]
			}
			if !math.IsNaN(e[0]) || !math.IsNaN(e[1]) {
				if c.ends == nil {
					c.ends = make([][2]float64, n-1)
					for k := range c.ends {
						c.ends[k] = [2]float64{math.NaN(), math.NaN()}
					}
				}
				c.ends[i] = e
			}
		}
		if a < 0 || b < 0 {
			continue // next to an interior close knot: Hermite with the kept curve's slopes
		}
		if sub.straight != nil && sub.straight[a] {
			c.straight[i] = true
			continue
		}
		if sub.kink != nil && sub.kink[a] > 0 {
			if c.kink == nil {
				c.kink = make([]float64, n-1)
			}
			c.kink[i] = sub.kink[a]
		}
	}
	return c
}

// keptKnots returns the indexes of the knots that shape the curve: all
// but those nearer than CloseKnot median spacings to the previous kept one
// (len(ts) ≥ 2).
func keptKnots(ts []int64) []int {
	n := len(ts)
	gaps := make([]float64, n-1)
	for i := range gaps {
		gaps[i] = float64(ts[i+1] - ts[i])
	}
	sort.Float64s(gaps)
	minGap := CloseKnot * gaps[len(gaps)/2]
	keep := []int{0}
	for i := 1; i < n; i++ {
		if float64(ts[i]-ts[keep[len(keep)-1]]) >= minGap {
			keep = append(keep, i)
		}
	}
	return keep
}

// CloseKnot: knots nearer than this many median knot spacings to the
// previous one do not shape the curve (newOffsetCurve).
const CloseKnot = 0.25

// smoothCurve is the curve of scheme s through every knot.
func smoothCurve(ts []int64, off []float64, s Scheme) *offsetCurve {
	return smoothCurveFrom(ts, off, s, math.NaN())
}

// smoothCurveFrom is smoothCurve with the first knot's measured slope
// (longEndSlope; NaN: none).
func smoothCurveFrom(ts []int64, off []float64, s Scheme, firstSlope float64) *offsetCurve {
	c := &offsetCurve{ts: ts, off: off}
	n := len(ts)
	if s == LinearScheme || n < 2 {
		return c
	}
	if s != SplineKinkScheme || n < 5 {
		c.d = knotDerivsFrom(ts, off, s, firstSlope)
		if s == SplineScheme || s == SplineKinkScheme {
			h, m := widthsSecants(ts, off)
			c.ends = longIntervalEnds(h, m, nil, c.d)
		}
		return c
	}
	h := make([]float64, n-1)
	m := make([]float64, n-1)
	for i := range h {
		h[i] = float64(ts[i+1] - ts[i])
		m[i] = (off[i+1] - off[i]) / h[i]
	}
	fixed := make([]float64, n)
	for i := range fixed {
		fixed[i] = math.NaN()
	}
	// The typical bend between neighbouring intervals (knot noise and
	// smooth wander): a kink must stand out of it too, or noisy knots
	// read as kinks (2.6 µs off on the 20 µs sine with 130 ns knot noise).
	// Both of its scalings are kept: the change of secant times the span
	// between the secants' middles (a displacement: what knot noise
	// gives, whose secants change by σ over their length) and over it (a
	// curvature: what a smooth clock gives, whose secants change in
	// proportion to their spacing). typicalBend is the typical change of
	// secant for a candidate whose secants' middles are span ns apart and
	// whose own interval(s) are hOwn ns: the curvature's, but at most
	// BendScaleCap times the displacement's. With even spacing both are
	// the bend between neighbouring intervals as before; where the knots
	// spread out after a costly resync (1.5 s, then 3.8 s) the
	// displacement's alone read a 20 µs / 20 s sine's trough as a
	// frequency step (6.5 µs off with exact knots), and the curvature's
	// alone, inflated by the noise of 0.5 s intervals, missed a 1 ppm step
	// in the 8 s intervals after them (decisions.md, "The kink rules judge
	// a bend at the candidate's own spacing").
	curv := make([]float64, 0, n-2)
	disp := make([]float64, 0, n-2)
	for j := 0; j+1 < n-1; j++ {
		s := (h[j] + h[j+1]) / 2
		curv = append(curv, math.Abs(m[j+1]-m[j])/s)
		disp = append(disp, math.Abs(m[j+1]-m[j])*s)
	}
	sort.Float64s(curv)
	sort.Float64s(disp)
	typCurv, typDisp := curv[len(curv)/2], disp[len(disp)/2]
	typicalBend := func(span, hOwn float64) float64 {
		return math.Min(typCurv*span, BendScaleCap*typDisp/hOwn)
	}
	c.kink = make([]float64, n-1)
	any := false
	for i := 2; i+2 < n-1; i++ {
		a, b := m[i-1], m[i+1]
		jump := math.Abs(b - a)
		// both sides must show straight lines: with one side only, a
		// sine near its inflection reads as a kink (2.3 µs off in the
		// study, in 40 s runs and again in 8 s runs with the typical
		// bend taken without the candidate's own). So a step next to an
		// end knot is left to the spline (0.28-0.35 µs for 1 ppm with
		// 2 s knots, straight lines 0.5 µs).
		if i-2 < 0 || i+2 >= n-1 {
			continue
		}
		around := math.Abs(m[i-1]-m[i-2]) + math.Abs(m[i+2]-m[i+1])
		if jump <= KinkRatio*around || jump <= KinkRatio*typicalBend((h[i-1]+2*h[i]+h[i+1])/4, h[i]) {
			continue
		}
		u := (m[i] - b) / (a - b)
		if !(u > 0.02 && u < 0.98) {
			continue
		}
		c.kink[i] = u
		fixed[i], fixed[i+1] = a, b
		any = true
		c.hinges = append(c.hinges, hinge{float64(ts[i]) + u*h[i], b - a})
	}
	if !any {
		c.kink = nil
	}
	// A kink at a knot (the step fell within 2% of an interval's end):
	// the secants on either side of knot i differ by far more than their
	// neighbours do. Both intervals are then straight, and the curve
	// beyond them leaves with their slopes (a spline through the corner
	// rang by ≈ 0.1 of the step times the spacing: 0.21 µs on a 1 ppm step
	// with 2 s knots, where straight lines were exact).
	for i := 2; i+1 < n-1; i++ {
		if c.kink != nil && (c.kink[i-1] > 0 || c.kink[i] > 0) || !math.IsNaN(fixed[i-1]) || !math.IsNaN(fixed[i+1]) {
			continue
		}
		jump := math.Abs(m[i] - m[i-1])
		around := math.Abs(m[i-1]-m[i-2]) + math.Abs(m[i+1]-m[i])
		if jump <= KinkRatio*around || jump <= KinkRatio*typicalBend((h[i-1]+h[i])/2, min(h[i-1], h[i])) {
			continue
		}
		if c.straight == nil {
			c.straight = make([]bool, n-1)
		}
		c.straight[i-1], c.straight[i] = true, true
		fixed[i-1], fixed[i], fixed[i+1] = m[i-1], m[i-1], m[i]
		c.hinges = append(c.hinges, hinge{float64(ts[i]), m[i] - m[i-1]})
	}
	c.d = splineDerivsFrom(h, m, fixed, firstSlope)
	c.ends = longIntervalEnds(h, m, fixed, c.d)
	return c
}

// widthsSecants returns the knots' interval widths and secant slopes.
func widthsSecants(ts []int64, off []float64) (h, m []float64) {
	h = make([]float64, len(ts)-1)
	m = make([]float64, len(ts)-1)
	for i := range h {
		h[i] = float64(ts[i+1] - ts[i])
		m[i] = (off[i+1] - off[i]) / h[i]
	}
	return h, m
}

// slopeAt is the derivative of the model at t in interval i (a Hermite
// interval: neither straight nor kinked).
func (c *offsetCurve) slopeAt(i int, t int64) float64 {
	d0, d1 := c.endDerivs(i)
	return hermiteSlope(t, c.ts[i], c.ts[i+1], c.off[i], c.off[i+1], d0, d1)
}

// at is the model's offset at t in interval i (ts[i] ≤ t ≤ ts[i+1]).
func (c *offsetCurve) at(i int, t int64) float64 {
	t0, t1 := c.ts[i], c.ts[i+1]
	o0, o1 := c.off[i], c.off[i+1]
	if c.d == nil || c.straight != nil && c.straight[i] {
		return o0 + (o1-o0)*float64(t-t0)/float64(t1-t0)
	}
	if c.kink != nil && c.kink[i] > 0 {
		if u := float64(t-t0) / float64(t1-t0); u <= c.kink[i] {
			return o0 + c.d[i]*float64(t-t0)
		}
		return o1 - c.d[i+1]*float64(t1-t)
	}
	d0, d1 := c.endDerivs(i)
	return hermite(t, t0, t1, o0, o1, d0, d1)
}

// looResiduals returns, per knot, its offset minus the value the cubic
// through up to two knots on each side predicts (0 where fewer than two
// other knots exist).
func looResiduals(ts []int64, off []float64) []float64 {
	n := len(ts)
	r := make([]float64, n)
	var xs, ys [4]float64
	for i := range n {
		k := 0
		for j := max(0, i-2); j <= min(n-1, i+2); j++ {
			if j != i {
				xs[k], ys[k] = float64(ts[j]-ts[i]), off[j]
				k++
			}
		}
		if k < 2 {
			continue
		}
		// Lagrange polynomial through the k points, at x = 0
		p := 0.0
		for a := range k {
			w := 1.0
			for b := range k {
				if b != a {
					w *= (0 - xs[b]) / (xs[a] - xs[b])
				}
			}
			p += w * ys[a]
		}
		r[i] = off[i] - p
	}
	return r
}

// Package correct maps each rank's local timestamps to global time (rank
// 0's timebase) from the sync epochs its trace file records: the offset
// model through the epochs' knots (a cubic spline with kinks where a
// frequency step shows, or straight lines), the loose-knot repair, the
// model's error bars, and the clock modes of tracemerge's --clock
// (docs/explanation/clocksync.md). It knows nothing of the
// run or its events: merge builds one Corrector per rank and attaches
// the refinement's and the controlled logical clock's moves (Move).
package correct

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/trace"
)

// ClockMode selects how local timestamps become global ones.
type ClockMode int

// Clock correction modes.
const (
	// ClockInterp (default) interpolates the offset between the sync epochs
	// (normally epoch 0 at MPI_Init and epoch 1 at MPI_Finalize).
	ClockInterp ClockMode = iota
	// ClockInit uses epoch 0's model for the whole run.
	ClockInit
	// ClockRaw applies no correction (only the coarse alignment of raw
	// timebases that are seconds apart, see RawShift).
	ClockRaw
	// ClockRefined is ClockInterp moved, where the trace's happened-before
	// facts say it must, to the nearest clock they allow (merge/refine.go;
	// merge.Options.Refine carries the moves a first pass computed).
	ClockRefined
	// ClockLinear is ClockInterp with straight lines between the knots
	// (the interp of issue 10, before the smooth model of issue 38).
	ClockLinear
)

func (m ClockMode) String() string {
	switch m {
	case ClockInterp:
		return "interp"
	case ClockInit:
		return "init"
	case ClockRaw:
		return "raw"
	case ClockRefined:
		return "refined"
	case ClockLinear:
		return "linear"
	}
	return fmt.Sprintf("ClockMode(%d)", int(m))
}

// ParseClockMode parses "interp", "init", "raw", "refined" or "linear".
func ParseClockMode(s string) (ClockMode, error) {
	switch s {
	case "interp", "":
		return ClockInterp, nil
	case "init":
		return ClockInit, nil
	case "raw":
		return ClockRaw, nil
	case "refined":
		return ClockRefined, nil
	case "linear":
		return ClockLinear, nil
	}
	return 0, fmt.Errorf("unknown clock mode %q (want interp, init, raw, refined or linear)", s)
}

// knot is one point of the interpolated offset curve: the offset an
// epoch's model gives at the local time the epoch ended.
type knot struct {
	t     int64
	off   float64
	bound float64 // the epoch's sync-path bound (ns), -1: not recorded
	epoch int     // the epoch's index
	// split: the knot's pair measured several offsets and no clear
	// majority of them agreed (splitKnot), or its epoch's pair deadline
	// cut its ping-pongs short (cutKnot): either way nothing confirmed it
	split bool
}

// Corrector maps one rank's local timestamps to global time.
//
// Interpolation design. A sync epoch's model is most accurate near the time
// it was learned; HCA fits its slope over the few milliseconds of the sync,
// so extrapolating epoch 0's model over a long run accumulates
// (slope error × elapsed time). With two epochs we know the offset well at
// two instants, te0 = epoch0.EndNS and te1 = epoch1.EndNS, and the secant
// between them has the whole run as its baseline:
//
//	offset(t) = m0.Offset(t)                                  t < te0
//	offset(t) = o0 + (o1-o0)·(t-te0)/(te1-te0)                te0 ≤ t ≤ te1
//	offset(t) = m1.Offset(t)                                  t > te1
//
// with o0 = m0.Offset(te0), o1 = m1.Offset(te1). The curve is continuous at
// both knots; outside the knots the nearest epoch's own model (its own
// slope) is the best available extrapolation. More than two epochs (resync
// knots) generalise to a curve through every epoch's knot: by default a
// cubic spline with kinks where a frequency step shows (offsetmodel.go,
// DefaultScheme), with ClockLinear straight lines. Epochs whose EndNS does
// not increase are dropped (keeping the earlier one).
//
// global(t) = t − offset(t). Global returns it relative to an origin (an
// int64 ns in rank 0's timebase, SetOrigin; 0 by default): t − origin is
// exact in int64 and the offset is small, so the float64 result keeps
// sub-ns precision even for CLOCK_REALTIME values (≈1.8e18 ns), where an
// absolute float64 resolves only 256 ns.
type Corrector struct {
	mode   ClockMode
	shift  float64 // raw mode: coarse alignment added to local times
	shiftI int64   // the same, integral (alignments are whole ns)
	origin int64
	first  trace.Model
	last   trace.Model
	knots  []knot
	// curve: the offset model through the knots (offsetmodel.go)
	curve *offsetCurve
	// bars: the model's error bars (errorbars.go), built on first use
	// (most correctors only map times); barsOnce guards it, barBounds
	// keeps the knots' bounds for it
	bars      *errorBars
	barsOnce  *sync.Once
	barBounds []float64
	// measured: the same model through the knots as measured, when
	// steadyLooseKnots moved some (nil otherwise), and its bars: the bar
	// covers it
	measured     *offsetCurve
	barsMeasured *errorBars
	// fast path for the segment between the first two knots
	t0, t1 int64
	// adjust: ClockRefined's moves (merge's refine.go), nil otherwise
	adjust Move
	// loose: what steadyLooseKnots moved ("" nothing)
	loose string
	// clc: the controlled-logical-clock repair (merge's clc.go), nil
	// otherwise
	clc Move
}

// A Move shifts one rank's offset as a function of its interpolated
// global time g (ns relative to the corrector's origin, before the move):
// the refinement's moves (merge.Refinement, ClockRefined) and the
// controlled-logical-clock repair (merge.CLC) are Moves of a rank. The
// corrector calls At for every time it maps, so At must not allocate.
type Move interface {
	At(g float64) float64
}

// SetRefinement attaches a rank's refinement moves: Offset adds m.At(g)
// from then on (a nil m, or a mode other than ClockRefined: nothing).
// Call after SetOrigin: the moves are in global time relative to it.
func (c *Corrector) SetRefinement(m Move) {
	if m == nil || c.mode != ClockRefined {
		return
	}
	c.adjust = m
}

// SetCLC makes the corrector apply a rank's controlled-logical-clock
// repair: Offset subtracts m.At(g) (forward moves lower the offset; a nil
// m, or raw mode: nothing).
func (c *Corrector) SetCLC(m Move) {
	if m == nil || c.mode == ClockRaw {
		return
	}
	c.clc = m
}

// LooseKnots describes the loose sync knots the corrector moved toward
// their steady neighbours ("" when none): not a fallback, but reported.
func (c *Corrector) LooseKnots() string { return c.loose }

// NewCorrector builds the corrector for one rank from its epochs. shift is
// used in raw mode only. When the epochs do not support mode (no epoch at
// all, or only one epoch for interp) it falls back and says so in note.
func NewCorrector(mode ClockMode, epochs []trace.Epoch, shift float64) (c *Corrector, note string) {
	c = &Corrector{mode: mode, shift: shift, shiftI: int64(math.Round(shift))}
	if mode == ClockRaw {
		return c, ""
	}
	var eps []trace.Epoch
	for _, e := range epochs {
		m := e.Model
		if isFinite(m.Slope) && isFinite(m.Intercept) && math.Abs(m.Slope) < 0.5 && math.Abs(m.Intercept) < 1e19 {
			eps = append(eps, e)
		} else {
			note = fmt.Sprintf("epoch %d has an unusable model (slope %g, intercept %g): ignored; ", e.Index, m.Slope, m.Intercept)
		}
	}
	sort.SliceStable(eps, func(i, j int) bool { return eps[i].Index < eps[j].Index })
	if len(eps) == 0 {
		c.mode = ClockRaw
		return c, note + "no sync epoch: times left uncorrected"
	}
	if len(eps) == 1 {
		if mode == ClockInterp || mode == ClockRefined || mode == ClockLinear {
			note += fmt.Sprintf("only epoch %d present: interpolation impossible, its model is used for the whole run", eps[0].Index)
		}
		c.mode = ClockInit
		c.first = eps[0].Model
		return c, note
	}
	for _, e := range eps {
		kt := KnotTime(e)
		if n := len(c.knots); n > 0 && kt <= c.knots[n-1].t && kt < e.EndNS {
			kt = e.EndNS // a copied knot before the previous one: at the epoch's end, as before
		}
		if n := len(c.knots); n > 0 && kt <= c.knots[n-1].t {
			if mode != ClockInit {
				note += fmt.Sprintf("epoch %d ends before the previous one: ignored", e.Index)
			}
			continue
		}
		c.knots = append(c.knots, knot{t: kt, off: e.Model.Offset(kt), bound: epochBound(e), epoch: e.Index, split: splitKnot(e) || cutKnot(e)})
		if len(c.knots) == 1 {
			c.first = e.Model
		}
		c.last = e.Model
	}
	if len(c.knots) < 2 {
		c.mode = ClockInit
		c.first = eps[0].Model
		return c, note
	}
	before := make([]float64, len(c.knots))
	for i, k := range c.knots {
		before[i] = k.off
	}
	if n := steadyLooseKnots(c.knots); n != "" {
		c.loose = n
		// the models beyond the end knots follow their knots
		c.first.Intercept += c.knots[0].off - c.first.Offset(c.knots[0].t)
		last := c.knots[len(c.knots)-1]
		c.last.Intercept += last.off - c.last.Offset(last.t)
	}
	c.t0, c.t1 = c.knots[0].t, c.knots[1].t
	ts := make([]int64, len(c.knots))
	offs := make([]float64, len(c.knots))
	bounds := make([]float64, len(c.knots))
	for i, k := range c.knots {
		ts[i], offs[i], bounds[i] = k.t, k.off, k.bound
	}
	scheme := DefaultScheme
	if mode == ClockLinear {
		scheme = LinearScheme
	}
	// The first knot's slope as its sync measured it (a full sync's fit;
	// a resync keeps the slope before it): a long first interval starts
	// with it (longEndSlope).
	firstSlope := math.NaN()
	if e := eps[0]; e.Index == c.knots[0].epoch {
		firstSlope = measuredFirstSlope(e)
	}
	c.curve = newOffsetCurveFrom(ts, offs, scheme, firstSlope)
	c.barBounds, c.barsOnce = bounds, new(sync.Once)
	if c.loose != "" {
		c.measured = newOffsetCurveFrom(ts, before, scheme, firstSlope)
	}
	if mode == ClockInit { // epoch 0's model; the knots serve its error bar only
		c.first, c.loose = eps[0].Model, ""
	}
	return c, note
}

// Loose knots. A sync epoch disturbed by other load (a descheduled rank
// in the middle of its ping-pongs) can miss by far more than its
// neighbours while its sync-path bound (epochBound) says so: its SKaMPI
// intervals were wide. Such a knot is moved toward the line of its nearest
// steady neighbours, but never outside its own bound, so the curve stays
// within what every measurement proved. A knot is loose when its bound is
// both over LooseKnotFactor times the median bound of the rank's knots and
// over LooseKnotMinNS; on a network whose every knot is loose alike
// (TCP: 10-30 µs bounds) none is.
//
// The line leaned on must be near: its knots at most LooseKnotReachKnots
// places from the loose one (at most one other knot between them), or
// within LooseKnotReach median knot spacings of it (the init knot next to
// the first resyncs); a longer run of loose knots is left as measured.
// Near counts in knots as well as in time because the resync budget spaces
// knots unevenly under load: a costly epoch holds the next resync off for
// 10 s among 2 s intervals, and a disturbed knot next to that gap (7.5 µs
// off, bound 21 µs, in a 30 s run of 8 ranks on 2 cores) had no steady
// neighbour within 2.5 median spacings to be repaired by.
//
// A loose knot is moved only when it misses the prediction by more than
// LooseKnotEvidence times the steady knots' median miss of the same kind
// of prediction (a line, parabola or cubic through as many steady knots
// on each side as the loose knot has, the miss scaled up to the loose
// knot's wider spacing as a bend's would be): a bending clock's knots
// miss each other's predictions by the bend (on a 20 µs / 20 s sine three loose but
// correct knots at a run's start were moved 2.1 µs off by the line from
// the first steady ones).
const (
	LooseKnotEvidence = 3.0
	LooseKnotFactor   = 4.0
	LooseKnotMinNS    = 1000.0
	LooseKnotReach    = 2.5
	// LooseKnotReachKnots: a knot this many places from the loose one
	// (or fewer) is near whatever the time between them.
	LooseKnotReachKnots = 2
)

// KnotTime is where an epoch's knot lies: its Params["knot_ns"] (the
// local time of the measurement its sync-path bound was proven at; the
// recorder writes it since issue 38), within [StartNS, EndNS], else the
// epoch's end. A knot at its measurement is the model as measured; at the
// epoch's end the model's slope error over the rest of the epoch (hundreds
// of ms under load) would add.
//
// A knot copied from the node leader (Params["knot_copied"] = "1": a node
// member whose clock ClockPropSync copied, which measured nothing itself)
// may lie before StartNS: the leader measured while the member had not yet
// entered the resync (descheduled, or late into the meeting's collective).
// Its knot is the leader's measurement all the same; at the member's epoch
// end the model's slope error over the delay would add (1.16 µs after a
// member entered 111 ms late, TestNetns_ResyncHoldsNonLinearClocksOverTCP).
// NewCorrector falls back to the epoch's end if such a knot does not
// follow the previous one.
func KnotTime(e trace.Epoch) int64 {
	k, err := strconv.ParseInt(e.Params["knot_ns"], 10, 64)
	if err != nil || k > e.EndNS || (k < e.StartNS && (e.Params["knot_copied"] != "1" || k < 0)) {
		return e.EndNS
	}
	return k
}

// epochBound reads an epoch's sync-path bound (ns; -1: none recorded).
func epochBound(e trace.Epoch) float64 {
	v, err := strconv.ParseFloat(e.Params["bound_ns"], 64)
	if err != nil || v < 0 || !isFinite(v) {
		return -1
	}
	return v
}

// splitKnot reports whether epoch e's knot is a resync's offset on which
// its pair did not agree: it measured knot_offsets offsets (the most a
// pair may, clocksync.ResyncRepeats) and no clear majority of them fell
// within clocksync.KnotAgree of each other (knot_agree below
// knot_offsets/2 + 2, clocksync's clearMajority). Such a knot is loose
// whatever its bound (steadyLooseKnots): over TCP between namespace hosts
// its error was 0.3–2.1 µs where its agreeing neighbours' median was 0.06 µs
// (decisions.md D87).
func splitKnot(e trace.Epoch) bool {
	n, err1 := strconv.Atoi(e.Params["knot_offsets"])
	a, err2 := strconv.Atoi(e.Params["knot_agree"])
	return err1 == nil && err2 == nil && n > 1 && a < n/2+2
}

// cutKnot reports whether epoch e's knot rests on ping-pongs its pair
// deadline cut short (pmpi's ppDeadline: the param pingpongs_cut > 0) and
// on fewer offsets than a clear majority needs (knot_offsets < 3): one
// or two offsets of a few ping-pongs each, which no other offset
// confirmed. Such a knot is loose whatever its bound, as a split one is:
// under load (8 oversubscribed ranks on 2 vCPUs, load 15) knots of one
// offset were 14.5 and 15.3 µs off with bounds of 22 and 19 µs, under
// LooseKnotFactor × their ranks' median bounds, and the corrected times
// followed them (decisions.md D89).
func cutKnot(e trace.Epoch) bool {
	c, err1 := strconv.Atoi(e.Params["pingpongs_cut"])
	n, err2 := strconv.Atoi(e.Params["knot_offsets"])
	return err1 == nil && err2 == nil && c > 0 && n < 3
}

// steadyLooseKnots moves ks' loose knots (see LooseKnotFactor) in place
// and describes what it moved ("" when nothing).
func steadyLooseKnots(ks []knot) string {
	bs := make([]float64, 0, len(ks))
	for _, k := range ks {
		if k.bound < 0 {
			return "" // a file without bounds: nothing to judge by
		}
		bs = append(bs, k.bound)
	}
	sort.Float64s(bs)
	med := bs[len(bs)/2]
	limit := max(LooseKnotFactor*med, LooseKnotMinNS)
	gaps := make([]float64, 0, len(ks))
	for i := 1; i < len(ks); i++ {
		gaps = append(gaps, float64(ks[i].t-ks[i-1].t))
	}
	spacing := 0.0 // median time between consecutive knots
	if len(gaps) > 0 {
		sort.Float64s(gaps)
		spacing = gaps[len(gaps)/2]
	}
	steady := func(k knot) bool { return k.bound <= limit && !k.split }
	// How well the steady knots predict each other (leave one out): on a
	// bending clock they miss by the bend, and a loose knot that misses
	// its prediction by no more than that is no evidence of a bad knot.
	var sts []int64
	var sof []float64
	for _, k := range ks {
		if steady(k) {
			sts, sof = append(sts, k.t), append(sof, k.off)
		}
	}
	// typFor(nl, nr, span): the steady knots' median miss of the
	// prediction from nl steady knots before and nr after them (the same
	// kind of prediction a loose knot gets: a line, a parabola or a cubic,
	// between or beyond its neighbours), each scaled up to the loose
	// knot's own geometry: a bend's miss grows as Π|x − x_q| over the
	// points used (span, the loose knot's), and the steady knots of a run
	// with adapted intervals sit closer together than the ones a loose
	// knot leans on (a loose knot measured within 0.03 µs on a 20 µs / 20 s
	// sine was moved 4 µs by a parabola reaching 4 s back and 1.8 s on,
	// judged by parabolas over 1 s spacings); 0 when no steady knot has
	// those neighbours.
	typFor := func(nl, nr int, span float64) float64 {
		var miss []float64
		var xs, ys [4]float64
		for j := nl; j+nr < len(sts); j++ {
			m := 0
			own := 1.0
			for q := j - nl; q <= j+nr; q++ {
				if q != j {
					xs[m], ys[m] = float64(sts[q]-sts[j]), sof[q]
					own *= math.Abs(xs[m])
					m++
				}
			}
			p := 0.0
			for a := range m {
				w := 1.0
				for b := range m {
					if b != a {
						w *= xs[b] / (xs[b] - xs[a])
					}
				}
				p += w * ys[a]
			}
			miss = append(miss, math.Abs(sof[j]-p)*max(1, span/own))
		}
		if len(miss) == 0 {
			return 0
		}
		sort.Float64s(miss)
		return miss[len(miss)/2]
	}
	var moved []string
	orig := append([]knot(nil), ks...)
	for i, k := range orig {
		if steady(k) {
			continue
		}
		// the nearest steady knots on each side (of the original values)
		var left, right []knot
		var li, ri []int // their places
		for j := i - 1; j >= 0 && len(left) < 2; j-- {
			if steady(orig[j]) {
				left, li = append(left, orig[j]), append(li, j)
			}
		}
		for j := i + 1; j < len(orig) && len(right) < 2; j++ {
			if steady(orig[j]) {
				right, ri = append(right, orig[j]), append(ri, j)
			}
		}
		// near: knot j within LooseKnotReachKnots places or LooseKnotReach
		// median spacings of the loose knot
		near := func(j int) bool {
			if d := j - i; d <= LooseKnotReachKnots && d >= -LooseKnotReachKnots {
				return true
			}
			reach := LooseKnotReach * spacing
			return reach <= 0 || math.Abs(float64(orig[j].t-k.t)) <= reach
		}
		var a, b knot
		var ai, bi, nl, nr int
		switch {
		case len(left) > 0 && len(right) > 0:
			a, b, ai, bi, nl, nr = left[0], right[0], li[0], ri[0], 1, 1
		case len(right) == 2:
			a, b, ai, bi, nl, nr = right[0], right[1], ri[0], ri[1], 0, 2
		case len(left) == 2:
			a, b, ai, bi, nl, nr = left[1], left[0], li[1], li[0], 2, 0
		default:
			continue // no line to lean on
		}
		span := math.Abs(float64(a.t-k.t)) * math.Abs(float64(b.t-k.t))
		// A line reaching far past the knot's own place misses a bending
		// clock by more than the knot's measurement may: lean only on near
		// neighbours (a run of loose knots keeps what it measured; on a
		// 20 µs / 2 s sine a run of 19 loose knots over 190 ms was moved
		// 4 µs off the truth, where it had measured 0.2 µs). Next to a long
		// gap the bend the line misses is judged by LooseKnotEvidence below.
		if !near(ai) || !near(bi) {
			continue
		}
		pred := a.off + (b.off-a.off)*float64(k.t-a.t)/float64(b.t-a.t)
		// With steady knots on both sides and three or four within reach,
		// the parabola or cubic through them (the default offset model is
		// a spline): on a 20 µs
		// / 20 s sine the line between the neighbours of a loose knot 2 s
		// either side missed by 1.5 µs in a real run, where the knot had
		// measured within 0.03 µs (the cubic: 0.29 µs at the sine's
		// strongest bend, TestNewCorrector_LooseKnotOnABendingClockFollowsTheCurve).
		if len(left) > 0 && len(right) > 0 && len(left)+len(right) >= 3 {
			pts := append(append([]knot(nil), left...), right...)
			all := true
			for _, j := range append(append([]int(nil), li...), ri...) {
				all = all && near(j)
			}
			if all {
				nl, nr, span = len(left), len(right), 1
				for _, p := range pts {
					span *= math.Abs(float64(p.t - k.t))
				}
				ts := make([]int64, len(pts))
				vs := make([]float64, len(pts))
				for i, p := range pts {
					ts[i], vs[i] = p.t, p.off
				}
				pred = clocksync.LagrangeAt(k.t, ts, vs)
			}
		}
		typ := LooseKnotEvidence * typFor(nl, nr, span)
		if math.Abs(pred-k.off) <= typ {
			continue // within what the steady knots miss each other by
		}
		// A prediction that may miss by as much as the knot's own bound
		// says no more than the knot: across a long gap of unevenly spaced
		// knots on a bending clock the cubic missed a 20 µs / 20 s sine by
		// 62 µs, 3.3× what the steady knots missed each other by.
		if typ >= k.bound {
			continue
		}
		v := max(k.off-k.bound, min(k.off+k.bound, pred))
		if v != k.off {
			ks[i].off = v
			moved = append(moved, fmt.Sprintf("epoch %d (bound %s) by %s", k.epoch, fmtNS(k.bound), fmtNS(v-k.off)))
		}
	}
	if len(moved) == 0 {
		return ""
	}
	return fmt.Sprintf("%d loose sync knot(s) (bound over %s; median %s) moved toward their steady neighbours, within their bounds: %s",
		len(moved), fmtNS(limit), fmtNS(med), strings.Join(moved, ", "))
}

// fmtNS formats ns as µs with 3 decimals.
func fmtNS(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 3, 64) + " µs" }

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// KnotSpan is the local times of the first and the last sync knot and
// the number of knots (n < 2: no interpolation, t0 and t1 are 0).
func (c *Corrector) KnotSpan() (t0, t1 int64, n int) {
	ks := c.knots
	if len(ks) < 2 {
		return 0, 0, len(ks)
	}
	return ks[0].t, ks[len(ks)-1].t, len(ks)
}

// Mode is the mode actually applied (after fallbacks).
func (c *Corrector) Mode() ClockMode { return c.mode }

// Offset returns local minus global at local time t (ns).
func (c *Corrector) Offset(t int64) float64 {
	o := c.interpOffset(t)
	if c.adjust != nil {
		o += c.adjust.At(float64(t-c.origin) - o)
	}
	if c.clc != nil { // forward moves lower the offset
		o -= c.clc.At(float64(t-c.origin) - o)
	}
	return o
}

// interpOffset is Offset without ClockRefined's moves.
func (c *Corrector) interpOffset(t int64) float64 {
	switch c.mode {
	case ClockRaw:
		return -c.shift
	case ClockInit:
		return c.first.Offset(t)
	}
	if t >= c.t0 && t <= c.t1 {
		return c.curve.at(0, t)
	}
	if t < c.t0 {
		return c.first.Offset(t)
	}
	ks := c.knots
	if t > ks[len(ks)-1].t {
		return c.last.Offset(t)
	}
	i := sort.Search(len(ks), func(i int) bool { return ks[i].t >= t }) // ks[i-1].t < t <= ks[i].t
	return c.curve.at(i-1, t)
}

// ErrorBar is the estimated error (ns) of Global(t) against the
// reference clock: the knots' noise estimated from their leave-one-out
// residuals, carried through the curve to t, plus the model's own miss
// between knots (errorbars.go, "Error bars of the offset model"): small
// at a knot, growing toward the middle of an interval, wide around a
// disturbed knot and beyond the end knots; with --clock init the distance of epoch 0's model from the
// knots' curve comes on top, with refined the moves. -1 when unknown (raw
// mode, or fewer than three knots). Rank 0, the reference, has 0.
func (c *Corrector) ErrorBar(t int64) float64 {
	if c.mode == ClockRaw || c.barsOnce == nil || len(c.knots) < 3 {
		return -1
	}
	c.barsOnce.Do(func() {
		c.bars = newErrorBars(c.curve, c.barBounds)
		if c.measured != nil {
			c.barsMeasured = newErrorBars(c.measured, c.barBounds)
		}
	})
	b := c.bars.at(t)
	if ks := c.knots; c.measured != nil && t >= ks[0].t && t <= ks[len(ks)-1].t {
		// Either the repair of a loose knot or its measurement is right:
		// the bar covers the model through the knots as measured, with
		// its own bar (a knot measured right, with a wide bound, next to
		// a frequency step is moved by the step's bend, 0.2-0.7 µs:
		// TestErrorBars_CoverTheKnotsAsMeasuredWhereLooseOnesWereMoved).
		i := max(0, sort.Search(len(ks), func(i int) bool { return ks[i].t >= t })-1)
		i = min(i, len(ks)-2)
		b = math.Max(b, c.barsMeasured.at(t)+math.Abs(c.curve.at(i, t)-c.measured.at(i, t)))
	}
	if c.mode == ClockInit {
		b += math.Abs(c.first.Offset(t) - c.knotCurve(t))
	}
	if c.adjust != nil || c.clc != nil {
		b += math.Abs(c.Offset(t) - c.interpOffset(t))
	}
	return b
}

// knotCurve is the offset model through the knots at t (the nearest
// epoch's model beyond them).
func (c *Corrector) knotCurve(t int64) float64 {
	ks := c.knots
	switch {
	case t < ks[0].t:
		return ks[0].off + c.first.Slope*float64(t-ks[0].t)
	case t > ks[len(ks)-1].t:
		return ks[len(ks)-1].off + c.last.Slope*float64(t-ks[len(ks)-1].t)
	}
	i := sort.Search(len(ks), func(i int) bool { return ks[i].t >= t })
	return c.curve.at(max(0, i-1), t)
}

// SetOrigin makes Global and Raw return ns relative to origin (ns in rank
// 0's timebase; see merge.RunOrigin).
func (c *Corrector) SetOrigin(origin int64) { c.origin = origin }

// Origin is the origin set by SetOrigin (0: absolute times).
func (c *Corrector) Origin() int64 { return c.origin }

// Global returns the global time of local time t: ns in rank 0's timebase,
// relative to the corrector's origin.
func (c *Corrector) Global(t int64) float64 {
	if c.mode == ClockRaw {
		return c.Raw(t)
	}
	return float64(t-c.origin) - c.Offset(t)
}

// Raw returns local time t with only the coarse raw-mode alignment (the
// shift), relative to the origin.
func (c *Corrector) Raw(t int64) float64 {
	return float64(t + c.shiftI - c.origin)
}

// AnchoredSlope is how far (per unit time) a full sync's fitted slope may
// have missed, judged by its end anchor, for the offset curve to start
// with it (measuredFirstSlope): 1e-6, 0.15 µs of bend over a 4 s
// interval at most, where the init fit's slopes on 2 cores were 1-2e-7
// off and under load up to 1e-5 (docs/explanation/clock-accuracy.md).
const AnchoredSlope = 1e-6

// measuredFirstSlope is the slope of a full sync's model where its end
// anchor confirmed it, NaN otherwise. The anchor re-measures the offset
// after the fit (end_anchor_kept "anchor"; end_anchor_shift_ns is how far
// the fitted line missed it), about half the epoch after the fit's
// middle, so a shift within AnchoredSlope times that time says the slope
// extrapolates that well. A resync keeps the slope before it: NaN.
func measuredFirstSlope(e trace.Epoch) float64 {
	if e.Params["resync"] != "" || e.Params["end_anchor_kept"] != "anchor" {
		return math.NaN()
	}
	shift, err := strconv.ParseFloat(e.Params["end_anchor_shift_ns"], 64)
	if err != nil || math.IsNaN(shift) {
		return math.NaN()
	}
	if half := float64(e.EndNS-e.StartNS) / 2; half <= 0 || math.Abs(shift) > AnchoredSlope*half {
		return math.NaN()
	}
	return e.Model.Slope
}

package clocksync

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/stat"
)

// LearnClockModel is LEARN_CLOCK_MODEL (Algorithm 2 of the H2HCA paper): the
// reference pRef and the client otherRank obtain fitpoints fit points with
// the offset algorithm o (each measured against the reference's clk), the
// client fits offset(x) = slope*x + intercept by least squares
// (gonum/stat.LinearRegression) and, if recomputeIntercept is set, replaces
// the intercept by a fresh offset measurement (COMPUTE_AND_SET_INTERCEPT).
//
// Deviation: when the offset algorithm reports an Uncertainty for every fit
// point (SKaMPI-Offset does: half the width of its [td_min, td_max]
// interval, which bounds that point's error), the fit is weighted by
// 1/Uncertainty² (FitWeightedLinearModel). A fit point whose ping-pongs
// were all delayed (a descheduled process when ranks outnumber cores) then
// cannot drag the line; with equal uncertainties it is the paper's fit.
//
// Both processes call it with their own clk; the returned model is the
// client's model relative to the reference's clock (the reference gets the
// zero model). With one fit point the slope is 0.
func LearnClockModel(t Transport, pRef, otherRank int, clk Clock, o OffsetAlg, fitpoints int, recomputeIntercept bool) (LinearModel, error) {
	lm, _, err := learnClockModel(t, pRef, otherRank, clk, o, fitpoints, recomputeIntercept, 0)
	return lm, err
}

// ownBound is a client's own part of its sync-path bound: Bound (0: not
// known) holds at clk time X, the measurement it rests on, and the fitted
// slope is off the true relative rate by at most Slope (SlopeBound).
type ownBound struct {
	Bound, X, Slope float64
}

// learnClockModel is LearnClockModel with the fit points spread over at
// least fitSpan seconds of the client's clock (see Config.FitSpan). The
// client also gets the model's own error bound against clk's reference
// (ModelBound at the last measurement; 0 when the offset algorithm
// reports no uncertainty) and its slope's (SlopeBound over the fit
// points).
func learnClockModel(t Transport, pRef, otherRank int, clk Clock, o OffsetAlg, fitpoints int, recomputeIntercept bool, fitSpan float64) (LinearModel, ownBound, error) {
	if fitpoints < 1 {
		fitpoints = 1
	}
	me := t.Rank()
	switch me {
	case pRef: // process with reference clock
		for idx := 0; idx < fitpoints; idx++ {
			if _, err := o.MeasureOffset(t, clk, pRef, otherRank); err != nil {
				return LinearModel{}, ownBound{}, fmt.Errorf("learn clock model %d<-%d: fit point %d: %w", pRef, otherRank, idx, err)
			}
		}
		if recomputeIntercept {
			if _, err := ComputeAndSetIntercept(t, LinearModel{}, clk, o, pRef, otherRank); err != nil {
				return LinearModel{}, ownBound{}, fmt.Errorf("learn clock model %d<-%d: %w", pRef, otherRank, err)
			}
		}
		return LinearModel{}, ownBound{}, nil
	case otherRank: // client process
		xfit := make([]float64, fitpoints)
		yfit := make([]float64, fitpoints)
		ufit := make([]float64, fitpoints)
		wfit := make([]float64, fitpoints)
		for idx := 0; idx < fitpoints; idx++ {
			if fitSpan > 0 && idx > 0 {
				WaitUntil(t, clk, xfit[0]+fitSpan*float64(idx)/float64(fitpoints-1))
			}
			ob, err := o.MeasureOffset(t, clk, pRef, otherRank)
			if err != nil {
				return LinearModel{}, ownBound{}, fmt.Errorf("learn clock model %d<-%d: fit point %d: %w", pRef, otherRank, idx, err)
			}
			xfit[idx] = ob.Timestamp
			yfit[idx] = ob.Offset
			ufit[idx] = ob.Uncertainty
			wfit[idx] = ob.Window
		}
		lm := FitWeightedLinearModel(xfit, yfit, posUncertainties(ufit))
		slope := SlopeBound(lm.Slope, xfit, yfit, ufit, wfit)
		if recomputeIntercept {
			ob, err := o.MeasureOffset(t, clk, pRef, otherRank)
			if err != nil {
				return LinearModel{}, ownBound{}, fmt.Errorf("learn clock model %d<-%d: compute intercept: %w", pRef, otherRank, err)
			}
			lm.Intercept = lm.Slope*(-ob.Timestamp) + ob.Offset
			xfit, yfit, ufit, wfit = []float64{ob.Timestamp}, []float64{ob.Offset}, []float64{ob.Uncertainty}, []float64{ob.Window}
		}
		// The bound at the last measurement, the one nearest the knot
		// (the end of the sync); it holds at that measurement's time, and
		// the slope's error counts from there (KnotBound).
		n := len(xfit) - 1
		b, _ := modelBoundAt(lm, math.Abs(lm.Slope)+slope, xfit[n:], yfit[n:], ufit[n:], wfit[n:])
		return lm, ownBound{Bound: b, X: xfit[n], Slope: slope}, nil
	}
	return LinearModel{}, ownBound{}, nil
}

// ModelBound bounds |lm(x) - true offset| at the measurements: each one's
// truth lies within ufit[i] of its midpoint yfit[i] (SKaMPI's interval)
// while the clocks drift apart by at most |lm.Slope| over the
// measurement's window wfit[i] (nil: none), so at xfit[i] the model misses
// by at most |lm(xfit[i]) - yfit[i]| + ufit[i] + |lm.Slope|·wfit[i]; the
// smallest over the points is returned. It holds at that point's time;
// away from it the model's slope error adds (KnotBound). A negative
// ufit[i] (intervals that did not overlap) counts by its size. 0 when some
// uncertainty is not known (0).
func ModelBound(lm LinearModel, xfit, yfit, ufit, wfit []float64) float64 {
	b, _ := modelBoundAt(lm, math.Abs(lm.Slope), xfit, yfit, ufit, wfit)
	return b
}

// modelBoundAt is ModelBound with rate bounding the clocks' true relative
// rate during the measurements (|lm.Slope| plus the slope's error bound:
// a slope fitted under load can be off by far more than a window's drift
// allows for), and the time xfit[i] of the measurement that gave the
// bound: it holds there.
func modelBoundAt(lm LinearModel, rate float64, xfit, yfit, ufit, wfit []float64) (float64, float64) {
	best, at := math.Inf(1), 0.0
	for i := range xfit {
		if i >= len(ufit) || ufit[i] == 0 || math.IsInf(ufit[i], 0) || math.IsNaN(ufit[i]) {
			return 0, 0
		}
		if b := pointHalfWidth(rate, ufit, wfit, i) + math.Abs(lm.Slope*xfit[i]+lm.Intercept-yfit[i]); b < best {
			best, at = b, xfit[i]
		}
	}
	if math.IsInf(best, 0) {
		return 0, 0
	}
	return best, at
}

// pointHalfWidth is how far measurement i's truth can lie from its
// midpoint: the SKaMPI interval's half-width (by its size when the
// intervals did not overlap) plus the drift over its window at rate.
func pointHalfWidth(rate float64, ufit, wfit []float64, i int) float64 {
	h := math.Abs(ufit[i])
	if i < len(wfit) && wfit[i] > 0 {
		h += rate * wfit[i]
	}
	return h
}

// SlopeBound bounds the error of a fitted slope against the true relative
// rate of the two clocks, from the measurements alone: every pair of fit
// points i < j, each true offset within pointHalfWidth of its midpoint,
// confines the rate to [(y_j - h_j - y_i - h_i)/(x_j - x_i), (y_j + h_j -
// y_i + h_i)/(x_j - x_i)]; the intersection over all pairs holds the true
// rate while it stays constant over the fit (a sync's milliseconds), and
// the result is slope's largest distance to its ends. The windows' drift
// counts at |slope| plus the result (one refinement: a descheduled
// window's drift at a badly fitted slope). 0 when some uncertainty is not
// known or fewer than two points have distinct times (then nothing is
// proven, as with ModelBound's 0).
func SlopeBound(slope float64, xfit, yfit, ufit, wfit []float64) float64 {
	for i := range xfit {
		if i >= len(ufit) || ufit[i] == 0 || math.IsInf(ufit[i], 0) || math.IsNaN(ufit[i]) {
			return 0
		}
	}
	s := slopeBound(slope, math.Abs(slope), xfit, yfit, ufit, wfit)
	if s == 0 {
		return 0
	}
	return slopeBound(slope, math.Abs(slope)+s, xfit, yfit, ufit, wfit)
}

// slopeBound is one pass of SlopeBound with the windows' drift at rate.
func slopeBound(slope, rate float64, xfit, yfit, ufit, wfit []float64) float64 {
	lo, hi := math.Inf(-1), math.Inf(1)
	for i := range xfit {
		hi1 := pointHalfWidth(rate, ufit, wfit, i)
		for j := i + 1; j < len(xfit); j++ {
			dx := xfit[j] - xfit[i]
			if dx == 0 {
				continue
			}
			h := hi1 + pointHalfWidth(rate, ufit, wfit, j)
			a, b := (yfit[j]-yfit[i]-h)/dx, (yfit[j]-yfit[i]+h)/dx
			if dx < 0 {
				a, b = b, a
			}
			lo, hi = math.Max(lo, a), math.Min(hi, b)
		}
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0
	}
	// lo > hi: the points admit no single rate (the clocks bent during the
	// fit); the distance to the farther end still covers both.
	return math.Max(math.Abs(slope-lo), math.Abs(hi-slope))
}

// posUncertainties returns u with entries that are not positive replaced
// by 0 (unknown), as FitWeightedLinearModel expects.
func posUncertainties(u []float64) []float64 {
	out := make([]float64, len(u))
	for i, v := range u {
		if v > 0 {
			out[i] = v
		}
	}
	return out
}

// FitLinearModel is FIT_LINEAR_MODEL of Algorithm 2: the least-squares line
// through (xfit[i], yfit[i]). With fewer than two points, or all x equal, it
// returns slope 0 and the mean offset as intercept.
func FitLinearModel(xfit, yfit []float64) LinearModel {
	if len(xfit) == 0 {
		return LinearModel{}
	}
	if len(xfit) < 2 || stat.Variance(xfit, nil) == 0 {
		return LinearModel{Intercept: stat.Mean(yfit, nil)}
	}
	alpha, beta := stat.LinearRegression(xfit, yfit, nil, false)
	return LinearModel{Slope: beta, Intercept: alpha}
}

// FitWeightedLinearModel is FitLinearModel weighted by 1/ufit[i]² when
// every ufit[i] > 0 (each point's error bound); otherwise (some bound
// unknown) it is FitLinearModel.
func FitWeightedLinearModel(xfit, yfit, ufit []float64) LinearModel {
	if len(ufit) != len(xfit) || len(xfit) < 2 {
		return FitLinearModel(xfit, yfit)
	}
	w := make([]float64, len(ufit))
	for i, u := range ufit {
		if !(u > 0) || math.IsInf(u, 0) {
			return FitLinearModel(xfit, yfit)
		}
		w[i] = 1 / (u * u)
	}
	if stat.Variance(xfit, w) == 0 {
		return LinearModel{Intercept: stat.Mean(yfit, w)}
	}
	alpha, beta := stat.LinearRegression(xfit, yfit, w, false)
	return LinearModel{Slope: beta, Intercept: alpha}
}

// ComputeAndSetIntercept is COMPUTE_AND_SET_INTERCEPT (Algorithm 2 lines
// 17-23; Compute_And_Set_Intercept of Algorithm 4 in the HCA paper): the
// client measures its current offset o at timestamp x with o_alg and sets
// intercept = offset - slope*x, keeping the slope. The reference
// participates in the measurement and gets lm back unchanged.
func ComputeAndSetIntercept(t Transport, lm LinearModel, clk Clock, o OffsetAlg, pRef, client int) (LinearModel, error) {
	ob, err := o.MeasureOffset(t, clk, pRef, client)
	if err != nil {
		return lm, fmt.Errorf("compute intercept %d<-%d: %w", pRef, client, err)
	}
	if t.Rank() == client {
		lm.Intercept = lm.Slope*(-ob.Timestamp) + ob.Offset
	}
	return lm, nil
}

// Sleeper is an optional Transport method used to let time pass between
// fit points (Config.FitSpan). The simulator advances its virtual time;
// without it WaitUntil sleeps and then spins on the clock.
type Sleeper interface {
	Sleep(seconds float64)
}

// WaitUntil returns once clk reads at least until.
func WaitUntil(t Transport, clk Clock, until float64) {
	d := until - clk.GetTime()
	if d <= 0 {
		return
	}
	if s, ok := t.(Sleeper); ok {
		s.Sleep(d)
		return
	}
	if d > 2e-3 {
		time.Sleep(time.Duration((d - 1e-3) * 1e9))
	}
	for clk.GetTime() < until {
	}
}

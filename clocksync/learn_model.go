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

// learnClockModel is LearnClockModel with the fit points spread over at
// least fitSpan seconds of the client's clock (see Config.FitSpan). The
// client also gets the model's own error bound against clk's reference
// (modelBound; 0 when the offset algorithm reports no uncertainty).
func learnClockModel(t Transport, pRef, otherRank int, clk Clock, o OffsetAlg, fitpoints int, recomputeIntercept bool, fitSpan float64) (LinearModel, float64, error) {
	if fitpoints < 1 {
		fitpoints = 1
	}
	me := t.Rank()
	switch me {
	case pRef: // process with reference clock
		for idx := 0; idx < fitpoints; idx++ {
			if _, err := o.MeasureOffset(t, clk, pRef, otherRank); err != nil {
				return LinearModel{}, 0, fmt.Errorf("learn clock model %d<-%d: fit point %d: %w", pRef, otherRank, idx, err)
			}
		}
		if recomputeIntercept {
			if _, err := ComputeAndSetIntercept(t, LinearModel{}, clk, o, pRef, otherRank); err != nil {
				return LinearModel{}, 0, fmt.Errorf("learn clock model %d<-%d: %w", pRef, otherRank, err)
			}
		}
		return LinearModel{}, 0, nil
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
				return LinearModel{}, 0, fmt.Errorf("learn clock model %d<-%d: fit point %d: %w", pRef, otherRank, idx, err)
			}
			xfit[idx] = ob.Timestamp
			yfit[idx] = ob.Offset
			ufit[idx] = ob.Uncertainty
			wfit[idx] = ob.Window
		}
		lm := FitWeightedLinearModel(xfit, yfit, posUncertainties(ufit))
		if recomputeIntercept {
			ob, err := o.MeasureOffset(t, clk, pRef, otherRank)
			if err != nil {
				return LinearModel{}, 0, fmt.Errorf("learn clock model %d<-%d: compute intercept: %w", pRef, otherRank, err)
			}
			lm.Intercept = lm.Slope*(-ob.Timestamp) + ob.Offset
			xfit, yfit, ufit, wfit = []float64{ob.Timestamp}, []float64{ob.Offset}, []float64{ob.Uncertainty}, []float64{ob.Window}
		}
		// The bound at the last measurement, the one nearest the knot
		// (the end of the sync): a tighter earlier point would need the
		// fitted slope's error over the time since, which is not known.
		n := len(xfit) - 1
		return lm, ModelBound(lm, xfit[n:], yfit[n:], ufit[n:], wfit[n:]), nil
	}
	return LinearModel{}, 0, nil
}

// ModelBound bounds |lm(x) - true offset| at the measurements: each one's
// truth lies within ufit[i] of its midpoint yfit[i] (SKaMPI's interval)
// while the clocks drift apart by at most |lm.Slope| over the
// measurement's window wfit[i] (nil: none), so at xfit[i] the model misses
// by at most |lm(xfit[i]) - yfit[i]| + ufit[i] + |lm.Slope|·wfit[i]; the
// smallest over the points is returned (the model's slope error between
// that point and the end of the sync, ns over the milliseconds a sync
// takes, is left out). A negative ufit[i] (intervals that did not overlap)
// counts by its size. 0 when some uncertainty is not known (0).
func ModelBound(lm LinearModel, xfit, yfit, ufit, wfit []float64) float64 {
	best := math.Inf(1)
	for i := range xfit {
		if i >= len(ufit) || ufit[i] == 0 || math.IsInf(ufit[i], 0) || math.IsNaN(ufit[i]) {
			return 0
		}
		b := math.Abs(lm.Slope*xfit[i]+lm.Intercept-yfit[i]) + math.Abs(ufit[i])
		if i < len(wfit) && wfit[i] > 0 {
			b += math.Abs(lm.Slope) * wfit[i]
		}
		best = math.Min(best, b)
	}
	if math.IsInf(best, 0) {
		return 0
	}
	return best
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

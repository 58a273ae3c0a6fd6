package clocksync

import (
	"math"
	"testing"
)

// TestFitWeightedLinearModel_UncertainPointCannotDragTheLine: 20 exact
// points on offset(x) = 1e-4*x + 5e-3 with uncertainty 0.1 µs and one
// point 1 ms off with uncertainty 1 ms (its SKaMPI interval was that wide).
// The weighted fit recovers the line; the plain fit does not.
func TestFitWeightedLinearModel_UncertainPointCannotDragTheLine(t *testing.T) {
	var x, y, u []float64
	for i := 0; i < 20; i++ {
		xi := float64(i) * 1e-3
		x, y, u = append(x, xi), append(y, 1e-4*xi+5e-3), append(u, 1e-7)
	}
	x, y, u = append(x, 10.5e-3), append(y, 1e-4*10.5e-3+5e-3+1e-3), append(u, 1e-3)
	w := FitWeightedLinearModel(x, y, u)
	p := FitLinearModel(x, y)
	at := 10e-3
	want := 1e-4*at + 5e-3
	if e := math.Abs(w.Offset(at) - want); e > 1e-9 {
		t.Errorf("weighted fit off by %.3g s at x=%g: %v", e, at, w)
	}
	if e := math.Abs(p.Offset(at) - want); e < 1e-6 {
		t.Errorf("plain fit off by only %.3g s: the case does not exercise the weights", e)
	}
	// Without uncertainties (0) the weighted fit is the plain fit.
	if z := FitWeightedLinearModel(x, y, make([]float64, len(x))); z != p {
		t.Errorf("unknown uncertainties: %v, want plain fit %v", z, p)
	}
}

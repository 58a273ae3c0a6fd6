package correct

import (
	"math"
	"testing"
)

// TestHermiteSlope_IsHermitesDerivative: the closed form is d0 and d1 at
// the ends and, inside, the difference quotient of hermite itself.
func TestHermiteSlope_IsHermitesDerivative(t *testing.T) {
	for _, tc := range []struct {
		name           string
		t0, t1         int64
		o0, o1, d0, d1 float64
	}{
		{"sine-like", 0, 2e9, 0, 1500, 1e-6, -2e-6},
		{"steep ends", 1e9, 4e9, -300, 200, 5e-6, 5e-6},
		{"flat chord", 0, 1e9, 100, 100, 3e-7, -3e-7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hermiteSlope(tc.t0, tc.t0, tc.t1, tc.o0, tc.o1, tc.d0, tc.d1); math.Abs(got-tc.d0) > 1e-15 {
				t.Errorf("at t0: %g, want d0 %g", got, tc.d0)
			}
			if got := hermiteSlope(tc.t1, tc.t0, tc.t1, tc.o0, tc.o1, tc.d0, tc.d1); math.Abs(got-tc.d1) > 1e-15 {
				t.Errorf("at t1: %g, want d1 %g", got, tc.d1)
			}
			for _, f := range []float64{0.1, 0.37, 0.5, 0.81} {
				x := tc.t0 + int64(f*float64(tc.t1-tc.t0))
				const dt = 1e3
				num := (hermite(x+dt, tc.t0, tc.t1, tc.o0, tc.o1, tc.d0, tc.d1) - hermite(x-dt, tc.t0, tc.t1, tc.o0, tc.o1, tc.d0, tc.d1)) / (2 * dt)
				if got := hermiteSlope(x, tc.t0, tc.t1, tc.o0, tc.o1, tc.d0, tc.d1); math.Abs(got-num) > 1e-9*math.Max(math.Abs(num), 1e-6) {
					t.Errorf("at %.2f of the interval: %g, difference quotient %g", f, got, num)
				}
			}
		})
	}
}

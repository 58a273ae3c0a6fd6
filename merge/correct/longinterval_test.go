package correct

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestOffsetModel_LongIntervalSlopeAtItsOwnScale is the shape of the CI
// run that failed TestNetns_ResyncHoldsNonLinearClocksOverTCP/hosts4_x1
// (2026-11-28: 2.66 µs off, bound 2 µs): knots every 50 ms (±20 %) over
// 4.8 s with knot errors of 0.5 or 1 µs (Gaussian σ; over TCP between
// namespace hosts), then one interval 900 ms wide, last (to the
// MPI_Finalize knot) or inside the run (short knots again after it, as
// when the adaptation shortens after a long interval). The spline took
// the derivative at the knot next to the long interval from the 50 ms
// secants beside it (noise σ/50 ms), and a Hermite interval 18 times as
// wide bent by ≈ 0.15 · 900 ms times that derivative's error: the model
// turned 1 µs of knot noise into 2.6 µs. The long interval now starts
// (ends) there with the derivative at its own scale (longIntervalEnds),
// so the
// model's worst error in the long interval over 200 seeds stays within
// 1.25 times the straight line's (which is the knot errors plus the
// chord's own miss), and its bend off the chord through its knots differs
// from the truth's off the chord through the true knots by at most σ, on a
// linear clock and on a 20 µs / 20 s sine. Before: 10.8-22.9 µs worst
// (the line 1.5-3.1 µs), a bend error of 20.6-20.8 σ; now 0.48-0.56 σ.
func TestOffsetModel_LongIntervalSlopeAtItsOwnScale(t *testing.T) {
	linear := func(x float64) float64 { return 5e6 + 100e3*x/1e9 }
	sine := func(x float64) float64 { return 1e6 + 20e3*math.Sin(2*math.Pi*x/20e9+0.7) }
	for _, tc := range []struct {
		name   string
		truth  func(float64) float64
		sigma  float64
		inside bool // the long interval is followed by short ones again
	}{
		{"linear, σ 0.5 µs, last", linear, 500, false},
		{"linear, σ 1 µs, last", linear, 1000, false},
		{"sine, σ 0.5 µs, last", sine, 500, false},
		{"sine, σ 1 µs, last", sine, 1000, false},
		{"linear, σ 0.5 µs, inside", linear, 500, true},
		{"sine, σ 1 µs, inside", sine, 1000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var worstModel, worstLine, worstBend float64
			for seed := range 200 {
				rng := rand.New(rand.NewSource(int64(seed)))
				var ts []int64
				for x := 0.0; x < 4.8e9; x += 50e6 * (0.8 + 0.4*rng.Float64()) {
					ts = append(ts, int64(x))
				}
				long := len(ts) - 1 // the long interval starts at knot long
				ts = append(ts, ts[long]+900e6)
				if tc.inside {
					for k := range 20 {
						ts = append(ts, ts[long+1]+int64(k+1)*50e6)
					}
				}
				off := make([]float64, len(ts))
				for i, v := range ts {
					off[i] = tc.truth(float64(v)) + tc.sigma*rng.NormFloat64()
				}
				model := newOffsetCurve(ts, off, DefaultScheme)
				line := newOffsetCurve(ts, off, LinearScheme)
				for k := 0; k <= 300; k++ {
					x := ts[long] + int64(float64(ts[long+1]-ts[long])*float64(k)/300)
					worstModel = math.Max(worstModel, math.Abs(model.at(long, x)-tc.truth(float64(x))))
					worstLine = math.Max(worstLine, math.Abs(line.at(long, x)-tc.truth(float64(x))))
					// the model's bend off the chord through its knots,
					// against the truth's off the chord through the true knots
					t0, t1 := float64(ts[long]), float64(ts[long+1])
					u := (float64(x) - t0) / (t1 - t0)
					trueChord := tc.truth(t0) + u*(tc.truth(t1)-tc.truth(t0))
					bend := (model.at(long, x) - line.at(long, x)) - (tc.truth(float64(x)) - trueChord)
					worstBend = math.Max(worstBend, math.Abs(bend))
				}
			}
			t.Logf("long interval: worst error %.3f µs, straight line %.3f µs; the model's bend off the truth's %.3f µs = %.2f σ (200 seeds)", worstModel/1e3, worstLine/1e3, worstBend/1e3, worstBend/tc.sigma)
			if worstModel > 1.25*worstLine {
				t.Errorf("the model's worst error in the long interval %.3f µs is more than 1.25× the straight line's %.3f µs: knot noise amplified by the width ratio", worstModel/1e3, worstLine/1e3)
			}
			if worstBend > tc.sigma {
				t.Errorf("the model's bend off the truth's %.3f µs exceeds the knot noise σ %.3f µs", worstBend/1e3, tc.sigma/1e3)
			}
		})
	}
}

// TestLongIntervalSlope_IsTheParabolaAtTheIntervalsScale: on knots of a
// parabola (exact) the slope at a long interval's near knot is the
// parabola's derivative, whichever side the long interval lies on and
// however far the knots on the other side reach.
func TestLongIntervalSlope_IsTheParabolaAtTheIntervalsScale(t *testing.T) {
	p := func(x float64) float64 { return 3 + 2e-6*x + 4e-18*x*x }
	dp := func(x float64) float64 { return 2e-6 + 8e-18*x }
	for _, tc := range []struct {
		name string
		ts   []int64
		i    int // the near knot
		long int // the long interval
	}{
		{"long last, knots reach back beyond it", []int64{0, 1e8, 2e8, 3e8, 4e8, 5e8, 6e8, 1.5e9}, 6, 6},
		{"long last, knots reach back less", []int64{0, 1e8, 2e8, 1.2e9}, 2, 2},
		{"long first", []int64{0, 1e9, 1.1e9, 1.2e9, 1.3e9}, 1, 0},
		{"long inside, on the right", []int64{0, 1e8, 2e8, 3e8, 1.3e9, 1.4e9, 1.5e9}, 3, 3},
		{"long inside, on the left", []int64{0, 1e8, 1.1e9, 1.2e9, 1.3e9, 1.4e9, 2e9}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.ts)
			h := make([]float64, n-1)
			m := make([]float64, n-1)
			for k := range h {
				h[k] = float64(tc.ts[k+1] - tc.ts[k])
				m[k] = (p(float64(tc.ts[k+1])) - p(float64(tc.ts[k]))) / h[k]
			}
			fixed := make([]float64, n)
			for k := range fixed {
				fixed[k] = math.NaN()
			}
			got := longIntervalSlope(h, m, fixed, tc.i, tc.long)
			if want := dp(float64(tc.ts[tc.i])); math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("slope %s, want the parabola's %s", fmt.Sprint(got), fmt.Sprint(want))
			}
		})
	}
}

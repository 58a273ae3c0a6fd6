package correct

import (
	"math"
	"math/rand"
	"testing"
)

// TestOffsetModel_LongEndIntervalLeavesAlongItsSecant: knots every 80 ms
// (±30 %) with Gaussian noise on a clock with drift, a 2 ppm frequency step
// and a 5 µs / 4 s sine, and a last knot (MPI_Finalize's) 4 or 8 spacings
// after the one before: the model's worst error in that last interval,
// over 300 seeds, stays within 1.2× the straight line's. Not-a-knot ends
// extended the close knots' cubic over the long interval: 1.4-6.8× the
// straight line's worst error here (decisions.md D56).
func TestOffsetModel_LongEndIntervalLeavesAlongItsSecant(t *testing.T) {
	truth := func(x float64) float64 { // offset in ns at local time x in ns
		s := x / 1e9
		v := 10e3 + 5e3*math.Sin(2*math.Pi*s/4) + 1e3*s
		if s > 1 {
			v += 2e3 * (s - 1)
		}
		return v
	}
	for _, tc := range []struct{ ratio, sigma float64 }{{4, 10}, {4, 50}, {8, 10}, {8, 50}} {
		var worstModel, worstLine float64
		for seed := range 300 {
			rng := rand.New(rand.NewSource(int64(seed)))
			var ts []int64
			for x := 0.0; x < 5.2e9; x += 80e6 * (0.7 + 0.6*rng.Float64()) {
				ts = append(ts, int64(x))
			}
			ts = append(ts, ts[len(ts)-1]+int64(tc.ratio*80e6))
			off := make([]float64, len(ts))
			for i, v := range ts {
				off[i] = truth(float64(v)) + tc.sigma*rng.NormFloat64()
			}
			n := len(ts)
			model := newOffsetCurve(ts, off, DefaultScheme)
			line := newOffsetCurve(ts, off, LinearScheme)
			for k := 0; k <= 200; k++ {
				x := ts[n-2] + int64(float64(ts[n-1]-ts[n-2])*float64(k)/200)
				worstModel = math.Max(worstModel, math.Abs(model.at(n-2, x)-truth(float64(x))))
				worstLine = math.Max(worstLine, math.Abs(line.at(n-2, x)-truth(float64(x))))
			}
		}
		t.Logf("last interval %v× its neighbour, knot noise %v ns: worst error %.0f ns, straight line %.0f ns", tc.ratio, tc.sigma, worstModel, worstLine)
		if worstModel > 1.2*worstLine {
			t.Errorf("last interval %v× its neighbour, knot noise %v ns: the model's worst error %.0f ns is more than 1.2× the straight line's %.0f ns", tc.ratio, tc.sigma, worstModel, worstLine)
		}
	}
}

package merge

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// noisyEpochs are knots every 2 s over 40 s of a linear clock (100 ppm),
// each knot's offset off by a Gaussian error of sigma ns.
func noisyEpochs(sigma float64, seed uint64) []trace.Epoch {
	rng := rand.New(rand.NewPCG(seed, 1))
	var eps []trace.Epoch
	for i := 0; i <= 20; i++ {
		at := int64(i) * 2e9
		eps = append(eps, trace.Epoch{Index: i, EndNS: at, Params: map[string]string{"bound_ns": strconv.Itoa(int(10 * sigma))},
			Model: trace.Model{T0: at, Slope: 100e-6, Intercept: 1e6 + 100e-6*float64(at) + sigma*rng.NormFloat64()}})
	}
	return eps
}

// TestErrorBars_SummaryFollowsTheKnotsNoise: a rank's error-bar summary
// (imbalance.json clock.error_bars) scales with its knots' noise, has
// ErrorBarSlices slices in time order with max ≥ median, and the reports'
// per-rank bound uses it where no happened-before facts exist; rank 0 and
// ranks without bars keep the old rules.
func TestErrorBars_SummaryFollowsTheKnotsNoise(t *testing.T) {
	var meds []float64
	for _, sigma := range []float64{10, 100} {
		c, _ := correct.NewCorrector(correct.ClockInterp, noisyEpochs(sigma, 3), 0)
		s, ok := summarizeErrorBars(c, 1)
		if !ok {
			t.Fatalf("σ %g: no summary", sigma)
		}
		if len(s.Series) != ErrorBarSlices || s.MaxNS < s.MedianNS || s.MedianNS <= 0 {
			t.Fatalf("σ %g: summary %+v", sigma, s)
		}
		for i := 1; i < len(s.Series); i++ {
			if s.Series[i][0] <= s.Series[i-1][0] {
				t.Errorf("σ %g: series not in time order: %v", sigma, s.Series)
			}
		}
		meds = append(meds, s.MedianNS)
	}
	if r := meds[1] / meds[0]; math.Abs(r-10) > 4 {
		t.Errorf("median bars %.1f and %.1f ns for knot noise 10 and 100 ns: ratio %.1f, want about 10", meds[0], meds[1], r)
	}
	c, _ := correct.NewCorrector(correct.ClockRaw, noisyEpochs(10, 3), 0)
	if _, ok := summarizeErrorBars(c, 1); ok {
		t.Errorf("raw mode has a summary; its error is unknown")
	}
	q := datamodel.ClockQuality{SyncBounds: []float64{0, 500, 700}, ErrBarsByRank: []float64{0, 42, -1},
		ErrorBars: []datamodel.RankErrorBars{{Rank: 1, MedianNS: 42}}, TypicalBoundNS: -1}
	for _, tc := range []struct {
		rank int32
		want float64
	}{{0, 0}, {1, 42}, {2, 700}} {
		if got := q.RankBoundNS(tc.rank); got != tc.want {
			t.Errorf("rank %d: bound %v, want %v", tc.rank, got, tc.want)
		}
	}
	if got := q.FlagBoundNS(); got != 42 {
		t.Errorf("flag bound %v, want the largest median error bar 42", got)
	}
}

package longrun

import (
	"strconv"
	"testing"
)

// goal is issue 38's bound on the corrected timestamps of a long run.
const goal = 2e-6

// TestLongRun_CorrectedTimestampsStayWithin2us: with resyncs at the
// adaptive policy's intervals and the default (smooth) correction, every
// sampled timestamp of every rank, between the knots as well as at them,
// is within 2 µs of the truth: random-walk clocks and a frequency step on
// top: random walk at 16,384 ranks for a simulated minute, step + random
// walk at 1,024 ranks for ten minutes (the full hour at 16,384 ranks, both
// shapes, runs in `make bench`, section 5; this test takes ≈ 12 s of CPU).
func TestLongRun_CorrectedTimestampsStayWithin2us(t *testing.T) {
	for _, tc := range []struct {
		ranks, nodes int
		dur          float64
		shape        Shape
	}{
		{16384, 1024, 60, RandomWalk},
		{1024, 64, 600, StepWander},
	} {
		t.Run(strconv.Itoa(tc.ranks)+"_ranks_"+strconv.Itoa(int(tc.dur))+"s_"+tc.shape.key(), func(t *testing.T) {
			r, err := Run(Config{Ranks: tc.ranks, Nodes: tc.nodes, Seed: 1, Duration: tc.dur, Shape: tc.shape})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d knots (intervals %.2f-%.2f s), max %.3f µs (rank %d at %.1f s), p99 %.3f µs, at knots %.3f µs; %d timestamps; resyncs %.2f ms each, %.3f %% of the run; wall %.1f s + %.1f s",
				r.Shape, r.Knots, r.MinInterval, r.MaxInterval, r.MaxErr*1e6, r.WorstRank, r.WorstT, r.P99Err*1e6, r.KnotMaxErr*1e6,
				r.Samples, r.ResyncVirtual*1e3, r.ResyncShare*100, r.SimWall, r.CorrectWall)
			if r.MaxErr > goal {
				t.Errorf("max error %.3f µs over the goal %.1f µs", r.MaxErr*1e6, goal*1e6)
			}
			// every interval sampled: the knots plus 8 per interval
			if want := int64(tc.ranks) * int64(r.Knots+8*(r.Knots-1)); r.Samples != want {
				t.Errorf("%d timestamps compared, want %d", r.Samples, want)
			}
			if min := int(tc.dur / (2 * 2)); r.Knots < min {
				t.Errorf("%d knots in %.0f s: fewer than the policy's longest interval (4 s) allows", r.Knots, tc.dur)
			}
		})
	}
}

func (s Shape) key() string {
	if s == StepWander {
		return "step_wander"
	}
	return "random_walk"
}

// TestLongRun_WithoutResyncsTheErrorIsFarLarger is the control: the same
// random-walk clocks synced only at the start and the end (no resyncs)
// are off by far more than the goal between them, so the test above can
// fail.
func TestLongRun_WithoutResyncsTheErrorIsFarLarger(t *testing.T) {
	r, err := Run(Config{Ranks: 1024, Nodes: 64, Seed: 1, Duration: 600, Shape: RandomWalk, NoResync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("no resyncs: %d knots, max %.1f µs, p99 %.1f µs", r.Knots, r.MaxErr*1e6, r.P99Err*1e6)
	if r.Knots != 2 {
		t.Errorf("%d knots, want 2 (start and end)", r.Knots)
	}
	if r.MaxErr < 10*goal {
		t.Errorf("without resyncs the error is only %.3f µs: the clocks do not wander enough to test the resyncs", r.MaxErr*1e6)
	}
}

// TestQuantile_WithinABinOfTheTruth: the histogram's percentiles are
// within its relative bin width (0.1 %) of the exact ones.
func TestQuantile_WithinABinOfTheTruth(t *testing.T) {
	hist := make([]int64, histBins)
	var n int64
	for i := 1; i <= 1000; i++ {
		hist[histIndex(float64(i)*1e-9)]++
		n++
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 500e-9}, {0.99, 990e-9}, {1, 1000e-9}} {
		got := quantile(hist, n, c.q)
		if got < c.want || got > c.want*histStep*1.0001 {
			t.Errorf("q%.2f = %g, want %g (+0.1 %%)", c.q, got, c.want)
		}
	}
}

package tests

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace"
)

const fakeSpec = "5000000:100,-5000000:-100"

// fakePairs mirrors fakeSpec: emulated node i gets pair i%2.
var fakePairs = [][2]float64{{5e6, 100}, {-5e6, -100}}

// correctEpochs maps local time t to global time the way tracemerge's
// default --clock=interp does (correct.NewCorrector: epoch 0's model before
// its end, the secant between the epochs' end knots, epoch 1's model
// after), falling back like merge when an epoch is missing.
func correctEpochs(m *trace.Meta, t int64) float64 {
	c, _ := correct.NewCorrector(correct.ClockInterp, m.Epochs, 0)
	return c.Global(t)
}

// TestInjectedClock_CorrectedTimesMatchTruth runs with emulated nodes and
// injected offsets/drifts, checks the recorded injection, and corrects
// every event time with the recorded epochs; the result must be rank 0's
// clock at the true instant (trace.Injection.TrueTime) within a bound.
func TestInjectedClock_CorrectedTimesMatchTruth(t *testing.T) {
	needSetup(t)
	// Bound on |corrected - truth|. The ranks share one physical clock, so
	// this is the sync error alone; on 2 oversubscribed vCPUs it is
	// dominated by scheduling noise in the ping-pongs.
	const boundNS = 50e3
	for _, tc := range []struct{ np, nodeSize int }{{2, 1}, {2, 2}, {4, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("np%d_node%d", tc.np, tc.nodeSize), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tr")
			r := mpirun(t, run{NP: tc.np, Preload: true, Prog: "clockprog", Args: []string{"40", "3000"},
				Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_NODE_SIZE=" + fmt.Sprint(tc.nodeSize), "GCLOCK_FAKE_CLOCK=" + fakeSpec}})
			if r.Code != 0 {
				t.Fatalf("clockprog exited %d:\n%s", r.Code, r.Stderr)
			}
			traces := readTraces(t, dir, tc.np)
			for rank, rt := range traces {
				h := rt.Meta.Header
				node := rank / tc.nodeSize
				p := fakePairs[node%len(fakePairs)]
				in := h.Inject
				if in == nil || in.Spec != fakeSpec || in.NodeSize != tc.nodeSize || in.OffsetNS != p[0] || in.DriftPPM != p[1] || h.NodeID != node {
					t.Fatalf("rank %d: node %d inject %+v; want node %d offset %v drift %v size %d", rank, h.NodeID, in, node, p[0], p[1], tc.nodeSize)
				}
				if len(rt.Events) != 80 {
					t.Errorf("rank %d: %d events, want 80", rank, len(rt.Events))
				}
			}
			in0 := traces[0].Meta.Header.Inject
			truth := func(rank int, rec int64) float64 {
				tt := traces[rank].Meta.Header.Inject.TrueTime(rec)
				return tt + in0.OffsetNS + in0.DriftPPM*1e-6*tt
			}
			var maxErr, maxEp0, maxRaw float64
			for rank, rt := range traces {
				e0, _ := rt.Meta.Epoch(0)
				for _, ev := range rt.Events {
					for _, ts := range []int64{ev.EnterNS, ev.ExitNS} {
						want := truth(rank, ts)
						maxErr = math.Max(maxErr, math.Abs(correctEpochs(rt.Meta, ts)-want))
						maxEp0 = math.Max(maxEp0, math.Abs(e0.Model.Global(ts)-want))
						maxRaw = math.Max(maxRaw, math.Abs(float64(ts)-want))
					}
				}
			}
			alg := traces[0].Meta.Epochs[0].Algorithm
			t.Logf("%s: max |error| %.2f us with both epochs, %.2f us with epoch 0 only, %.0f us uncorrected",
				alg, maxErr/1e3, maxEp0/1e3, maxRaw/1e3)
			if maxErr > boundNS {
				t.Errorf("corrected times off by up to %.1f us (bound %.0f us)", maxErr/1e3, boundNS/1e3)
			}
			if tc.np/tc.nodeSize > 1 && maxRaw < 1e6 {
				t.Errorf("uncorrected error only %.0f us: the injection did not take effect", maxRaw/1e3)
			}
		})
	}
}

package tests

import (
	"math"
	"testing"

	"github.com/gclock/gclock/merge"
)

// TestAccuracy_NonLinearInjectionIsExactlyTheChordError: rank 1's clock
// wanders by a 20 µs sine (20 s period) or steps its frequency by 1 ppm
// mid-run; with the MPI_Init and MPI_Finalize epochs only, the corrected
// timeline must be off by exactly what a straight line between the two
// knots misses of the injected curve (the chord geometry), event by event.
// This proves the non-linear injection and its truth (trace.Injection)
// agree to the nanosecond level; resync epochs (docs/clocksync.md) exist to
// shrink this error.
func TestAccuracy_NonLinearInjectionIsExactlyTheChordError(t *testing.T) {
	needSetup(t)
	for _, tc := range []struct {
		name, fake string
	}{
		{"sine", "0:0,1e6:10+sin(20us,20s)"},
		{"step", "0:0,1e6:10+step(4s,1ppm)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 8 s of (sleep 40 ms, Barrier, Allreduce)
			traces, _ := runClockprog(t, accRun{NP: 2, NodeSize: 1, Fake: tc.fake, Iters: 200, SleepUS: 40000,
				Env: []string{"GCLOCK_RESYNC=0"}})
			in1 := traces[1].Meta.Header.Inject
			if in1 == nil || len(in1.Terms) != 1 {
				t.Fatalf("rank 1 header: injection %+v, want one non-linear term", in1)
			}
			c, _ := merge.NewCorrector(merge.ClockInterp, traces[1].Meta.Epochs, 0)
			e0, _ := traces[1].Meta.Epoch(0)
			e1, _ := traces[1].Meta.Epoch(1)
			t0, t1 := in1.TrueTime(e0.EndNS), in1.TrueTime(e1.EndNS)
			x0, x1 := in1.Extra(t0), in1.Extra(t1)
			chord := func(raw float64) float64 { return in1.Extra(raw) - (x0 + (x1-x0)*(raw-t0)/(t1-t0)) }
			in0 := traces[0].Meta.Header.Inject
			worstPred, worstDev := 0.0, 0.0
			for _, ev := range traces[1].Events {
				for _, ts := range []int64{ev.EnterNS, ev.ExitNS} {
					raw := in1.TrueTime(ts)
					err := c.Global(ts) - in0.Recorded(raw) // corrected minus truth
					pred := chord(raw)
					worstPred = math.Max(worstPred, math.Abs(pred))
					worstDev = math.Max(worstDev, math.Abs(err-pred))
				}
			}
			t.Logf("%s: chord error up to %.2f µs; measured minus predicted at most %.3f µs", tc.name, worstPred/1e3, worstDev/1e3)
			if worstPred < 2e3 {
				t.Errorf("the injected %s bends the clock by only %.2f µs against the chord: the term did not take effect", tc.name, worstPred/1e3)
			}
			if worstDev > 1e3 {
				t.Errorf("corrected error deviates from the chord geometry by up to %.3f µs (bound 1 µs): injection and truth disagree", worstDev/1e3)
			}
		})
	}
}

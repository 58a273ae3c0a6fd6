package tests

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/correct"
)

// TestAccuracy_NonLinearInjectionIsExactlyTheChordError: rank 1's clock
// wanders by a 20 µs sine (20 s period) or steps its frequency by 1 ppm
// mid-run; with the MPI_Init and MPI_Finalize epochs only, the corrected
// timeline must be off by exactly what a straight line between the two
// knots misses of the injected curve (the chord geometry), event by event.
// This proves the non-linear injection and its truth (trace.Injection)
// agree to the nanosecond level; resync epochs (docs/explanation/clocksync.md) exist to
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
			c, _ := correct.NewCorrector(correct.ClockInterp, traces[1].Meta.Epochs, 0)
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

// TestAccuracy_ResyncHoldsNonLinearClocks: the same non-linear clocks with
// resync epochs (GCLOCK_RESYNC default, 2 s, adapted) and tracemerge's
// default model through the knots (a cubic spline with kinks where a
// frequency step shows, merge/correct/offsetmodel.go): every corrected timestamp
// within 2 µs of the truth (issue 10's goal) for a 1 ppm frequency step, a
// 20 µs / 20 s sine and a random-walk frequency at 2 and 4 ranks on 2
// emulated nodes, a linear injection within 0.1 µs (beyond what the sync
// itself missed at the knots: 1.25 × the largest knot error is added); and
// the true error within the error bar (correct.Corrector.ErrorBar) at ≥ 99 %
// of the timestamps of the ranks other than rank 0. Issue 38's 0.3 µs is
// logged, not asserted: most runs meet it, but a step near a knot was
// 1.7 µs off in one full `make test` (2026-11-28), as were straight lines.
func TestAccuracy_ResyncHoldsNonLinearClocks(t *testing.T) {
	mp := mpis(t)
	for _, tc := range []struct {
		mpi        *mpiImpl
		name, fake string
		np, node   int
		bound      float64
	}{
		{mp[0], "sine_2ranks", "0:0,1e6:10+sin(20us,20s)", 2, 1, 2e3},
		{mp[0], "sine_4ranks_2nodes", "0:0,1e6:10+sin(20us,20s)", 4, 2, 2e3},
		{mp[0], "step_2ranks", "0:0,1e6:10+step(4s,1ppm)", 2, 1, 2e3},
		{mp[0], "step_4ranks_2nodes", "0:0,1e6:10+step(4s,1ppm)", 4, 2, 2e3},
		{mp[0], "randomwalk_2ranks", "0:0,1e6:10+rw(1s,0.05ppm,7)", 2, 1, 2e3},
		{mp[0], "randomwalk_4ranks_2nodes", "0:0,1e6:10+rw(1s,0.05ppm,7)", 4, 2, 2e3},
		{mp[0], "linear_2ranks", "5e6:100,-5e6:-100", 2, 1, 100},
		{mp[1], "step_4ranks_2nodes", "0:0,1e6:10+step(4s,1ppm)", 4, 2, 2e3},
	} {
		t.Run(tc.mpi.Name+"/"+tc.name, func(t *testing.T) {
			// No budget: this test holds the model and the interval rule
			// to the truth with knots at most GCLOCK_RESYNC apart. An 8 s
			// run's 0.1 % (8 ms) buys 2-3 resync epochs of 1-4 ms at 4
			// ranks on 2 loaded cores, or none after one of 135 ms, and
			// the knots then lie 5-12 s apart (a 20 µs / 20 s sine was
			// 3 µs off, a 1 ppm step 2 µs). The default budget is
			// TestResync_BudgetHoldsAtTheDefault's, and `make bench`
			// section 4 measures it over 40 s and 10 minutes.
			traces, _ := runClockprog(t, accRun{MPI: tc.mpi, NP: tc.np, NodeSize: tc.node, Fake: tc.fake, Iters: 200, SleepUS: 40000,
				Env: []string{"GCLOCK_RESYNC_BUDGET=0"}})
			resyncs := 0
			var intervals []string
			for _, e := range traces[0].Meta.Epochs {
				if e.Params["resync"] != "" {
					resyncs++
					intervals = append(intervals, e.Params["next_interval_s"])
				}
			}
			a := measureAccuracy(t, traces, nil)
			t.Logf("%s: %d resync epochs (next intervals %v s); max |corrected - truth| %.3f µs (p99 %.3f µs), straight lines between knots %.3f µs; init model alone %.2f µs; error bars cover %.2f%% of ranks 1+'s timestamps, median bar %.1f ns, median error %.1f ns (%.1f×)",
				tc.name, resyncs, intervals, a.MaxInterp/1e3, a.P99Interp/1e3, a.MaxLinear/1e3, a.MaxInit/1e3, 100*a.BarCover, a.BarMedian, a.ErrMedian, a.BarMedian/a.ErrMedian)
			share, costs := resyncShare(traces)
			t.Logf("%s: resyncs took %.4f %% of the run (no budget; the slowest rank's ms per epoch:%s)", tc.name, 100*share, costs)
			if resyncs < 2 {
				t.Errorf("%d resync epochs in an 8 s run with GCLOCK_RESYNC=2", resyncs)
			}
			// The bound is the model's: what the sync itself missed at the
			// knots comes on top (on this 2-core machine at load 12-16 a
			// resync of 0.6 s missed by 2.5 µs with a bound of 0.4 µs; no
			// curve through the knots can correct that). The figure
			// against the bound alone is logged and in docs/explanation/clock-accuracy.md.
			ke := maxKnotError(traces)
			if a.MaxInterp > tc.bound+1.25*ke {
				t.Errorf("corrected times off by up to %.3f µs (bound %.3f µs + 1.25 × the largest knot error %.3f µs) at %s; knots' true errors:\n%s",
					a.MaxInterp/1e3, tc.bound/1e3, ke/1e3, worstTimestamp(traces), knotErrors(traces))
			} else if a.MaxInterp > tc.bound {
				t.Logf("over %.3f µs because a knot missed by %.3f µs (the sync under load)", tc.bound/1e3, ke/1e3)
			}
			if a.MaxInterp > 300 {
				t.Logf("issue 38's 0.3 µs not met in this run: %.3f µs", a.MaxInterp/1e3)
			}
			if tc.bound <= 2e3 && tc.mpi == mp[0] && a.BarCover < 0.99 {
				t.Errorf("the true error lies within the error bar at %.2f%% of the timestamps, want ≥ 99%%; knots' true errors:\n%s", 100*a.BarCover, knotErrors(traces))
			}
		})
	}
}

// TestResync_HundredsOfEpochsKeepComing: a long run makes hundreds of
// resync epochs (here GCLOCK_RESYNC=0.01, not adapted, over about 2 s on 2 emulated nodes,
// so H2HCA's node and leader communicators are in play at each one). Every
// epoch must reuse the sync's communicators: creating new ones each time
// exhausted the shim's table of private communicators after about 30
// epochs (a minute at the default interval) and would exhaust MPICH's
// context ids later, silently ending the resyncs.
func TestResync_HundredsOfEpochsKeepComing(t *testing.T) {
	needSetup(t)
	const iters = 200
	traces, r := runClockprog(t, accRun{NP: 4, NodeSize: 2, Fake: "0:0,1e6:10+sin(20us,2s)",
		Iters: iters, SleepUS: 10000, Env: []string{"GCLOCK_RESYNC=0.01", "GCLOCK_RESYNC_ADAPT=0"}})
	if strings.Contains(r.Stderr, "resync") {
		t.Errorf("the recorder warned about resync epochs:\n%s", r.Stderr)
	}
	for rank, rt := range traces {
		resyncs := 0
		for _, e := range rt.Meta.Epochs {
			if e.Params["resync"] != "" {
				resyncs++
			}
		}
		// One meeting per iteration at most (one barrier each), epochs
		// every 10 ms of a run of at least iters*10 ms: far more than
		// the 32 the old code managed; allow for a loaded machine.
		if resyncs < 64 {
			t.Errorf("rank %d: %d resync epochs in a %d-iteration run with GCLOCK_RESYNC=0.01, want >= 64", rank, resyncs, iters)
		}
		if rank == 0 {
			t.Logf("%d resync epochs", resyncs)
		}
	}
	// Knots 10 ms apart on a 20 µs / 2 s sine (≈ 200 µs/s²): the chord
	// between two of them misses by ≈ 2.5 ns, so what remains is the
	// knots' error as the corrector used them (a loose knot leans only on
	// near neighbours: correct.LooseKnotReach; a run of 19 loose knots moved
	// toward the line through its steady ends missed by 4-5 µs).
	a := measureAccuracy(t, traces, nil)
	dev, gap, chord := chordDeviation(t, traces)
	t.Logf("max |corrected - truth| %.3f µs; largest gap between knots %.0f ms, where the exact chord misses by up to %.3f µs; corrected minus exact chord at most %.3f µs",
		a.MaxInterp/1e3, gap/1e6, chord/1e3, dev/1e3)
	if a.MaxInterp > 2e3 {
		t.Errorf("corrected times off by up to %.3f µs (bound 2 µs); knots' true errors:\n%s", a.MaxInterp/1e3, knotErrors(traces))
	}
}

// chordDeviation compares every rank's corrected times (interp) with the
// chord through the exact truth at the rank's knots (epoch ends): the
// largest |corrected - chord|, the largest gap between consecutive knots
// (ns) and the largest |chord - truth| (the clock's bend between knots).
func chordDeviation(t *testing.T, traces []rankTrace) (dev, gap, chord float64) {
	t.Helper()
	in0 := traces[0].Meta.Header.Inject
	for rank, rt := range traces {
		in := rt.Meta.Header.Inject
		truth := func(ts float64) float64 { return in0.Recorded(in.TrueTime(int64(ts))) }
		c, note := correct.NewCorrector(correct.ClockInterp, rt.Meta.Epochs, 0)
		if c.Mode() != correct.ClockInterp {
			t.Fatalf("rank %d: interpolation not possible: %s", rank, note)
		}
		var knots []float64
		for _, e := range rt.Meta.Epochs {
			knots = append(knots, float64(e.EndNS))
		}
		sort.Float64s(knots)
		for i := 1; i < len(knots); i++ {
			gap = math.Max(gap, knots[i]-knots[i-1])
		}
		for _, ev := range withoutFlush(rt.Events) {
			for _, ts := range []int64{ev.EnterNS, ev.ExitNS} {
				x := float64(ts)
				i := sort.SearchFloat64s(knots, x)
				if i == 0 || i == len(knots) {
					continue // outside the knots: extrapolated, not a chord
				}
				k0, k1 := knots[i-1], knots[i]
				ch := truth(k0) + (truth(k1)-truth(k0))*(x-k0)/(k1-k0)
				dev = math.Max(dev, math.Abs(c.Global(ts)-ch))
				chord = math.Max(chord, math.Abs(ch-truth(x)))
			}
		}
	}
	return dev, gap, chord
}

// maxKnotError is the largest |knot − truth| over every epoch of every
// rank: what the sync itself missed, before any curve between knots.
func maxKnotError(traces []rankTrace) float64 {
	in0 := traces[0].Meta.Header.Inject
	worst := 0.0
	for _, rt := range traces {
		in := rt.Meta.Header.Inject
		for _, e := range rt.Meta.Epochs {
			worst = math.Max(worst, math.Abs(e.Model.Global(e.EndNS)-in0.Recorded(in.TrueTime(e.EndNS))))
		}
	}
	return worst
}

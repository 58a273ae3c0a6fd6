package tests

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
)

// TestRefine_BoundsHoldAndRefinedFollowsTheFacts: rank 1's clock wanders
// by a 60 µs sine of 8 s period and there are no resync epochs, so the
// chord between the init and finalize epochs misses the truth by many µs
// mid-run. The happened-before facts of the run's barriers and allreduces
// bound rank 1's corrected clock: the exact error must lie inside every
// cell's [lo, hi] (the bound holds), and --clock refined, which moves the
// clock into those ranges, must be within each call's fact width of the
// truth (so closer than interp wherever a fact is narrower than interp's
// error) and break no fact, i.e. have no clock-condition violation, but in
// cells whose facts contradict each other or that the slope limit could
// not reach.
func TestRefine_BoundsHoldAndRefinedFollowsTheFacts(t *testing.T) {
	needSetup(t)
	dir := filepath.Join(t.TempDir(), "tr")
	// The wander of rank 1's clock. With 20 µs interp missed by 27 µs, and
	// in a slow minute of the 2-vCPU CI VM every one of the 800 call ends'
	// facts was wider than that (median 50 µs): the test proved nothing
	// and failed (2026-11-25 18:40). 60 µs keeps interp's miss well above
	// the facts' usual widths (26–50 µs median).
	const sineNS, periodNS = 60e3, 8e9
	traces, _ := runClockprog(t, accRun{NP: 2, NodeSize: 1, Fake: "0:0,1e6:10+sin(60us,8s)", Iters: 200, SleepUS: 20000,
		Env: []string{"GCLOCK_RESYNC=0"}, Dir: dir})
	analyze := func(opt merge.Options) *merge.Result {
		run, err := rundir.Load(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer run.Close()
		res, err := merge.Analyze(run, opt)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := analyze(merge.Options{Clock: correct.ClockInterp})
	if first.Refinement == nil {
		t.Fatal("the interp pass computed no refinement")
	}
	refined := analyze(merge.RefinedOptions(merge.Options{}, first))
	in0 := traces[0].Meta.Header.Inject
	rt := traces[1]
	in := rt.Meta.Header.Inject
	ci, _ := correct.NewCorrector(correct.ClockInterp, rt.Meta.Epochs, 0)
	cr, _ := correct.NewCorrector(correct.ClockRefined, rt.Meta.Epochs, 0)
	cr.SetRefinement(first.Refinement.Move(1, cr.Origin()))
	// Each call of rank 1 here is a collective with rank 0 (the same
	// sequence on both ranks): its fact bounds rank 1's error to an
	// interval as wide as the two calls' durations.
	evs, evs0 := withoutFlush(rt.Events), withoutFlush(traces[0].Events)
	if len(evs) != len(evs0) || len(evs) == 0 {
		t.Fatalf("rank 1 has %d calls, rank 0 %d: not the same sequence", len(evs), len(evs0))
	}
	span := float64(evs[len(evs)-1].ExitNS - evs[0].EnterNS)
	// The error's slope: the sine's 2π·A/P plus interp's chord, at most
	// 2A over the run.
	rate := 2*math.Pi*sineNS/periodNS + 2*sineNS/span
	var errI, errR, worstOver float64
	over := 0   // call ends where refined is off by more than their fact's width
	closer := 0 // call ends whose fact is narrower than interp's error
	for i, ev := range evs {
		if ev.Op != evs0[i].Op {
			t.Fatalf("call %d: rank 1 %v, rank 0 %v: not the same sequence", i, ev.Op, evs0[i].Op)
		}
		d1, d0 := float64(ev.ExitNS-ev.EnterNS), float64(evs0[i].ExitNS-evs0[i].EnterNS)
		width := (d0+d1)*(1+1e-4) + rate*d1 + 1 // in rank 0's time, plus the wander within the call, plus rounding
		for _, ts := range []int64{ev.EnterNS, ev.ExitNS} {
			want := in0.Recorded(in.TrueTime(ts))
			eI, eR := math.Abs(ci.Global(ts)-want), math.Abs(cr.Global(ts)-want)
			errI, errR = math.Max(errI, eI), math.Max(errR, eR)
			if width < eI {
				closer++ // the fact beats interp here: refined must be closer
			}
			if eR > width {
				over++
				worstOver = math.Max(worstOver, eR-width)
			}
		}
	}
	b := first.Analysis.Clock
	rc := refined.Analysis.Clock
	t.Logf("interp: max |error| %.2f µs, bound %.2f µs over %d ranks, %d cells outside; refined: max |error| %.2f µs, moved %d ranks by up to %.2f µs, %d limited points; violations interp %d refined %d",
		errI/1e3, b.BoundNS/1e3, b.BoundRanks, b.BoundOutside, errR/1e3, rc.RefineMoved, rc.RefineMaxNS/1e3, b.RefineLimited, b.Violations, rc.Violations)
	t.Logf("refined off by more than the call's fact width at %d of %d call ends; facts narrower than interp's error at %d", over, 2*len(evs), closer)
	var r1 *datamodel.RankBound
	for i, rb := range b.Bounds {
		t.Logf("rank %d: %d facts, bound %.2f µs, width median %.2f µs max %.2f µs, %d cells outside, %d contradictions (%d facts), %d disagreements, %d limited (%d facts)",
			rb.Rank, rb.Facts, rb.BoundNS/1e3, rb.MedianWidthNS/1e3, rb.MaxWidthNS/1e3, rb.Outside, rb.Contradictions, rb.ContradictionFacts, rb.Disagreements, rb.Limited, rb.LimitedFacts)
		if rb.Rank == 1 {
			r1 = &b.Bounds[i]
		}
	}
	if r1 == nil || r1.Facts < len(evs)/2 {
		t.Fatalf("rank 1 has too few happened-before facts (bounds %+v) for %d calls", b.Bounds, len(evs))
	}
	if errI < 5e3 {
		t.Errorf("interp is off by only %.2f µs: the sine did not bend the clock, the test proves nothing", errI/1e3)
	}
	if b.BoundNS < 0 || errI > b.BoundNS+100 {
		t.Errorf("interp's true error %.2f µs exceeds the happened-before bound %.2f µs: the bound does not hold", errI/1e3, b.BoundNS/1e3)
	}
	// What the refinement guarantees: at a fact's call the move lies
	// inside its cell's range, which is inside the fact's own interval,
	// and so is the truth: refined is off by at most that interval's
	// width (the two calls' durations). Excepted: the facts of
	// contradictory cells (their midpoint may lie outside some of them)
	// and of cells next to a station the slope limit could not reach
	// (merge.RefineMaxRate). Where a fact is narrower than interp's error
	// this makes refined strictly closer to the truth than interp; the
	// largest errors are not comparable: where a loaded machine stretched
	// the facts wider than interp's error nothing tells the refinement to
	// move, and refined's largest error can be interp's (measured 32.30 vs
	// 32.37 µs under load).
	excused := r1.ContradictionFacts + r1.LimitedFacts
	if over > 2*excused {
		t.Errorf("refined is off by more than its fact's width at %d call ends (by up to %.2f µs over it), %d facts are in contradictory cells or next to limited points: the refinement did not follow the facts",
			over, worstOver/1e3, excused)
	}
	// A refinement that did not move would be off by more than its
	// fact's width at every such call end, which the check above catches
	// (as long as there are more of them than it excuses). Under heavy
	// load most facts are wider than interp's error (2 of 800 call ends
	// narrower with both cores busy and the facts 16 ms wide, median);
	// with none the test proves nothing.
	if closer == 0 {
		t.Errorf("the facts are narrower than interp's error at none of %d call ends: the test proves nothing (interp off by %.2f µs, facts %.2f µs wide, median)",
			2*len(evs), errI/1e3, r1.MedianWidthNS/1e3)
	}
	// Likewise it keeps every fact (no clock-condition violation) but
	// those: disagreeing neighbours are met by two knots.
	if v := rc.Violations; v > excused {
		t.Errorf("refined timeline: %d clock-condition violations, only %d facts are in contradictory cells or next to limited points (%d disagreement points)", v, excused, b.Disagreements)
	}
}

// TestRefine_PointToPointMessagesBoundTheClock: as above, rank 1's clock
// wanders by a 60 µs sine and there is no resync, but the ranks exchange
// only point-to-point messages (MPI_Sendrecv) between MPI_Init and
// MPI_Finalize. Without collectives the interp pass has no fact about
// rank 1 and the refinement could not move (the control); --clock
// refined's first pass (merge.PlanRefined) takes the messages with rank 0
// as facts, so wherever a message's two calls are narrower than interp's
// error the refined clock must be within their durations of the truth.
func TestRefine_PointToPointMessagesBoundTheClock(t *testing.T) {
	needSetup(t)
	dir := filepath.Join(t.TempDir(), "tr")
	const sineNS, periodNS = 60e3, 8e9
	traces, _ := runClockprog(t, accRun{NP: 2, NodeSize: 1, Fake: "0:0,1e6:10+sin(60us,8s)", Iters: 200, SleepUS: 20000,
		Env: []string{"GCLOCK_RESYNC=0"}, Dir: dir, P2P: true})
	load := func() (*rundir.Run, error) { return rundir.Load(dir, nil) }
	// The control: the collectives-only pass finds nothing to move.
	run, err := load()
	if err != nil {
		t.Fatal(err)
	}
	first, err := merge.Analyze(run, merge.Options{Clock: correct.ClockInterp})
	run.Close()
	if err != nil {
		t.Fatal(err)
	}
	if first.Refinement == nil || len(first.Refinement.Points[1]) != 0 {
		t.Fatalf("the collectives alone moved rank 1 (refinement %+v): the run has collectives, the control proves nothing", first.Refinement)
	}
	plan, err := merge.PlanRefined(load, merge.Options{Clock: correct.ClockRefined}, merge.P2POptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := plan.Options.Refine
	if ref == nil || len(ref.Points[1]) == 0 {
		t.Fatalf("--clock refined did not move rank 1 (refinement %+v): the messages with rank 0 gave no facts", ref)
	}
	in0 := traces[0].Meta.Header.Inject
	rt := traces[1]
	in := rt.Meta.Header.Inject
	ci, _ := correct.NewCorrector(correct.ClockInterp, rt.Meta.Epochs, 0)
	cr, _ := correct.NewCorrector(correct.ClockRefined, rt.Meta.Epochs, 0)
	cr.SetRefinement(ref.Move(1, cr.Origin()))
	evs, evs0 := calls(rt.Events), calls(traces[0].Events)
	if len(evs) != len(evs0) || len(evs) == 0 {
		t.Fatalf("rank 1 has %d calls, rank 0 %d: not the same sequence", len(evs), len(evs0))
	}
	span := float64(evs[len(evs)-1].ExitNS - evs[0].EnterNS)
	rate := 2*math.Pi*sineNS/periodNS + 2*sineNS/span
	var errI, errR float64
	narrow, within := 0, 0 // call ends whose fact is under half interp's error; of them, refined within the fact
	for i, ev := range evs {
		if ev.Op != evs0[i].Op || ev.Op.String() != "MPI_Sendrecv" {
			t.Fatalf("call %d: rank 1 %v, rank 0 %v: not the program's MPI_Sendrecv sequence", i, ev.Op, evs0[i].Op)
		}
		// Each MPI_Sendrecv both sends to and receives from the other
		// rank: e_1 lies within the two calls' durations (in rank 0's
		// time), plus the wander within the call and rounding.
		d1, d0 := float64(ev.ExitNS-ev.EnterNS), float64(evs0[i].ExitNS-evs0[i].EnterNS)
		width := (d0+d1)*(1+1e-4) + rate*d1 + 1
		for _, ts := range []int64{ev.EnterNS, ev.ExitNS} {
			want := in0.Recorded(in.TrueTime(ts))
			eI, eR := math.Abs(ci.Global(ts)-want), math.Abs(cr.Global(ts)-want)
			errI, errR = math.Max(errI, eI), math.Max(errR, eR)
			if width < eI/2 {
				narrow++
				if eR <= width {
					within++
				}
			}
		}
	}
	t.Logf("interp: max |error| %.2f µs; refined with the messages' facts: %.2f µs; %d of %d call ends have a fact under half interp's error there, refined is within the fact at %d of them",
		errI/1e3, errR/1e3, narrow, 2*len(evs), within)
	if errI < 5e3 {
		t.Errorf("interp is off by only %.2f µs: the sine did not bend the clock, the test proves nothing", errI/1e3)
	}
	// (on a quiet machine about one in ten: the sine's error is small
	// near its zeros and the first MPI_Sendrecv of a round waits)
	if narrow < 10 {
		t.Errorf("only %d of %d call ends have a fact under half interp's error: the test proves nothing (machine too loaded?)", narrow, 2*len(evs))
	}
	// A cell whose facts contradict each other (a clock that wandered
	// within the 50 ms cell by more than the facts' width) or that the
	// slope limit could not reach may miss: at most one in ten.
	if within*10 < narrow*9 {
		t.Errorf("refined is within its message's fact at only %d of %d call ends where the fact is under half interp's error: the refinement did not follow the messages", within, narrow)
	}
}

package merge

import (
	"math"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// TestCLC_TentEnvelope: every repaired event moves forward by its
// violation (+1 ns), the move's slope stays within CLCRate (local order
// and intervals kept), it vanishes far from the repairs, and a second
// repair on top of a first adds to the move where the first left off.
func TestCLC_TentEnvelope(t *testing.T) {
	first := NewCLC(0, nil, []datamodel.Repair{{Rank: 1, G: 1e6, D: 500}, {Rank: 1, G: 1.01e6, D: 2000}, {Rank: 3, G: 5e6, D: 100}})
	for _, tc := range []struct {
		rank    int32
		g, want float64
	}{
		{1, 1e6, 2001 - CLCRate*1e4}, // under the larger neighbour's tent
		{1, 1.01e6, 2001},
		{3, 5e6, 101},
		{3, 5e6 + 101/CLCRate + 1, 0},
		{2, 1e6, 0},
	} {
		if got := first.at(tc.rank, tc.g); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("rank %d at %g: move %g, want %g", tc.rank, tc.g, got, tc.want)
		}
	}
	prev := math.NaN()
	for g := 0.9e6; g < 1.2e6; g += 100 {
		v := first.at(1, g)
		if !math.IsNaN(prev) && math.Abs(v-prev) > CLCRate*100+1e-9 {
			t.Fatalf("slope at %g: %g per 100 ns, want at most %g", g, v-prev, CLCRate*100)
		}
		prev = v
	}
	// a violation found on the moved timeline: 300 ns more at the same event
	second := NewCLC(0, first, []datamodel.Repair{{Rank: 3, G: 5e6 + 101, D: 300}})
	if got := second.at(3, 5e6); math.Abs(got-402) > 0.01 {
		t.Errorf("second repair: move %g at the event, want about 101+300+1", got)
	}
	if second.Repairs != 4 || second.Ranks() != 2 {
		t.Errorf("repairs %d on %d ranks, want 4 on 2", second.Repairs, second.Ranks())
	}
}

// TestPlanRefined_RepairsWhatRefinementLeaves: epoch models off by tens of
// µs (noise the facts cannot fully remove between knots) leave violations
// on the interpolated and the refined timeline; the controlled logical
// clock repairs them all without reordering any rank's events.
func TestPlanRefined_RepairsWhatRefinementLeaves(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 8, NodeSize: 1, Steps: 3000, Seed: 11, Halo: true, ModelNoiseNS: 40e3, ComputeNS: 5000})
	load := func() (*rundir.Run, error) { return rundir.Load(dir, nil) }
	count := func(opt Options) (coll, p2p int, evs []datamodel.GEvent) {
		run, err := load()
		if err != nil {
			t.Fatal(err)
		}
		defer run.Close()
		c := &collect{ordered: true}
		opt.Sinks = []datamodel.Sink{c}
		pass, err := Prepare(run, opt)
		if err != nil {
			t.Fatal(err)
		}
		st := NewP2PStream(run, P2POptions{Clock: opt.Clock}, nil)
		pass.AddStreamSink(st)
		res, err := pass.Run()
		if err != nil {
			t.Fatal(err)
		}
		return res.Analysis.Clock.Violations, st.Result().Violations, c.ev
	}
	ci, pi, _ := count(Options{Clock: correct.ClockInterp})
	plan, err := PlanRefined(load, Options{Clock: correct.ClockRefined}, P2POptions{})
	if err != nil {
		t.Fatal(err)
	}
	noRepair := plan.Options
	noRepair.CLC = nil
	cr, pr, _ := count(noRepair)
	cc, pc, evs := count(plan.Options)
	t.Logf("violations (collective + p2p): interp %d+%d, refined %d+%d, repaired %d+%d; %d repair passes, %d repairs on %d ranks, largest move %.1f µs",
		ci, pi, cr, pr, cc, pc, plan.Passes, plan.Options.CLC.Repairs, plan.Options.CLC.Ranks(), plan.Options.CLC.MaxNS/1e3)
	if ci+pi == 0 || cr+pr == 0 {
		t.Fatalf("the noise left no violation to repair (interp %d, refined %d): the test proves nothing", ci+pi, cr+pr)
	}
	if plan.Before != cr+pr {
		t.Errorf("plan saw %d violations before repair, the refined pass %d", plan.Before, cr+pr)
	}
	if cc+pc != 0 {
		t.Errorf("%d collective and %d point-to-point violations left after the repair", cc, pc)
	}
	// local order kept: an event that began after another ended locally
	// still begins after it
	last := map[int32]datamodel.GEvent{}
	for _, e := range evs {
		if p, ok := last[e.Rank]; ok && e.RawEnter >= p.RawExit && e.Enter < p.Exit {
			t.Fatalf("rank %d: %v enters at %.0f before the previous %v's exit %.0f", e.Rank, e.Op, e.Enter, p.Op, p.Exit)
		}
		if e.Exit < e.Enter {
			t.Fatalf("rank %d: exit %.0f before enter %.0f", e.Rank, e.Exit, e.Enter)
		}
		last[e.Rank] = e
	}
}

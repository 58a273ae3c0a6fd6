package merge

import (
	"math"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// Hand-built instances, one or more per wait class, with the waits and
// causes the Scalasca patterns prescribe.
func TestCollectiveWaits_FollowPatternPerOpClass(t *testing.T) {
	cases := []struct {
		name        string
		op          trace.Op
		root        int
		enter, exit []float64
		wait        []float64
		cause       []int
	}{
		{"barrier: everyone waits for the last entrant", trace.OpBarrier, -1,
			[]float64{0, 10, 30}, []float64{40, 40, 40},
			[]float64{30, 20, 0}, []int{2, 2, -1}},
		{"allreduce: wait capped at own call (clock error)", trace.OpAllreduce, -1,
			[]float64{0, 100}, []float64{20, 120},
			[]float64{20, 0}, []int{1, -1}},
		{"bcast: non-roots wait for a late root, root waits 0", trace.OpBcast, 0,
			[]float64{50, 0, 10, 70}, []float64{55, 60, 60, 75},
			[]float64{0, 50, 40, 0}, []int{-1, 0, 0, -1}},
		{"bcast: early root, late non-root: nobody waits", trace.OpBcast, 1,
			[]float64{100, 0}, []float64{110, 5},
			[]float64{0, 0}, []int{-1, -1}},
		{"scatter: root is not comm rank 0", trace.OpScatter, 2,
			[]float64{0, 5, 20}, []float64{30, 30, 25},
			[]float64{20, 15, 0}, []int{2, 2, -1}},
		{"bcast: root missing, no wait attributed", trace.OpScatterv, -1,
			[]float64{0, 5}, []float64{30, 30},
			[]float64{0, 0}, []int{-1, -1}},
		{"reduce: early root waits for last non-root, non-roots 0", trace.OpReduce, 0,
			[]float64{0, 30, 10}, []float64{40, 32, 12},
			[]float64{30, 0, 0}, []int{1, -1, -1}},
		{"gather: late root waits 0", trace.OpGather, 1,
			[]float64{0, 30, 10}, []float64{2, 35, 12},
			[]float64{0, 0, 0}, []int{-1, -1, -1}},
		{"gatherv: root wait capped at its call", trace.OpGatherv, 0,
			[]float64{0, 100}, []float64{10, 101},
			[]float64{10, 0}, []int{1, -1}},
		{"scan: prefix dependency on lower ranks only", trace.OpScan, -1,
			[]float64{10, 0, 30, 5}, []float64{40, 40, 40, 40},
			[]float64{0, 10, 0, 25}, []int{-1, 0, -1, 2}},
		{"exscan: a late high rank makes nobody wait", trace.OpExscan, -1,
			[]float64{0, 0, 50}, []float64{5, 5, 55},
			[]float64{0, 0, 0}, []int{-1, -1, -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(c.enter)
			w, cs := make([]float64, n), make([]int, n)
			CollectiveWaits(WaitClassOf(c.op), c.root, c.enter, c.exit, w, cs)
			for i := range w {
				if math.Abs(w[i]-c.wait[i]) > 1e-9 || cs[i] != c.cause[i] {
					t.Errorf("member %d: wait %g cause %d, want %g cause %d", i, w[i], cs[i], c.wait[i], c.cause[i])
				}
				if w[i] < 0 || w[i] > c.exit[i]-c.enter[i] {
					t.Errorf("member %d: wait %g outside [0, time in call %g]", i, w[i], c.exit[i]-c.enter[i])
				}
			}
		})
	}
}

func TestWaitClassOf_CoversEveryBlockingCollective(t *testing.T) {
	for _, op := range trace.Ops() {
		// Neighbourhood collectives: the trace has no topology, so no
		// member is known to need another (WaitNone).
		if op.IsCollective() && WaitClassOf(op) == WaitNone && !op.IsNeighborhood() {
			t.Errorf("%s has no wait class", op)
		}
		if op.IsNeighborhood() && WaitClassOf(op) != WaitNone {
			t.Errorf("%s: wait class %s, want none (no topology in the trace)", op, WaitClassOf(op))
		}
		if !op.IsCollective() && WaitClassOf(op) != WaitNone {
			t.Errorf("%s is not a collective but has wait class %s", op, WaitClassOf(op))
		}
		if WaitClassOf(op).HasLatency() != op.Synchronizing() {
			t.Errorf("%s: latency reported = %v, synchronizing = %v", op, WaitClassOf(op).HasLatency(), op.Synchronizing())
		}
	}
}

// The Bcast case of the demo: root enters late, non-roots leave soon after
// it; before the fix the wait (last enter − my enter) exceeded the time in
// the op. ComputeInstanceMetrics must give waits within each call, name
// the root as the cause and report no latency for a rooted op.
func TestComputeInstanceMetrics_RootedWaitWithinCallAndCausedByRoot(t *testing.T) {
	inst := datamodel.Instance{Op: trace.OpBcast, Ranks: []int32{0, 1, 2, 3}, RootRank: 0,
		Enter: []float64{1000, 0, 200, 5000}, Exit: []float64{1100, 1200, 1200, 5100}}
	ComputeInstanceMetrics(&inst)
	want := []float64{0, 1000, 800, 0}
	for i := range want {
		if inst.Wait[i] != want[i] {
			t.Errorf("rank %d wait %g, want %g", i, inst.Wait[i], want[i])
		}
		if inst.Wait[i] > inst.Exit[i]-inst.Enter[i] {
			t.Errorf("rank %d waits longer than its call", i)
		}
	}
	if inst.MaxWaitRank != 1 || inst.CauseRank != 0 {
		t.Errorf("max wait rank %d caused by %d, want 1 caused by root 0", inst.MaxWaitRank, inst.CauseRank)
	}
	if inst.Latency != 0 {
		t.Errorf("latency %g reported for a rooted op", inst.Latency)
	}
	if inst.LastRank != 3 {
		t.Errorf("last rank %d, want 3", inst.LastRank)
	}
}

// On a synth run (Allreduce, Bcast, Allgather, Barrier, Alltoall) no op's
// total wait may exceed its total time in the op, and latency is only
// reported for N×N ops.
func TestAnalyze_WaitNeverExceedsTimeInOp(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 8, SplitGroups: 2, Steps: 3000, Seed: 41})
	res, _ := analyzeDir(t, dir, Options{})
	for _, o := range res.Analysis.Ops {
		if o.Wait.Total > o.TotalTime {
			t.Errorf("%s: wait total %g > time in op %g", o.Op, o.Wait.Total, o.TotalTime)
		}
		op, _ := trace.OpByName(o.Op)
		if got := o.Latency.Count > 0; got != op.Synchronizing() {
			t.Errorf("%s: latency samples %d, synchronizing %v", o.Op, o.Latency.Count, op.Synchronizing())
		}
		if o.WaitClass != WaitClassOf(op).String() {
			t.Errorf("%s: wait class %q", o.Op, o.WaitClass)
		}
	}
	for _, r := range res.Analysis.Ranks {
		if r.TotalWait > r.TimeInMPI {
			t.Errorf("rank %d waits %g > time in MPI %g", r.Rank, r.TotalWait, r.TimeInMPI)
		}
	}
}

// The clock condition follows the same data flow as the waits: nobody can
// leave before the member whose data it needs entered.
func TestClockViolation_FollowsDataFlowPerOpClass(t *testing.T) {
	cases := []struct {
		name        string
		op          trace.Op
		root        int
		enter, exit []float64
		want        float64
	}{
		{"allreduce: first exit before last enter", trace.OpAllreduce, -1, []float64{0, 50}, []float64{30, 60}, 20},
		{"allreduce: consistent", trace.OpAllreduce, -1, []float64{0, 50}, []float64{55, 60}, 0},
		{"bcast: non-root leaves before the root enters", trace.OpBcast, 0, []float64{100, 0}, []float64{110, 40}, 60},
		{"bcast: root leaves before non-roots enter is legal", trace.OpBcast, 0, []float64{0, 100}, []float64{10, 110}, 0},
		{"reduce: root leaves before the last contributor enters", trace.OpReduce, 0, []float64{0, 100, 20}, []float64{50, 110, 30}, 50},
		{"gather: non-root leaves before the root enters is legal", trace.OpGather, 0, []float64{100, 0}, []float64{110, 5}, 0},
		{"scan: rank 1 leaves before rank 0 enters", trace.OpScan, -1, []float64{100, 0}, []float64{110, 30}, 70},
		{"exscan: rank 0 may leave before rank 1 enters", trace.OpExscan, -1, []float64{0, 100}, []float64{5, 110}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(c.enter)
			got := ClockViolation(WaitClassOf(c.op), c.root, c.enter, c.exit, make([]float64, n), make([]int, n))
			if got != c.want {
				t.Errorf("violation %g, want %g", got, c.want)
			}
		})
	}
}

// Raw clocks with millisecond offsets violate the condition in rooted
// ops too (synth's Bcast), and the exact correction removes every one.
func TestAnalyze_RootedOpsCheckClockCondition(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 8, NodeSize: 2, Steps: 3000, Seed: 31,
		Nodes: []synth.NodeClock{{}, {OffsetNS: 4e6}, {OffsetNS: -3e6}, {OffsetNS: 2e6}}})
	raw, _ := analyzeDir(t, dir, Options{Clock: correct.ClockRaw})
	corr, _ := analyzeDir(t, dir, Options{})
	find := func(a *datamodel.Analysis, op string) datamodel.OpSummary {
		for _, o := range a.Ops {
			if o.Op == op {
				return o
			}
		}
		return datamodel.OpSummary{}
	}
	if v := find(raw.Analysis, "MPI_Bcast").Violations; v == 0 {
		t.Errorf("raw clocks 2-4 ms apart: no MPI_Bcast clock-condition violation found")
	}
	if v := corr.Analysis.Clock.Violations; v != 0 {
		t.Errorf("exact correction: %d violations", v)
	}
}

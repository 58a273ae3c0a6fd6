package merge

import (
	"math"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// The data rule: member i can depend on member j only if j sends data and
// i receives data (the recorder's Sent/Recv, cshim/bytes.h); MPI_Barrier is
// exempt. Each case gives the bytes as the recorder writes them and the
// waits, causes and clock-condition violation the rule prescribes.
func TestCollectiveNeedsFlow_NoDependencyWithoutData(t *testing.T) {
	cases := []struct {
		name        string
		op          trace.Op
		root        int
		enter, exit []float64
		sent, recv  []uint64
		wait        []float64
		cause       []int
		viol        float64
	}{
		// Open MPI returns from a count-0 Bcast at once: non-roots leave
		// (true time) long before the root enters.
		{"bcast count 0: non-roots leaving before the root enters is no violation and no wait", trace.OpBcast, 0,
			[]float64{5e6, 0, 10}, []float64{5e6 + 10, 20, 30},
			[]uint64{0, 0, 0}, []uint64{0, 0, 0},
			[]float64{0, 0, 0}, []int{-1, -1, -1}, 0},
		{"bcast with data: the same times are a late broadcast and a violation", trace.OpBcast, 0,
			[]float64{5e6, 0, 10}, []float64{5e6 + 10, 20, 30},
			[]uint64{8, 0, 0}, []uint64{0, 8, 8},
			[]float64{0, 20, 20}, []int{-1, 0, 0}, 5e6 - 20},
		{"scatterv: a non-root receiving 0 bytes does not need the root", trace.OpScatterv, 0,
			[]float64{100, 0, 10}, []float64{110, 5, 120},
			[]uint64{8, 0, 0}, []uint64{0, 0, 8},
			[]float64{0, 0, 90}, []int{-1, -1, 0}, 0},
		{"gatherv: a contributor sending 0 bytes is not the cause", trace.OpGatherv, 0,
			[]float64{0, 30, 90}, []float64{100, 35, 95},
			[]uint64{0, 8, 0}, []uint64{8, 0, 0},
			[]float64{30, 0, 0}, []int{1, -1, -1}, 0},
		{"gatherv: no contributor sends, the root waits for nobody", trace.OpGatherv, 0,
			[]float64{0, 30, 90}, []float64{10, 35, 95},
			[]uint64{0, 0, 0}, []uint64{0, 0, 0},
			[]float64{0, 0, 0}, []int{-1, -1, -1}, 0},
		{"reduce count 0: the root may leave before the contributors enter", trace.OpReduce, 0,
			[]float64{0, 100, 20}, []float64{5, 110, 30},
			[]uint64{0, 0, 0}, []uint64{0, 0, 0},
			[]float64{0, 0, 0}, []int{-1, -1, -1}, 0},
		{"barrier: zero bytes, still N×N", trace.OpBarrier, -1,
			[]float64{0, 10, 30}, []float64{25, 40, 40},
			[]uint64{0, 0, 0}, []uint64{0, 0, 0},
			[]float64{25, 20, 0}, []int{2, 2, -1}, 5},
		{"allreduce count 0: no wait, no violation", trace.OpAllreduce, -1,
			[]float64{0, 10, 5e6}, []float64{5, 15, 5e6 + 5},
			[]uint64{0, 0, 0}, []uint64{0, 0, 0},
			[]float64{0, 0, 0}, []int{-1, -1, -1}, 0},
		{"allreduce in place: Sent/Recv stay > 0, still N×N", trace.OpAllreduce, -1,
			[]float64{0, 10, 30}, []float64{40, 40, 40},
			[]uint64{8, 8, 8}, []uint64{8, 8, 8},
			[]float64{30, 20, 0}, []int{2, 2, -1}, 0},
		{"allgatherv in place: the member contributing 0 bytes is not the last entrant", trace.OpAllgatherv, -1,
			[]float64{0, 10, 30}, []float64{40, 40, 31},
			[]uint64{8, 8, 0}, []uint64{8, 8, 16},
			[]float64{10, 0, 0}, []int{1, -1, -1}, 0},
		{"reduce_scatter: a member receiving 0 bytes waits for nobody but still causes waits", trace.OpReduceScatter, -1,
			[]float64{0, 10, 30}, []float64{40, 40, 31},
			[]uint64{16, 16, 16}, []uint64{8, 8, 0},
			[]float64{30, 20, 0}, []int{2, 2, -1}, 0},
		{"alltoallv: a silent member neither waits nor is waited for", trace.OpAlltoallv, -1,
			[]float64{0, 10, 30}, []float64{40, 40, 5},
			[]uint64{8, 8, 0}, []uint64{8, 8, 0},
			[]float64{10, 0, 0}, []int{1, -1, -1}, 0},
		{"scan count 0: no prefix dependency", trace.OpScan, -1,
			[]float64{100, 0, 50}, []float64{110, 5, 55},
			[]uint64{0, 0, 0}, []uint64{0, 0, 0},
			[]float64{0, 0, 0}, []int{-1, -1, -1}, 0},
		{"exscan: rank 2 needs the latest lower rank that sends", trace.OpExscan, -1,
			[]float64{50, 80, 0}, []float64{90, 90, 90},
			[]uint64{8, 0, 8}, []uint64{0, 8, 8},
			[]float64{0, 0, 50}, []int{-1, -1, 0}, 0},
		{"unknown flow (no byte counts): the rule without bytes", trace.OpBcast, 0,
			[]float64{100, 0}, []float64{110, 40},
			nil, nil,
			[]float64{0, 40}, []int{-1, 0}, 60},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(c.enter)
			flow := FlowOf(c.op, c.sent, c.recv)
			w, cs := make([]float64, n), make([]int, n)
			CollectiveWaitsFlow(WaitClassOf(c.op), c.root, c.enter, c.exit, flow, w, cs)
			for i := range w {
				if math.Abs(w[i]-c.wait[i]) > 1e-9 || cs[i] != c.cause[i] {
					t.Errorf("member %d: wait %g cause %d, want %g cause %d", i, w[i], cs[i], c.wait[i], c.cause[i])
				}
			}
			v := ClockViolationFlow(WaitClassOf(c.op), c.root, c.enter, c.exit, flow, make([]float64, n), make([]int, n))
			if math.Abs(v-c.viol) > 1e-9 {
				t.Errorf("violation %g, want %g", v, c.viol)
			}
			// The instance path (ComputeInstanceMetrics) applies the same rule.
			inst := datamodel.Instance{Op: c.op, Ranks: make([]int32, n), RootRank: int32(c.root),
				Enter: c.enter, Exit: c.exit, Sent: c.sent, Recv: c.recv}
			for i := range inst.Ranks {
				inst.Ranks[i] = int32(i)
			}
			ComputeInstanceMetrics(&inst)
			for i := range w {
				if math.Abs(inst.Wait[i]-c.wait[i]) > 1e-9 || inst.WaitCause[i] != int32(c.cause[i]) {
					t.Errorf("instance member %d: wait %g cause %d, want %g cause %d", i, inst.Wait[i], inst.WaitCause[i], c.wait[i], c.cause[i])
				}
			}
			if math.Abs(inst.Violation-c.viol) > 1e-9 {
				t.Errorf("instance violation %g, want %g", inst.Violation, c.viol)
			}
		})
	}
}

// A count-0 Allreduce has no latency (members may leave before others
// enter); with data it has.
func TestComputeInstanceMetrics_LatencyOnlyWhereDataSynchronizes(t *testing.T) {
	for _, c := range []struct {
		name       string
		sent, recv []uint64
		want       float64
	}{
		{"count 0", []uint64{0, 0}, []uint64{0, 0}, 0},
		{"with data", []uint64{8, 8}, []uint64{8, 8}, 5},
		{"unknown bytes", nil, nil, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			inst := datamodel.Instance{Op: trace.OpAllreduce, Ranks: []int32{0, 1}, RootRank: -1,
				Enter: []float64{0, 100}, Exit: []float64{105, 110}, Sent: c.sent, Recv: c.recv}
			ComputeInstanceMetrics(&inst)
			if inst.Latency != c.want {
				t.Errorf("latency %g, want %g", inst.Latency, c.want)
			}
		})
	}
}

// End to end: hpcc's count-0 Bcasts (Open MPI returns at once, so
// non-roots leave before the root enters) are counted as instances and
// zero-byte instances but yield no wait and no clock-condition violation;
// a Bcast with data and the same times is a violation and a wait.
func TestAnalyze_ZeroByteInstancesCountButNeitherWaitNorViolate(t *testing.T) {
	ev := func(op trace.Op, seq uint32, root int32, sent, recv uint64, enter, exit int64) trace.Event {
		return trace.Event{Op: op, Comm: 0, Seq: seq, Root: root, Sent: sent, Recv: recv, EnterNS: enter, ExitNS: exit, Callsite: 0x1000}
	}
	extra := func(rank int32) []trace.Event {
		var evs []trace.Event
		for s := uint32(0); s < 4; s++ {
			t0 := int64(s) * 1e6
			switch {
			case rank == 0: // the root enters 500 µs late
				evs = append(evs, ev(trace.OpBcast, s, 0, 0, 0, t0+500e3, t0+500e3+100))
			default: // non-roots leave at once
				evs = append(evs, ev(trace.OpBcast, s, 0, 0, 0, t0, t0+100))
			}
		}
		evs = append(evs, ev(trace.OpAllreduce, 4, -1, 0, 0, 5e6+int64(rank)*300e3, 5e6+int64(rank)*300e3+50))
		evs = append(evs, ev(trace.OpBarrier, 5, -1, 0, 0, 7e6+int64(rank)*1e3, 7e6+3e3))
		if rank == 0 {
			evs = append(evs, ev(trace.OpBcast, 6, 0, 8, 0, 9e6+500e3, 9e6+500e3+100))
		} else {
			evs = append(evs, ev(trace.OpBcast, 6, 0, 0, 8, 9e6, 9e6+100))
		}
		return evs
	}
	run := memRun(3, []memRank{{0, nil, 0, extra(0)}, {1, nil, 0, extra(1)}, {2, nil, 0, extra(2)}})
	res, err := Analyze(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	an := res.Analysis
	if an.Instances != 7 {
		t.Errorf("%d instances, want 7", an.Instances)
	}
	got := map[string]datamodel.OpSummary{}
	for _, o := range an.Ops {
		got[o.Op] = o
	}
	bc, ar, ba := got["MPI_Bcast"], got["MPI_Allreduce"], got["MPI_Barrier"]
	if bc.Count != 5 || bc.Calls != 15 || bc.ZeroByte != 4 {
		t.Errorf("Bcast: %d instances, %d calls, %d zero-byte; want 5, 15, 4", bc.Count, bc.Calls, bc.ZeroByte)
	}
	// Only the Bcast with data: non-roots wait 100 ns each (their call),
	// and left 500 µs − 100 ns before the root entered.
	if bc.Violations != 1 || math.Abs(bc.MaxViolation-(500e3-100)) > 1e-6 {
		t.Errorf("Bcast: %d violations up to %g, want 1 up to %g", bc.Violations, bc.MaxViolation, 500e3-100.0)
	}
	if bc.Wait.Total != 200 {
		t.Errorf("Bcast wait total %g, want 200 (the Bcast with data only)", bc.Wait.Total)
	}
	if ar.Count != 1 || ar.ZeroByte != 1 || ar.Violations != 0 || ar.Wait.Total != 0 || ar.Latency.Count != 0 {
		t.Errorf("count-0 Allreduce: %d instances, %d zero-byte, %d violations, wait %g, %d latency samples; want 1, 1, 0, 0, 0",
			ar.Count, ar.ZeroByte, ar.Violations, ar.Wait.Total, ar.Latency.Count)
	}
	if ba.ZeroByte != 0 || ba.Wait.Total != 2e3+1e3 || ba.Latency.Count != 1 {
		t.Errorf("Barrier: %d zero-byte, wait %g, %d latency samples; want 0, 3000, 1", ba.ZeroByte, ba.Wait.Total, ba.Latency.Count)
	}
	if an.Clock.Violations != 1 {
		t.Errorf("%d clock-condition violations, want 1 (the Bcast with data)", an.Clock.Violations)
	}
}

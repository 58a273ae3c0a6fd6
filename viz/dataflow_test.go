package viz

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// The Gantt's streaming waits follow merge's data rule: a member that
// receives no data waits for nobody and a member that sends none makes
// nobody wait; MPI_Barrier stays N×N with zero bytes.
func TestGantt_ZeroByteMembersNeitherWaitNorCause(t *testing.T) {
	type m struct {
		rank       int32
		enter      float64
		sent, recv uint64
	}
	for _, c := range []struct {
		name    string
		op      trace.Op
		root    int32
		members []m
		want    []float64 // per rank
	}{
		{"bcast count 0: nobody waits for a late root", trace.OpBcast, 0,
			[]m{{1, 0, 0, 0}, {2, 10, 0, 0}, {0, 50, 0, 0}}, []float64{0, 0, 0}},
		{"bcast with data: non-roots wait for a late root", trace.OpBcast, 0,
			[]m{{1, 0, 0, 8}, {2, 10, 0, 8}, {0, 50, 8, 0}}, []float64{0, 50, 40}},
		{"allreduce count 0: nobody waits", trace.OpAllreduce, -1,
			[]m{{0, 0, 0, 0}, {1, 10, 0, 0}, {2, 50, 0, 0}}, []float64{0, 0, 0}},
		{"barrier: zero bytes, everyone waits for the last", trace.OpBarrier, -1,
			[]m{{0, 0, 0, 0}, {1, 10, 0, 0}, {2, 50, 0, 0}}, []float64{50, 40, 0}},
		{"gatherv: the root waits for the last contributor that sends", trace.OpGatherv, 0,
			[]m{{0, 0, 0, 8}, {1, 20, 8, 0}, {2, 50, 0, 0}}, []float64{20, 0, 0}},
		{"allgatherv: a member contributing 0 bytes is nobody's cause", trace.OpAllgatherv, -1,
			[]m{{0, 0, 8, 16}, {1, 20, 8, 16}, {2, 50, 0, 16}}, []float64{20, 0, 0}},
		{"scan: a member receiving 0 bytes does not wait", trace.OpScan, -1,
			[]m{{0, 0, 8, 8}, {1, 0, 8, 0}, {2, 0, 8, 8}}, []float64{0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var evs []datamodel.GEvent
			for _, x := range c.members {
				evs = append(evs, datamodel.GEvent{Rank: x.rank, CommRank: x.rank, Root: c.root, Op: c.op, CommID: 1, Seq: 0,
					Sent: x.sent, Recv: x.recv, Enter: x.enter, Exit: 100})
			}
			g := NewGantt(GanttOptions{WorldSize: 3, Start: -10, End: 200, Width: 1000})
			feed(t, g, evs)
			g.resolve(math.Inf(1))
			for r, l := range g.lanes {
				if len(l.bars) != 1 {
					t.Fatalf("rank %d: %d bars, want 1", r, len(l.bars))
				}
				if w := l.bars[0].wait; math.Abs(w-c.want[r]) > 1e-9 {
					t.Errorf("rank %d: wait %g, want %g", r, w, c.want[r])
				}
			}
		})
	}
}

// On a run mixing count-0 and data-moving collectives of every class, the
// Gantt's per-lane wait still equals merge's per-rank wait.
func TestGantt_WaitsMatchMergeWithZeroByteInstances(t *testing.T) {
	const world = 4
	rng := rand.New(rand.NewSource(5))
	ops := []trace.Op{trace.OpBcast, trace.OpAllreduce, trace.OpBarrier, trace.OpReduce, trace.OpGatherv,
		trace.OpScatterv, trace.OpAllgatherv, trace.OpAlltoallv, trace.OpScan, trace.OpExscan, trace.OpReduceScatter}
	evs := make([][]trace.Event, world)
	now := make([]int64, world)
	for s := 0; s < 400; s++ {
		op := ops[rng.Intn(len(ops))]
		root := int32(-1)
		if op.HasRoot() {
			root = int32(rng.Intn(world))
		}
		zero := rng.Intn(3) == 0 // a count-0 call
		enter := make([]int64, world)
		last := int64(0)
		for r := range enter {
			enter[r] = now[r] + rng.Int63n(50e3)
			last = max(last, enter[r])
		}
		for r := 0; r < world; r++ {
			b := uint64(8)
			if zero || rng.Intn(5) == 0 { // v-variants: some members move nothing
				b = 0
			}
			sent, recv := eventBytes(op, int32(r), root, b)
			if zero {
				sent, recv = 0, 0
			}
			exit := last + rng.Int63n(5e3)
			if zero && op != trace.OpBarrier {
				exit = enter[r] + rng.Int63n(2e3) // returns at once
			}
			evs[r] = append(evs[r], trace.Event{Op: op, Comm: 0, Seq: uint32(s), Root: root, Sent: sent, Recv: recv,
				EnterNS: enter[r], ExitNS: exit, Callsite: 0x1000})
			now[r] = exit + 1
		}
	}
	members := []int32{0, 1, 2, 3}
	run := &rundir.Run{Dir: "mem", JobID: "mem", WorldSize: world}
	for r := 0; r < world; r++ {
		src := &rundir.MemSource{M: rundir.RankMeta{
			Header: trace.Header{Rank: r, WorldSize: world, JobID: "mem", Host: "h"},
			Comms:  []trace.Comm{{ID: trace.CommWorldID, Local: 0, Kind: "world", Members: members}},
			Epochs: []trace.Epoch{{Index: 0, EndNS: 0}, {Index: 1, EndNS: 1 << 40}},
			Footer: &trace.Footer{Events: uint64(len(evs[r]))},
		}, Events: evs[r], ChunkSize: 64}
		run.Ranks = append(run.Ranks, &rundir.RankInput{Path: trace.RankFileName(r), Rank: r, Meta: src.Meta(), Src: src})
	}
	p, err := merge.Prepare(run, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGantt(GanttOptions{WorldSize: world, Start: -1e9, End: 1e9, Width: 1600})
	p.AddSink(g)
	res, err := p.Run()
	if err != nil {
		t.Fatal(err)
	}
	g.resolve(math.Inf(1))
	zero := 0
	for _, o := range res.Analysis.Ops {
		zero += o.ZeroByte
	}
	if zero == 0 || res.Analysis.Clock.Violations != 0 {
		t.Errorf("%d zero-byte instances, %d clock-condition violations; want some, none", zero, res.Analysis.Clock.Violations)
	}
	for _, rs := range res.Analysis.Ranks {
		_, wait := g.laneShare(&g.lanes[rs.Rank], g.lo, g.hi)
		if rs.TotalWait == 0 {
			t.Errorf("rank %d: merge reports no wait at all", rs.Rank)
		}
		if d := math.Abs(wait - rs.TotalWait); d > 1e-4*rs.TotalWait+1 {
			t.Errorf("rank %d: Gantt wait %.0f ns, merge %.0f ns", rs.Rank, wait, rs.TotalWait)
		}
	}
}

// The instance view's clock condition applies the data rule when the
// instance carries its byte counts (and the rule without bytes when not).
func TestInstanceStats_ZeroByteBcastIsNoViolation(t *testing.T) {
	in := datamodel.Instance{Op: trace.OpBcast, Ranks: []int32{0, 1, 2}, RootRank: 0,
		Enter: []float64{5e6, 0, 10}, Exit: []float64{5e6 + 10, 20, 30}}
	if s := computeInstStats(&in); s.violations != 2 {
		t.Errorf("no byte counts: %d violations, want 2", s.violations)
	}
	in.Sent, in.Recv = []uint64{0, 0, 0}, []uint64{0, 0, 0}
	if s := computeInstStats(&in); s.violations != 0 || s.maxViolation != 0 {
		t.Errorf("count 0: %d violations (max %g), want none", s.violations, s.maxViolation)
	}
	withWaits(&in)
	for i, w := range in.Wait {
		if w != 0 {
			t.Errorf("count 0: member %d waits %g", i, w)
		}
	}
}

package merge

import (
	"fmt"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// TestEnqueue_LargeInstancesLeaveTheBatchEarly: resolved instances go to
// the metrics goroutine once a batch holds finBatchSlots member slots,
// not only every finBatchSize instances, so a many-rank run's few large
// instances are not all held back until the end of the pass.
func TestEnqueue_LargeInstancesLeaveTheBatchEarly(t *testing.T) {
	for _, tc := range []struct {
		members, instances int
		wantBatches        int
	}{
		{members: 4, instances: finBatchSize - 1, wantBatches: 0},
		{members: 4, instances: finBatchSize, wantBatches: 1},
		{members: finBatchSlots, instances: 3, wantBatches: 3},
		{members: finBatchSlots / 2, instances: 5, wantBatches: 2},
	} {
		t.Run(fmt.Sprintf("members=%d,instances=%d", tc.members, tc.instances), func(t *testing.T) {
			a := &analyzer{finCh: make(chan []*openInst, 16), finBatch: make([]*openInst, 0, finBatchSize)}
			for range tc.instances {
				a.enqueue(&openInst{state: make([]uint8, tc.members)})
			}
			if got := len(a.finCh); got != tc.wantBatches {
				t.Fatalf("%d batches sent to the metrics goroutine, want %d", got, tc.wantBatches)
			}
		})
	}
}

// TestPassRun_DropsSinksAndDecoders: once Run returned, the Pass (which
// SiteName's and ErrorBar's closures keep alive while the outputs are
// written) no longer references the sinks, the ranks' decoders or the
// matcher's instances, so their memory is free for the output phase.
func TestPassRun_DropsSinksAndDecoders(t *testing.T) {
	old, oldSync := windowRanks, syncRanks
	defer func() { windowRanks, syncRanks = old, oldSync }()
	windowRanks, syncRanks = 8, 8 // the many-rank paths (windowed merge, decoders on the merge goroutine) from 9 ranks
	for _, k := range []int{3, 9} {
		t.Run(fmt.Sprintf("ranks=%d", k), func(t *testing.T) {
			run := &rundir.Run{Dir: "mem", JobID: "mem", WorldSize: k}
			for r := 0; r < k; r++ {
				evs := []trace.Event{{Op: trace.OpUnknown, EnterNS: 100, ExitNS: 110}, {Op: trace.OpUnknown, EnterNS: 200, ExitNS: 210}}
				s := &rundir.MemSource{M: rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: k}}, Events: evs, ChunkSize: 1}
				run.Ranks = append(run.Ranks, &rundir.RankInput{Path: "mem", Rank: r, Meta: s.Meta(), Src: s})
			}
			pass, err := Prepare(run, Options{Clock: correct.ClockRaw})
			if err != nil {
				t.Fatal(err)
			}
			sink := &mergeOrderSink{}
			pass.AddStreamSink(sink)
			pass.AddSink(&mergeOrderSink{})
			if _, err := pass.Run(); err != nil {
				t.Fatal(err)
			}
			if len(sink.enter) != 2*k {
				t.Fatalf("%d events reached the sink, want %d", len(sink.enter), 2*k)
			}
			a := pass.a
			if a.opt.Sinks != nil || a.opt.StreamSinks != nil {
				t.Fatalf("the pass still holds %d sinks and %d stream sinks after Run", len(a.opt.Sinks), len(a.opt.StreamSinks))
			}
			for r, rs := range a.ranks {
				if rs != nil && (rs.sync != nil || rs.out != nil || rs.free != nil || rs.pcCache != nil) {
					t.Fatalf("rank %d: decoder state kept after Run", r)
				}
			}
			if a.m.comms != nil || a.m.memberOf != nil {
				t.Fatal("the matcher's communicators and pools are kept after Run")
			}
		})
	}
}

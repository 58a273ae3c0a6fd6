package merge

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
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
			run := &Run{Dir: "mem", JobID: "mem", WorldSize: k}
			for r := 0; r < k; r++ {
				evs := []trace.Event{{Op: trace.OpUnknown, EnterNS: 100, ExitNS: 110}, {Op: trace.OpUnknown, EnterNS: 200, ExitNS: 210}}
				s := &MemSource{M: RankMeta{Header: trace.Header{Rank: r, WorldSize: k}}, Events: evs, ChunkSize: 1}
				run.Ranks = append(run.Ranks, &RankInput{Path: "mem", Rank: r, Meta: s.Meta(), Src: s})
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

// TestLoad_RanksWithEqualSettingsShareOneConfigMap: the ranks of one run
// record the same settings; Load keeps one map for them, not one a rank.
func TestLoad_RanksWithEqualSettingsShareOneConfigMap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 6, Steps: 3, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	run, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	first := run.Ranks[0].Meta.Header.Config
	if len(first) == 0 {
		t.Fatal("the synthetic run's rank 0 records no settings: nothing to share")
	}
	for _, ri := range run.Ranks[1:] {
		c := ri.Meta.Header.Config
		if !maps.Equal(c, first) {
			t.Fatalf("rank %d's settings differ from rank 0's: %v against %v", ri.Rank, c, first)
		}
		if reflect.ValueOf(c).UnsafePointer() != reflect.ValueOf(first).UnsafePointer() {
			t.Fatalf("rank %d has its own copy of the settings map", ri.Rank)
		}
	}
}

// TestLoad_RanksWithEqualEpochParametersShareTheirMaps: the sync epochs
// of a run's ranks record the same parameters; Load keeps one map per
// epoch for them, not one a rank.
func TestLoad_RanksWithEqualEpochParametersShareTheirMaps(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 6, Steps: 3, Seed: 5})
	run, _ := loadPass(t, dir)
	first := run.Ranks[0].Meta.Epochs
	if len(first) == 0 || len(first[0].Params) == 0 {
		t.Fatal("the synthetic run's rank 0 records no epoch parameters: nothing to share")
	}
	for _, ri := range run.Ranks[1:] {
		for i, e := range ri.Meta.Epochs {
			if i >= len(first) || !maps.Equal(e.Params, first[i].Params) {
				t.Fatalf("rank %d's epoch %d parameters differ from rank 0's", ri.Rank, i)
			}
			if reflect.ValueOf(e.Params).UnsafePointer() != reflect.ValueOf(first[i].Params).UnsafePointer() {
				t.Errorf("rank %d has its own copy of epoch %d's parameters", ri.Rank, i)
			}
		}
	}
}

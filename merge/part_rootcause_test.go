package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace/synth"
)

// rootCauseOf decodes the root-cause result from partAnalyseWith's
// stream results (point-to-point, one-sided, root causes) and returns
// it with its JSON.
func rootCauseOf(t *testing.T, streams []byte) (*datamodel.RootCauseResult, []byte) {
	t.Helper()
	var parts []json.RawMessage
	if err := json.Unmarshal(streams, &parts); err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 {
		t.Fatalf("stream results: %d parts, want point-to-point, one-sided and root causes", len(parts))
	}
	var res datamodel.RootCauseResult
	if err := json.Unmarshal(parts[2], &res); err != nil {
		t.Fatal(err)
	}
	return &res, parts[2]
}

// TestPartition_RootCausesIdenticalForEveryK: the root-cause analysis
// under K = 2, 3 and 4 in-process processes (partitioned passes, process
// 0's share none or all, rounds of the default size and small ones)
// gives the serial result byte for byte, and so do the collective,
// point-to-point and one-sided results beside it. The traces: a delay
// propagated through a halo ring and then the collectives (one rank
// computes twice as long; its neighbours, held up in the halo exchange,
// pass the delay on), and the shapes `tracemerge bench-synth` generates
// (collectives only, as /tmp/rc10m; the halo run, as the 1024-rank
// benchmark). The serial results are checked first to contain what the
// comparison must cover: wait states of every kind the trace has, a cause
// with a propagated cost through other ranks, and a critical path. A
// damaged run (a corrupt chunk, a missing rank), which the partitioned
// pass hands back to the event-shipping one, must agree too.
// Decision D75: every stage of the partitioned root-cause analysis must
// keep this test passing.
func TestPartition_RootCausesIdenticalForEveryK(t *testing.T) {
	tmp := t.TempDir()
	prop := filepath.Join(tmp, "propagated")
	if _, err := synth.Generate(prop, synth.Config{Ranks: 12, Steps: 1200, Seed: 11, ChunkEvents: 256, Halo: true,
		SplitGroups: 2, PatternLen: 4, NoImbalance: true, JitterNS: 20, Slowdown: map[int]float64{5: 2}}); err != nil {
		t.Fatal(err)
	}
	// bench-synth's configuration (cmd/tracemerge/bench.go), smaller
	bench := filepath.Join(tmp, "bench")
	if _, err := synth.Generate(bench, synth.Config{Ranks: 8, Steps: 4000, Seed: 7, ChunkEvents: 512}); err != nil {
		t.Fatal(err)
	}
	halo := filepath.Join(tmp, "halo")
	if _, err := synth.Generate(halo, synth.Config{Ranks: 16, Steps: 800, Seed: 7, ChunkEvents: 512, Halo: true}); err != nil {
		t.Fatal(err)
	}
	// A damaged run: a corrupt chunk and a missing rank; the partitioned
	// pass falls back to shipping events, and the root causes must agree
	// all the same.
	damaged := filepath.Join(tmp, "damaged")
	if _, err := synth.Generate(damaged, synth.Config{Ranks: 6, Steps: 3000, Seed: 9, ChunkEvents: 256, Halo: true,
		CorruptChunks: []synth.ChunkRef{{Rank: 2, Chunk: 3}}, MissingRanks: []int{4}}); err != nil {
		t.Fatal(err)
	}
	opt := Options{Clock: correct.ClockInterp, TopN: 5}
	for _, tc := range []struct {
		name     string
		dir      string
		p2p      bool   // the trace has Late Sender waits
		topRanks string // the largest cause's ranks ("": not checked)
		via      bool   // a cause of topRanks propagated through other ranks
		parted   bool   // the partitioned pass is kept (else it falls back to shipping events)
	}{
		{"propagated", prop, true, "5", true, true},
		{"bench-synth", bench, false, "", false, true},
		{"bench-synth-halo", halo, true, "", false, true},
		{"damaged", damaged, true, "", false, false},
	} {
		an1, p1, _, _ := partAnalyseWith(t, tc.dir, 1, 0, opt, true)
		rc1, rcJSON1 := rootCauseOf(t, p1)
		// What the comparison covers.
		if rc1.WaitStates == 0 || rc1.CollectiveWaitNS <= 0 || len(rc1.Causes) == 0 || len(rc1.CriticalPath.Regions) == 0 {
			t.Fatalf("%s: the serial root-cause result is nearly empty: %.600s", tc.name, rcJSON1)
		}
		if tc.p2p != (rc1.LateSenderNS > 0) {
			t.Fatalf("%s: Late Sender waiting %v ns, want some: %v", tc.name, rc1.LateSenderNS, tc.p2p)
		}
		if top := rc1.Causes[0]; tc.topRanks != "" && (top.Ranks != tc.topRanks || top.Share < 0.1) {
			t.Fatalf("%s: largest cause ranks %q with %.1f%% of the waiting, want ranks %q with at least a tenth: %.600s",
				tc.name, top.Ranks, 100*top.Share, tc.topRanks, rcJSON1)
		}
		via := 0.0 // of the largest cause's ranks' causes, through others
		for _, c := range rc1.Causes {
			if c.Ranks == rc1.Causes[0].Ranks && len(c.Via) > 0 {
				via += c.PropagatedNS
			}
		}
		if tc.via {
			if !(via > 0) {
				t.Fatalf("%s: no cause of ranks %s has a propagated cost through other ranks: the trace does not cover propagation: %.6000s",
					tc.name, tc.topRanks, rcJSON1[bytes.Index(rcJSON1, []byte(`"causes"`)):])
			}
		}
		t.Logf("%s: %d wait states, %.3g ns of waiting (Late Sender %.3g ns); largest cause ranks %s, %.1f%%; their causes' propagated cost %.3g ns",
			tc.name, rc1.WaitStates, rc1.TotalWaitNS, rc1.LateSenderNS, rc1.Causes[0].Ranks, 100*rc1.Causes[0].Share, via)
		for _, k := range []struct {
			k      int
			share  float64
			rounds int64 // events per round (0: the default)
		}{{2, 0, 0}, {2, 0, 1500}, {3, 0, 0}, {3, 1, 1500}, {4, 0, 1500}} {
			t.Run(fmt.Sprintf("%s-k%d-share%g-rounds%d", tc.name, k.k, k.share, k.rounds), func(t *testing.T) {
				defer func(n int64) { partRoundEvents = n }(partRoundEvents)
				if k.rounds > 0 {
					partRoundEvents = k.rounds
				}
				ank, pk, parted, recv := partAnalyseWith(t, tc.dir, k.k, k.share, opt, true)
				if parted != tc.parted {
					t.Errorf("partitioned pass kept: %v, want %v", parted, tc.parted)
				}
				if parted && k.share == 0 {
					// process 0 decodes nothing: its stream comes in
					// compact form (part_compact.go; a whole event is
					// 128 bytes)
					var sum struct {
						Events int64 `json:"events"`
					}
					if err := json.Unmarshal(an1, &sum); err != nil || sum.Events <= 0 {
						t.Fatalf("no event count in the analysis (%v)", err)
					}
					if per := float64(recv[KindStream]) / float64(sum.Events); !(per > 0 && per <= 40) {
						t.Errorf("process 0's stream: %.1f bytes an event (%d bytes, %d events), want at most 40", per, recv[KindStream], sum.Events)
					} else {
						t.Logf("process 0's stream: %.1f bytes an event", per)
					}
				}
				_, rcJSONk := rootCauseOf(t, pk)
				if !bytes.Equal(rcJSON1, rcJSONk) {
					t.Errorf("root causes with %d processes differ from the serial ones\n%s", k.k, firstDiff(rcJSON1, rcJSONk))
				}
				if !bytes.Equal(p1, pk) {
					t.Errorf("point-to-point/one-sided results with %d processes differ\n%s", k.k, firstDiff(p1, pk))
				}
				if !bytes.Equal(an1, ank) {
					t.Errorf("analysis with %d processes differs from the serial one\n%s", k.k, firstDiff(an1, ank))
				}
			})
		}
	}
}

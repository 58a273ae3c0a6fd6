package merge

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace/synth"
)

// TestPartition_TwoProcessesWithRootCauses_ProcessZeroOnlyFeedsTheStream:
// with the root-cause analysis on (a stream sink over every event, as
// tracemerge runs by default), a partitioned pass of 2 processes leaves
// process 0 only the replay and the stream: process 1 decodes every rank
// and owns every instance, so process 0 receives no decoder-to-owner
// data; the results (collective, point-to-point, one-sided, root causes)
// are the serial ones byte for byte. With 3 processes, and with 2 and
// no root causes, nothing changes (process 0 still owns instances at 2).
func TestPartition_TwoProcessesWithRootCauses_ProcessZeroOnlyFeedsTheStream(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mix")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 11, Steps: 1500, Seed: 3, ChunkEvents: 256, Halo: true, HaloMix: true,
		SplitGroups: 2, Slowdown: map[int]float64{4: 1.8}}); err != nil {
		t.Fatal(err)
	}
	opt := Options{Clock: correct.ClockInterp, TopN: 3}
	for _, tc := range []struct {
		k        int
		share0   float64
		roots    bool
		dataTo0  bool // process 0 receives decoder-to-owner data (it owns instances)
		streamTo bool // process 0 receives a stream of events from the decoders (checked with roots)
	}{
		{2, 0.5, true, false, true},
		{2, 1, true, false, true},
		{3, 0, true, false, true},
		{2, 0.5, false, true, false},
	} {
		t.Run(fmt.Sprintf("k%d-share%g-roots%v", tc.k, tc.share0, tc.roots), func(t *testing.T) {
			an1, p1, _, _ := partAnalyseWith(t, dir, 1, 0, opt, tc.roots)
			ank, pk, parted, recv0 := partAnalyseWith(t, dir, tc.k, tc.share0, opt, tc.roots)
			if !parted {
				t.Fatalf("the pass was not partitioned")
			}
			if !bytes.Equal(an1, ank) {
				t.Errorf("analysis differs from the serial one\n%s", firstDiff(an1, ank))
			}
			if !bytes.Equal(p1, pk) {
				t.Errorf("point-to-point/RMA/root-cause results differ from the serial ones\n%s", firstDiff(p1, pk))
			}
			if got := recv0[KindData] > 0; got != tc.dataTo0 {
				t.Errorf("process 0 received %d bytes of decoder-to-owner data; want some: %v", recv0[KindData], tc.dataTo0)
			}
			if got := recv0[KindStream] > 0; tc.roots && got != tc.streamTo {
				t.Errorf("process 0 received %d bytes of event stream; want some: %v", recv0[KindStream], tc.streamTo)
			}
		})
	}
}

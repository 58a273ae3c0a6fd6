package merge

import (
	"fmt"
	"testing"

	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// TestP2PStream_ReusesWhatIsInFlightAtManyRanks: the point-to-point
// stream makes messages, requests and calls for what is in flight at
// once and reuses them afterwards, at 16,384 ranks as at 8: a run twice
// as long makes no more of them. (With free lists of a fixed size, a
// halo step of thousands of ranks freed more than they kept, and every
// later step made most of its messages anew: a gigabyte of garbage in a
// 16,384-rank run.)
func TestP2PStream_ReusesWhatIsInFlightAtManyRanks(t *testing.T) {
	fresh := func(ranks, steps int) (msgs, pend, calls int) {
		run := &rundir.Run{WorldSize: ranks}
		for r := 0; r < ranks; r++ {
			run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: ranks}}})
		}
		s := NewP2PStream(run, P2POptions{}, nil)
		evs := haloStream(ranks, steps)
		for off := 0; off < len(evs); off += asyncBatch {
			if err := addBatch(s, s, evs[off:min(off+asyncBatch, len(evs))]); err != nil {
				t.Fatal(err)
			}
		}
		if res := s.Result(); res.Messages != len(evs)/4 {
			t.Fatalf("%d ranks, %d steps: %d messages, want %d", ranks, steps, res.Messages, len(evs)/4)
		}
		return s.fresh.msgs, s.fresh.pend, s.fresh.calls
	}
	for _, ranks := range []int{8, 1024, 8192, 16384} {
		t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
			m2, p2, c2 := fresh(ranks, 2)
			m8, p8, c8 := fresh(ranks, 8)
			t.Logf("made new over 2 steps: %d messages, %d requests, %d calls; over 8: %d, %d, %d", m2, p2, c2, m8, p8, c8)
			if m8 > m2 || p8 > p2 || c8 > c2 {
				t.Errorf("8 steps made %d messages, %d requests, %d calls new; 2 steps %d, %d, %d: a longer run must reuse what the first steps freed",
					m8, p8, c8, m2, p2, c2)
			}
		})
	}
}

package merge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// mergeOrderSink records the merged stream's (Enter, Rank) sequence.
type mergeOrderSink struct {
	enter []float64
	rank  []int32
}

func (s *mergeOrderSink) Add(ev *datamodel.GEvent) error {
	s.enter, s.rank = append(s.enter, ev.Enter), append(s.rank, ev.Rank)
	return nil
}

// TestKWayMerge_GlobalOrderByEnterThenRank: the streaming merge hands
// every event on in (Enter, rank) order, ties between ranks broken by the
// lower rank, below and above prefetchRanks (where the heap prefetches
// the next top's data), with batches of several sizes and ranks that end
// early.
func TestKWayMerge_GlobalOrderByEnterThenRank(t *testing.T) {
	for _, k := range []int{1, 7, prefetchRanks + 3} {
		t.Run(fmt.Sprintf("ranks=%d", k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(k), 9))
			run := &rundir.Run{Dir: "mem", JobID: "mem", WorldSize: k}
			total := 0
			for r := 0; r < k; r++ {
				n := 1 + rng.IntN(40) // ranks end at different times
				evs := make([]trace.Event, n)
				t0 := int64(0)
				for i := range evs {
					t0 += int64(rng.IntN(3)) * 100 // many equal times across ranks
					evs[i] = trace.Event{Op: trace.OpUnknown, EnterNS: t0, ExitNS: t0 + 10}
				}
				total += n
				s := &rundir.MemSource{M: rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: k}}, Events: evs, ChunkSize: 1 + rng.IntN(8)}
				run.Ranks = append(run.Ranks, &rundir.RankInput{Path: "mem", Rank: r, Meta: s.Meta(), Src: s})
			}
			pass, err := Prepare(run, Options{Clock: correct.ClockRaw})
			if err != nil {
				t.Fatal(err)
			}
			sink := &mergeOrderSink{}
			pass.AddStreamSink(sink)
			if _, err := pass.Run(); err != nil {
				t.Fatal(err)
			}
			if len(sink.enter) != total {
				t.Fatalf("%d events merged, want %d", len(sink.enter), total)
			}
			for i := 1; i < len(sink.enter); i++ {
				a, b := sink.enter[i-1], sink.enter[i]
				if b < a || b == a && sink.rank[i] < sink.rank[i-1] {
					t.Fatalf("event %d (enter %v, rank %d) after (enter %v, rank %d): not in (Enter, rank) order",
						i, b, sink.rank[i], a, sink.rank[i-1])
				}
			}
		})
	}
}

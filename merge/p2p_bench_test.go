package merge

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// haloStream is the merged stream of a ring halo exchange on ranks ranks
// for steps steps, as the k-way merge hands it to the point-to-point
// stream: each of the eight records of a step (two Irecv, two Isend, a
// Waitall's four completions) of every rank in turn.
func haloStream(ranks, steps int) []datamodel.GEvent { return haloStreamOrder(ranks, steps, nil) }

// haloStreamOrder is haloStream with the ranks of each record visited in
// the order of a random permutation when rng is not nil: as the merge of
// a real run hands them on (clock offsets and jitter mix the ranks), so
// that neither the ranks' states nor their messages are visited in the
// order they lie in memory.
func haloStreamOrder(ranks, steps int, rng *rand.Rand) []datamodel.GEvent {
	evs := make([]datamodel.GEvent, 0, ranks*steps*8)
	t := 0.0
	perm := make([]int, ranks)
	for i := range perm {
		perm[i] = i
	}
	for s := 0; s < steps; s++ {
		base := uint32(4 * s)
		for k := 0; k < 8; k++ {
			if rng != nil {
				rng.Shuffle(ranks, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			}
			for _, r := range perm {
				left, right := int32((r+ranks-1)%ranks), int32((r+1)%ranks)
				peer := []int32{left, right, left, right}[k%4]
				e := datamodel.GEvent{Rank: int32(r), CommID: trace.CommWorldID, Root: -1, Peer: peer, Tag: int32(k % 2), Req: base + uint32(k%4) + 1,
					Enter: t, Exit: t + 1, LocalEnter: int64(t), LocalExit: int64(t) + 1, Callsite: 0x1000 + uint64(k%4)}
				switch k {
				case 0, 1:
					e.Op, e.Recv, e.Tag = trace.OpIrecv, 8, int32(1-k) // from the left with tag 1: its send to the right
				case 2, 3:
					e.Op, e.Sent, e.Tag = trace.OpIsend, 8, int32(k-2)
				default:
					e.Op, e.Seq = trace.OpWaitall, 4
					e.Enter, e.Exit = float64(s)*1e6+5e5, float64(s)*1e6+6e5
					e.LocalEnter, e.LocalExit = int64(e.Enter), int64(e.Exit)
					if k < 6 {
						e.Recv, e.Tag = 8, int32(5-k)
					} else {
						e.Sent, e.Tag = 8, int32(k-6)
					}
				}
				evs = append(evs, e)
				t++
			}
		}
	}
	return evs
}

// BenchmarkP2PStream_ManyRanks feeds the point-to-point stream a halo
// exchange on 8 and on 16,384 ranks (the same number of events), in
// AsyncSink-sized batches: what the stream costs per event beyond the
// ranks' data (every rank's state is cold at 16,384 ranks).
func BenchmarkP2PStream_ManyRanks(b *testing.B) {
	const events = 2 << 20
	for _, shuffled := range []bool{false, true} {
		for _, ranks := range []int{8, 16384} {
			var rng *rand.Rand
			name := fmt.Sprintf("ranks=%d", ranks)
			if shuffled {
				rng, name = rand.New(rand.NewSource(1)), name+"/shuffled"
			}
			evs := haloStreamOrder(ranks, events/8/ranks, rng)
			run := &rundir.Run{WorldSize: ranks}
			for r := 0; r < ranks; r++ {
				run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: ranks}}})
			}
			b.Run(name, func(b *testing.B) {
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					s := NewP2PStream(run, P2POptions{}, nil)
					for off := 0; off < len(evs); off += asyncBatch {
						batch := evs[off:min(off+asyncBatch, len(evs))]
						if err := addBatch(s, s, batch); err != nil { // as AsyncSink adds
							b.Fatal(err)
						}
					}
					if res := s.Result(); res.Messages != len(evs)/4 {
						b.Fatalf("%d messages, want %d", res.Messages, len(evs)/4)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
				b.ReportMetric((cpuTime()-cpu0)*1e9/float64(b.N*len(evs)), "cpu-ns/event")
			})
		}
	}
}

// BenchmarkRootCauseStream_ManyRanks is BenchmarkP2PStream_ManyRanks
// through the root-cause stream, which drives its own point-to-point
// stream (a default run's chain): the same halo exchange on 8 and on
// 16,384 ranks, shuffled as a real run's merge hands it on, in
// AsyncSink-sized batches with the stream's prefetches.
func BenchmarkRootCauseStream_ManyRanks(b *testing.B) {
	const events = 2 << 20
	for _, ranks := range []int{8, 16384} {
		evs := haloStreamOrder(ranks, events/8/ranks, rand.New(rand.NewSource(1)))
		run := &rundir.Run{WorldSize: ranks}
		for r := 0; r < ranks; r++ {
			run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: ranks}}})
		}
		b.Run(fmt.Sprintf("ranks=%d/shuffled", ranks), func(b *testing.B) {
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				s := NewRootCauseStream(run, RootCauseOptions{}, nil)
				for off := 0; off < len(evs); off += asyncBatch {
					if err := addBatch(s, s, evs[off:min(off+asyncBatch, len(evs))]); err != nil { // as AsyncSink adds
						b.Fatal(err)
					}
				}
				if s.Result() == nil {
					b.Fatal("no result")
				}
			}
			b.ReportMetric((cpuTime()-cpu0)*1e9/float64(b.N*len(evs)), "cpu-ns/event")
		})
	}
}

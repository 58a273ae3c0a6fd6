package merge

import (
	"bytes"
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// chanCursors makes one cursor per stream (rank = index), each fed from a
// closed channel of batches of up to size events, as a decoder goroutine
// would; a stream's events carry their position in LocalEnter. Empty
// streams get no cursor.
func chanCursors(streams [][]float64, size int) []*cursor {
	var cs []*cursor
	for r, keys := range streams {
		rs := &rankState{in: &rundir.RankInput{Rank: r}, out: make(chan *batch, len(keys)/size+1), free: make(chan *batch, 1)}
		for off := 0; off < len(keys); off += size {
			b := &batch{}
			for i := off; i < min(off+size, len(keys)); i++ {
				b.ev = append(b.ev, datamodel.GEvent{Rank: int32(r), Enter: keys[i], LocalEnter: int64(i)})
			}
			rs.out <- b
		}
		close(rs.out)
		c := &cursor{rs: rs}
		if c.next() {
			cs = append(cs, c)
		}
	}
	return cs
}

// mergedPos is one merged event: rank, position in its stream, and
// whether the merge said its rank's stream ended there.
type mergedPos struct {
	rank, pos int64
	end       bool
}

// heapOrder is the heap merge's order (analyzer.run's loop).
func heapOrder(streams [][]float64, size int) []mergedPos {
	h := newCursorHeap(len(streams))
	for _, c := range chanCursors(streams, size) {
		h.add(c)
	}
	heap.Init(h)
	var out []mergedPos
	for h.Len() > 0 {
		c := h.top()
		ev := &c.b.ev[c.i]
		out = append(out, mergedPos{rank: int64(ev.Rank), pos: ev.LocalEnter})
		if done := h.advanceTop(); done != nil {
			out[len(out)-1].end = true
		}
	}
	return out
}

// windowOrder is the windowed merge's order.
func windowOrder(t *testing.T, streams [][]float64, size int) []mergedPos {
	w := newWindowMerge(chanCursors(streams, size))
	var out []mergedPos
	if err := w.run(func(ev *datamodel.GEvent, ci int32, end bool) error {
		out = append(out, mergedPos{rank: int64(ev.Rank), pos: ev.LocalEnter, end: end})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKWayMerge_WindowedOrderIsTheHeapOrder: the windowed merge hands the
// events on in exactly the heap's order, ends of streams at the same
// places, with equal times across ranks, events of all ranks close in
// time (the window's sort then sorts its buckets again), streams out of
// time order (an
// event before its rank's previous one), ranks that end early or have
// no events, a rank with a burst of events in no time (its share of a
// window is bounded), times far apart and infinite ones.
func TestKWayMerge_WindowedOrderIsTheHeapOrder(t *testing.T) {
	gen := map[string]func(rng *rand.Rand, r int) []float64{
		"ordered, many ties": func(rng *rand.Rand, r int) []float64 {
			n := rng.IntN(60)
			k, t0 := make([]float64, n), 0.0
			for i := range k {
				t0 += float64(rng.IntN(3)) * 100
				k[i] = t0
			}
			return k
		},
		"out of order": func(rng *rand.Rand, r int) []float64 {
			n := rng.IntN(60)
			k := make([]float64, n)
			for i := range k {
				k[i] = float64(i*50 + rng.IntN(400))
			}
			return k
		},
		"clustered in time": func(rng *rand.Rand, r int) []float64 {
			n := rng.IntN(60)
			k := make([]float64, n)
			for i := range k {
				k[i] = float64(i/4)*1e6 + float64(i%4)*1e3 + float64(rng.IntN(1000))
			}
			return k
		},
		"one rank bursts": func(rng *rand.Rand, r int) []float64 {
			if r == 3 {
				k := make([]float64, 5000)
				for i := range k {
					k[i] = 1000 + float64(i/1000)
				}
				return k
			}
			n := rng.IntN(40)
			k := make([]float64, n)
			for i := range k {
				k[i] = float64(i * 97)
			}
			return k
		},
		"far apart and infinite": func(rng *rand.Rand, r int) []float64 {
			n := rng.IntN(20)
			k := make([]float64, n)
			for i := range k {
				k[i] = float64(i) * math.Pow(10, float64(rng.IntN(15)))
			}
			if r%5 == 0 {
				k = append(k, math.Inf(1), math.Inf(1))
			}
			if r%7 == 0 {
				k = append([]float64{math.Inf(-1)}, k...)
			}
			return k
		},
	}
	for name, g := range gen {
		for _, ranks := range []int{1, 5, 700} {
			for _, size := range []int{1, 7, 32} {
				t.Run(fmt.Sprintf("%s/ranks=%d/batch=%d", name, ranks, size), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(ranks), uint64(size)))
					streams := make([][]float64, ranks)
					for r := range streams {
						streams[r] = g(rng, r)
					}
					want, got := heapOrder(streams, size), windowOrder(t, streams, size)
					if len(got) != len(want) {
						t.Fatalf("windowed merge gave %d events, the heap %d", len(got), len(want))
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("event %d: windowed merge gave rank %d #%d (end %v), the heap rank %d #%d (end %v)",
								i, got[i].rank, got[i].pos, got[i].end, want[i].rank, want[i].pos, want[i].end)
						}
					}
				})
			}
		}
	}
}

// TestAnalyze_WindowedMergeGivesTheHeapsAnalysis: a whole analysis (JSON
// of the collective and point-to-point results) is byte for byte the same
// whether the ranks are merged by the heap or in windows, with decoders
// in goroutines and on the merge goroutine.
func TestAnalyze_WindowedMergeGivesTheHeapsAnalysis(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 300, Steps: 40, Seed: 5, ChunkEvents: 64, Halo: true}); err != nil {
		t.Fatal(err)
	}
	old, oldSync := windowRanks, syncRanks
	defer func() { windowRanks, syncRanks = old, oldSync }()
	windowRanks = 1 << 30
	an1, p1 := analyseJSON(t, dir, 1, Options{Clock: correct.ClockInterp})
	for _, sr := range []int{4096, 100} {
		t.Run(fmt.Sprintf("syncRanks=%d", sr), func(t *testing.T) {
			windowRanks, syncRanks = 1, sr
			an, p := analyseJSON(t, dir, 1, Options{Clock: correct.ClockInterp})
			if !bytes.Equal(an1, an) || !bytes.Equal(p1, p) {
				t.Errorf("analysis merged in windows differs from the heap's (%d/%d vs %d/%d bytes)", len(an), len(p), len(an1), len(p1))
			}
		})
	}
}

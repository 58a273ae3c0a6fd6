package merge

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/gclock/gclock/merge/datamodel"
)

// TestGEvent_IsTwoCacheLines: a GEvent is 128 bytes, and the arrays the
// merge copies events into (a rank's batch at every batch size, the
// windowed merge's window, an AsyncSink's or a SharedAsync's hand-off batch) start on a
// cache line, so every event in them takes exactly the two lines that
// prefetchEvent asks for (at 136 bytes each event touched three).
func TestGEvent_IsTwoCacheLines(t *testing.T) {
	if got := unsafe.Sizeof(datamodel.GEvent{}); got != gEventSize {
		t.Fatalf("unsafe.Sizeof(GEvent{}) = %d, want %d (two cache lines)", got, gEventSize)
	}
	type arrayCase struct {
		name string
		make func() []datamodel.GEvent // an array as the merge makes it, at its start
	}
	var cases []arrayCase
	for _, ranks := range []int{1, 8, 64, 600, 1000, 4096, 16384} {
		n := batchSize(ranks)
		cases = append(cases, arrayCase{fmt.Sprintf("batch of %d ranks (%d events)", ranks, n), func() []datamodel.GEvent {
			d := &rankOrder{rs: &rankState{free: make(chan *batch, 1)}, size: n}
			return d.newBatch().ev[:1]
		}})
	}
	for _, ranks := range []int{512, 16384} {
		cases = append(cases, arrayCase{fmt.Sprintf("window of %d ranks", ranks), func() []datamodel.GEvent {
			cs := make([]*cursor, ranks)
			for i := range cs {
				cs[i] = &cursor{b: &batch{ev: make([]datamodel.GEvent, 1)}}
			}
			return newWindowMerge(cs).ev[:1]
		}})
	}
	cases = append(cases, arrayCase{"AsyncSink batch", func() []datamodel.GEvent {
		a := NewAsyncSink(&orderSink{})
		defer a.Close()
		return a.cur[:1]
	}})
	cases = append(cases, arrayCase{"SharedAsync batch", func() []datamodel.GEvent {
		return newSharedBatch().ev[:1]
	}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < 20; i++ { // the allocator's placement, not one lucky address
				ev := c.make()
				if p := uintptr(unsafe.Pointer(&ev[0])); p%64 != 0 {
					t.Fatalf("array at %#x: not on a 64-byte line (offset %d)", p, p%64)
				}
			}
		})
	}
}

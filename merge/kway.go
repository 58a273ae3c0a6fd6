package merge

// The streaming k-way merge of all ranks by global Enter.

import (
	"container/heap"
	"unsafe"
)

// cursor is one rank's position in the k-way merge.
type cursor struct {
	rs  *rankState
	b   *batch
	i   int
	key float64
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }

func (h cursorHeap) Less(i, j int) bool { return cursorLess(h[i], h[j]) }

func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *cursorHeap) Push(x any) { *h = append(*h, x.(*cursor)) }

func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// siftTop restores the heap after the top cursor's key grew. It is
// heap.Fix(h, 0) specialised to the concrete type (no interface calls: this
// runs once per event); container/heap still does Init and Pop.
func (h cursorHeap) siftTop() {
	n := len(h)
	i := 0
	c := h[0]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && cursorLess(h[r], h[l]) {
			m = r
		}
		if !cursorLess(h[m], c) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = c
}

// advanceTop moves the top cursor past the event it stands on: to its
// batch's next event, or its rank's next batch, restoring the heap; when
// the rank's stream has ended it pops the cursor and returns it (nil
// otherwise).
func (h *cursorHeap) advanceTop() *cursor {
	c := (*h)[0]
	c.i++
	if c.i < len(c.b.ev) {
		c.key = c.b.ev[c.i].Enter
		// The event is consumed when c is on top again, about one
		// event per rank later; with hundreds of interleaved streams
		// the hardware prefetcher does not follow, and its second line
		// would be a cache miss then (see prefetchEvent).
		prefetchEvent(uintptr(unsafe.Pointer(&c.b.ev[c.i])))
		h.siftTop()
		return nil
	}
	if c.next() {
		h.siftTop()
		return nil
	}
	heap.Pop(h)
	return c
}

func cursorLess(a, b *cursor) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.rs.in.Rank < b.rs.in.Rank
}

// next advances c to its next batch; false at the end of the rank's stream.
func (c *cursor) next() bool {
	if st := c.rs.sync; st != nil {
		if c.b != nil {
			select {
			case c.rs.free <- c.b:
			default:
			}
			c.b = nil
		}
		for len(st.ready) == 0 && !st.ended {
			st.syncStep()
		}
		if len(st.ready) == 0 {
			for {
				select {
				case <-c.rs.free:
				default:
					return false
				}
			}
		}
		b := st.ready[0]
		st.ready[0] = nil
		st.ready = st.ready[1:]
		if len(st.ready) == 0 {
			st.ready = st.ready[:0:0]
		}
		c.b, c.i, c.key = b, 0, b.ev[0].Enter
		return true
	}
	if c.b != nil {
		select {
		case c.rs.free <- c.b:
		default:
		}
		c.b = nil
	}
	b, ok := <-c.rs.out
	if !ok {
		// the decoder has ended: its spare batches are garbage now
		// (kept, they were 200 MB at 16,384 ranks while the reports
		// were written)
		for {
			select {
			case <-c.rs.free:
			default:
				return false
			}
		}
	}
	c.b, c.i, c.key = b, 0, b.ev[0].Enter
	return true
}

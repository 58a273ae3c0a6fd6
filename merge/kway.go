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

// cursorHeap orders the cursors by (key, rank). Its entries hold the
// order inline and no pointer: the sift compares and moves 16-byte
// values in one array, not through pointers to cursors spread over
// memory (at 16,384 ranks every level of the sift was a cache miss on a
// cursor and its rank's state), and without write barriers. The cursors
// and the addresses the merge loads next for each (its event, its rank's
// running sums: prefetchNext) stay in place, indexed by the entry's ci.
type cursorHeap struct {
	e   []cursorEntry
	cur []*cursor    // by ci
	at  []prefetchAt // by ci
}

type cursorEntry struct {
	key  float64 // cur[ci].key
	rank int32   // cur[ci].rs.in.Rank
	ci   int32
}

// prefetchAt are addresses only, never dereferenced (the batch and the
// rank's state stay reachable through the cursor).
type prefetchAt struct{ ev, c, sum uintptr }

func newCursorHeap(n int) *cursorHeap {
	return &cursorHeap{e: make([]cursorEntry, 0, n), cur: make([]*cursor, 0, n), at: make([]prefetchAt, 0, n)}
}

// add appends c (heap.Init orders the heap afterwards).
func (h *cursorHeap) add(c *cursor) {
	ci := int32(len(h.cur))
	h.cur = append(h.cur, c)
	h.at = append(h.at, prefetchAt{ev: uintptr(unsafe.Pointer(&c.b.ev[c.i])), c: uintptr(unsafe.Pointer(c)), sum: uintptr(unsafe.Pointer(&c.rs.sum))})
	h.e = append(h.e, cursorEntry{key: c.key, rank: int32(c.rs.in.Rank), ci: ci})
}

// top is the cursor whose event comes next.
func (h *cursorHeap) top() *cursor { return h.cur[h.e[0].ci] }

func (h *cursorHeap) Len() int { return len(h.e) }

func (h *cursorHeap) Less(i, j int) bool { return entryLess(h.e[i], h.e[j]) }

func (h *cursorHeap) Swap(i, j int) { h.e[i], h.e[j] = h.e[j], h.e[i] }

func (h *cursorHeap) Push(x any) { h.add(x.(*cursor)) }

func (h *cursorHeap) Pop() any {
	x := h.e[len(h.e)-1]
	h.e = h.e[:len(h.e)-1]
	return h.cur[x.ci]
}

// siftTop restores the heap after the top cursor's key grew: top is the
// new top entry (passed by value, not re-read from h[0] right after its
// fields were stored: that wide load stalled on the narrow stores). It is
// heap.Fix(h, 0) specialised to the concrete type (no interface calls: this
// runs once per event); container/heap still does Init and Pop.
func (h *cursorHeap) siftTop(top cursorEntry) {
	e := h.e
	n := len(e)
	i := 0
	tk, tr := top.key, top.rank
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && (e[r].key < e[l].key || e[r].key == e[l].key && e[r].rank < e[l].rank) {
			m = r
		}
		if mk := e[m].key; !(mk < tk || mk == tk && e[m].rank < tr) { // entryLess, spelled out on fields
			break
		}
		e[i] = e[m]
		i = m
	}
	e[i] = top
}

// advanceTop moves the top cursor past the event it stands on: to its
// batch's next event, or its rank's next batch, restoring the heap; when
// the rank's stream has ended it pops the cursor and returns it (nil
// otherwise).
func (h *cursorHeap) advanceTop() *cursor {
	e := h.e[0]
	c := h.cur[e.ci]
	at := &h.at[e.ci]
	c.i++
	if c.i < len(c.b.ev) {
		ev := &c.b.ev[c.i]
		c.key, e.key, at.ev = ev.Enter, ev.Enter, uintptr(unsafe.Pointer(ev))
		// The event is consumed when c is on top again, about one
		// event per rank later; with hundreds of interleaved streams
		// the hardware prefetcher does not follow, and its second line
		// would be a cache miss then (see prefetchEvent).
		prefetchEvent(at.ev)
		h.siftTop(e)
		h.prefetchNext()
		return nil
	}
	if c.next() {
		e.key, at.ev = c.key, uintptr(unsafe.Pointer(&c.b.ev[c.i]))
		h.siftTop(e)
		h.prefetchNext()
		return nil
	}
	heap.Pop(h)
	return c
}

// prefetchNext prefetches what the merge touches for the two entries
// below the top, one of which is the next top: its event, cursor and
// rank's running sums. Across thousands of ranks each of them is a cache
// miss when reached (one rank's turn comes once per rank), and the
// prefetch lets them load while the current event is consumed. Below
// prefetchRanks ranks they are still in the cache and the call would only
// cost.
func (h *cursorHeap) prefetchNext() {
	if len(h.e) < prefetchRanks {
		return
	}
	a, b := &h.at[h.e[1].ci], &h.at[h.e[2].ci]
	prefetchLines6(a.ev, a.c, a.sum, b.ev, b.c, b.sum)
}

// prefetchRanks is the number of ranks from which prefetchNext runs.
const prefetchRanks = 1024

func entryLess(a, b cursorEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.rank < b.rank
}

// next advances c to its next batch; false at the end of the rank's stream.
func (c *cursor) next() bool {
	if st := c.rs.sync; st != nil {
		if c.b != nil {
			st.d.recycle(c.b)
			c.b = nil
		}
		for len(st.ready) == 0 && !st.ended {
			st.syncStep()
		}
		if len(st.ready) == 0 {
			st.spare = nil // the rank has ended: its spare batch is garbage now
			return false
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

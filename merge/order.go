package merge

import "github.com/gclock/gclock/merge/datamodel"

// Per-rank time order: overlapping thread chunks are put back in order.

// ReorderWindow is how many events a rank's stream is held back to put
// overlapping chunks back in time order when its file does not say where
// its chunks start (no SPAN frames: files written before 2026-11-27, a
// killed rank's sidecar). A rank writes one chunk per thread buffer, so
// with several threads calling MPI, chunks overlap in time. The window is
// only used once a rank's chunks are seen to overlap.
const ReorderWindow = 1 << 15

// ExactReorderLimit bounds the events held back when the file says where
// its chunks start (HorizonSource): an event is emitted once no chunk
// still to come can start before it, which orders the chunks of threads
// that call MPI at once exactly (a thread's chunk holds up to 32,768
// events, so this is enough for about 15 threads at once); beyond the
// limit the order is approximate again (counted).
const ExactReorderLimit = 16 * ReorderWindow

// rankOrder turns one rank's batches (each sorted) into a time-ordered
// stream. It holds the latest batch back; when a new batch starts before
// the held one ends, it switches to a min-heap of up to ReorderWindow
// events. Events that still come out before already sent ones (overlap
// deeper than the window) are counted in rs.unsorted.
type rankOrder struct {
	rs       *rankState
	done     <-chan struct{}
	held     *batch
	heap     []datamodel.GEvent // min-heap by Enter, used after the first overlap
	reorder  bool
	out      *batch
	lastSent float64
	stopped  bool
	size     int // events per batch
	// horizon: no event still to come (after the batch being added)
	// starts before it (global ns), when hasHorizon.
	horizon    float64
	hasHorizon bool
	arrived    uint64 // events put in the heap so far (GEvent.Ord)
	// sync: batches go to sync.ready (decoding on the merge goroutine)
	sync *decState
}

func (d *rankOrder) newBatch() *batch {
	if st := d.sync; st != nil {
		if b := st.spare; b != nil {
			st.spare = nil
			return b
		}
		return &batch{ev: make([]datamodel.GEvent, 0, d.size)}
	}
	select {
	case b := <-d.rs.free:
		return b
	default:
		return &batch{ev: make([]datamodel.GEvent, 0, d.size)}
	}
}

func (d *rankOrder) recycle(b *batch) {
	if st := d.sync; st != nil {
		if st.spare == nil {
			st.spare = b
		}
		return
	}
	select {
	case d.rs.free <- b:
	default:
	}
}

// send hands a batch to the merger; false when the analysis was stopped.
func (d *rankOrder) send(b *batch) bool {
	if d.stopped {
		return false
	}
	for i := range b.ev {
		if b.ev[i].Enter < d.lastSent {
			d.rs.unsorted++
		} else {
			d.lastSent = b.ev[i].Enter
		}
	}
	if d.sync != nil {
		d.sync.ready = append(d.sync.ready, b)
		return true
	}
	select {
	case d.rs.out <- b:
		return true
	case <-d.done:
		d.stopped = true
		return false
	}
}

// add takes one sorted batch.
func (d *rankOrder) add(b *batch) bool {
	if d.reorder {
		return d.push(b)
	}
	if d.held == nil {
		return d.hold(b)
	}
	h := d.held
	hl := h.ev[len(h.ev)-1].Enter
	if b.ev[0].Enter < hl || d.hasHorizon && d.horizon < hl { // chunks overlap: reorder from now on
		d.reorder, d.rs.heaped = true, true
		d.held = nil
		d.heapAdd(h) // nothing emitted before b is in the heap too
		return d.push(b)
	}
	d.held = nil
	if !d.send(h) {
		return false
	}
	return d.hold(b)
}

// hold keeps b until the next batch shows whether they overlap, or sends
// it at once when the horizon says nothing earlier than its last event
// is still to come: a batch held per rank was a quarter of the batches'
// memory (64 MB at 16,384 ranks) and a batch of latency.
func (d *rankOrder) hold(b *batch) bool {
	if d.hasHorizon && d.horizon >= b.ev[len(b.ev)-1].Enter {
		return d.send(b)
	}
	d.held = b
	return true
}

// heapAdd moves b's events into the heap.
func (d *rankOrder) heapAdd(b *batch) {
	for i := range b.ev {
		d.arrived++
		b.ev[i].Ord = d.arrived
		d.heap = append(d.heap, b.ev[i])
		siftUpEv(d.heap, len(d.heap)-1)
	}
	d.recycle(b)
}

// push moves b's events into the heap and emits what the horizon or the
// window allows.
func (d *rankOrder) push(b *batch) bool {
	d.heapAdd(b)
	if d.hasHorizon {
		for len(d.heap) > 0 && (d.heap[0].Enter <= d.horizon || len(d.heap) > ExactReorderLimit) {
			if !d.emit(d.popEv()) {
				return false
			}
		}
		return true
	}
	for len(d.heap) > ReorderWindow {
		if !d.emit(d.popEv()) {
			return false
		}
	}
	return true
}

func (d *rankOrder) emit(ev datamodel.GEvent) bool {
	if d.out == nil {
		d.out = d.newBatch()
		d.out.ev = d.out.ev[:0]
	}
	d.out.ev = append(d.out.ev, ev)
	if len(d.out.ev) >= d.size {
		o := d.out
		d.out = nil
		return d.send(o)
	}
	return true
}

func (d *rankOrder) popEv() datamodel.GEvent {
	h := d.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	d.heap = h[:n]
	siftDownEv(d.heap, 0)
	return top
}

// finish sends everything still held (end of the rank's stream).
func (d *rankOrder) finish() {
	if d.held != nil {
		h := d.held
		d.held = nil
		if !d.send(h) {
			return
		}
	}
	for len(d.heap) > 0 {
		if !d.emit(d.popEv()) {
			return
		}
	}
	if d.out != nil && len(d.out.ev) > 0 {
		d.send(d.out)
		d.out = nil
	}
}

func evLess(a, b *datamodel.GEvent) bool {
	if a.Enter != b.Enter {
		return a.Enter < b.Enter
	}
	if a.LocalEnter != b.LocalEnter {
		return a.LocalEnter < b.LocalEnter
	}
	return a.Ord < b.Ord // the records of one call (a Waitall's completions) in file order
}

func siftUpEv(h []datamodel.GEvent, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !evLess(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDownEv(h []datamodel.GEvent, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && evLess(&h[r], &h[l]) {
			m = r
		}
		if !evLess(&h[m], &h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

package merge

// Process 0 of a parallel analysis (dist.go): it fetches every worker's
// merged stream, merges them with its own by the serial key and feeds the
// analysis.

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/gclock/gclock/merge/datamodel"
)

// distStream is process 0's view of one worker's merged stream.
type distStream struct {
	w     int
	ev    []datamodel.GEvent
	i     int
	key   float64
	rank  int32 // of ev[i]: the event's rank, or the ended rank of a marker
	ends  map[int]distEnd
	done  bool
	ch    chan distFetched
	spare chan []datamodel.GEvent
	// xlate maps the worker's call-site indices to process 0's (-1: not
	// yet known): one small table instead of a look-up in the event's
	// rank's pc cache, a cache miss per event with many ranks.
	xlate []int32
}

type distFetched struct {
	ev   []datamodel.GEvent
	ends map[int]distEnd
	done bool
	err  error
}

// fetcher receives one worker's chunks ahead of the merge (so the
// worker's send completes at once instead of waiting, spinning, until
// the merge needs the chunk).
func (d *Dist) fetcher(s *distStream) {
	defer d.fetchWG.Done()
	defer close(s.ch)
	var buf []byte
	outstanding := 0
	// drain reads the replies still due, so the worker is free to stop.
	drain := func() {
		for ; outstanding > 0; outstanding-- {
			n, _, err := recvReplyHeader(d.T, s.w)
			if err != nil {
				return
			}
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			if n > 0 {
				if err := d.T.Recv(s.w, distTag, buf[:n]); err != nil {
					return
				}
			}
		}
	}
	defer drain()
	for {
		var f distFetched
		var err error
		for outstanding < distInflight && err == nil {
			if err = request(d.T, s.w, 1); err == nil {
				outstanding++
			}
		}
		var n int
		var end bool
		if err == nil {
			n, end, err = recvReplyHeader(d.T, s.w)
			outstanding--
		}
		switch {
		case err != nil:
			f.err = err
			outstanding = 0
		case end:
			f.done = true
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			if n > 0 {
				err = d.T.Recv(s.w, distTag, buf)
			}
			if err == nil {
				err = json.Unmarshal(buf, &f.ends)
			}
			if err != nil {
				f.err = fmt.Errorf("parallel analysis: end record of process %d: %w", s.w, err)
			}
		case n == 0 || n%evSize != 0:
			f.err = fmt.Errorf("parallel analysis: reply of %d bytes from process %d", n, s.w)
		default:
			// Received straight into the records.
			select {
			case f.ev = <-s.spare:
			default:
			}
			k := n / evSize
			if cap(f.ev) < k {
				f.ev = make([]datamodel.GEvent, k)
			}
			f.ev = f.ev[:k]
			if err := d.T.Recv(s.w, distTag, evBytes(f.ev)); err != nil {
				f.err = err
			}
		}
		select {
		case s.ch <- f:
		case <-d.quit:
			return
		}
		if f.err != nil || f.done {
			return
		}
	}
}

// fetch moves s to the worker's next chunk.
func (a *analyzer) fetch(s *distStream) error {
	if s.ev != nil {
		select {
		case s.spare <- s.ev:
		default:
		}
		s.ev = nil
	}
	f, ok := <-s.ch
	if !ok {
		return errors.New("parallel analysis: stopped")
	}
	if f.err != nil {
		return f.err
	}
	s.ev, s.i, s.done, s.ends = f.ev, 0, f.done, f.ends
	return nil
}

// at sets the stream's key from its current record.
func (s *distStream) at() {
	e := &s.ev[s.i]
	s.key = e.Enter
	s.rank = e.Rank
	if e.Rank < 0 {
		s.rank = -1 - e.Rank
	}
}

type streamHeap []*distStream

func (h streamHeap) Len() int { return len(h) }

func (h streamHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].rank < h[j].rank
}

func (h streamHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

// siftTop restores the heap after the top stream's key grew (heap.Fix(h,
// 0) without the interface calls: once per event on process 0).
func (h streamHeap) siftTop() {
	n := len(h)
	i := 0
	c := h[0]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.Less(r, l) {
			m = r
		}
		if h[m].key > c.key || (h[m].key == c.key && h[m].rank >= c.rank) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = c
}

func (h *streamHeap) Push(x any) { *h = append(*h, x.(*distStream)) }

func (h *streamHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// runDist is run for process 0 of a parallel analysis.
func (a *analyzer) runDist() error {
	d := a.dist
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return errors.New("parallel analysis: already closed")
	}
	if pl := a.partPlanFor(d); pl != nil && !d.assigned {
		d.assigned, d.parted = true, true
		msg := pl.encode()
		for w := 1; w < d.Procs; w++ {
			if err := sendMsg(d.T, w, msg); err != nil {
				return fmt.Errorf("parallel analysis: sending process %d its part: %w", w, err)
			}
		}
		return a.runPart(pl)
	}
	d.assign(len(a.rn.Ranks))
	if d.assignErr != nil {
		return d.assignErr
	}
	total, _ := a.footerEvents()
	a.startMetrics()
	defer a.stopMetrics()
	for r, rs := range a.ranks {
		if rs == nil {
			a.m.endRank(int32(r))
		}
	}
	ended := make([]bool, len(a.ranks)) // end marker seen
	var streams []*distStream
	d.quit = make(chan struct{})
	for w := 1; w < d.Procs; w++ {
		s := &distStream{w: w, ch: make(chan distFetched, 1), spare: make(chan []datamodel.GEvent, 2)}
		streams = append(streams, s)
		d.fetchWG.Add(1)
		go d.fetcher(s)
	}
	// Process 0's own block, decoded and merged here by the workers' code.
	if lo, hi := ownedBlock(0, len(a.rn.Ranks), d.Procs, d.Share0); hi > lo {
		var mine []*rankState
		for _, ri := range a.rn.Ranks[lo:hi] {
			mine = append(mine, a.ranks[ri.Rank])
		}
		quit := make(chan struct{})
		finished := make(chan struct{})
		defer func() {
			close(quit)
			<-finished // the decoders have returned
		}()
		s := &distStream{w: 0, ch: make(chan distFetched, 1), spare: make(chan []datamodel.GEvent, 4)}
		streams = append(streams, s)
		go func() {
			defer close(finished)
			defer close(s.ch)
			if a.mergeLocal(mine, len(a.rn.Ranks), distChunk, quit, func(c []datamodel.GEvent) bool {
				select {
				case s.ch <- distFetched{ev: c}:
					return true
				case <-quit:
					return false
				}
			}, s.spare) == nil {
				return
			}
			// The decoders' findings are already in mine's rankStates.
			select {
			case s.ch <- distFetched{done: true}:
			case <-quit:
			}
		}()
	}
	h := make(streamHeap, 0, d.Procs)
	for _, s := range streams {
		if err := a.fetch(s); err != nil {
			return err
		}
		// Ranks without events end before anything is merged.
		for !s.done {
			for s.i < len(s.ev) && s.ev[s.i].Rank < 0 && math.IsInf(s.ev[s.i].Enter, -1) {
				a.m.endRank(-1 - s.ev[s.i].Rank)
				ended[-1-s.ev[s.i].Rank] = true
				s.i++
			}
			if s.i < len(s.ev) {
				break
			}
			if err := a.fetch(s); err != nil {
				return err
			}
		}
		if !s.done {
			s.at()
			h = append(h, s)
		}
	}
	heap.Init(&h)
	if len(h) > 0 {
		a.startWindow(h[0].key)
	} else {
		a.startWindow(math.Inf(1))
	}
	sinks := a.opt.Sinks
	var n int64
	for len(h) > 0 {
		s := h[0]
		ev := &s.ev[s.i]
		if ev.Rank < 0 {
			a.m.endRank(-1 - ev.Rank)
			ended[-1-ev.Rank] = true
		} else {
			rs := a.ranks[ev.Rank]
			if s.w != 0 {
				// A worker's call-site index: process 0's for the same
				// site (object, offset), which the worker's index names.
				if ws := ev.Site; ws >= 0 && int(ws) < len(s.xlate) && s.xlate[ws] >= 0 {
					ev.Site = s.xlate[ws]
				} else {
					ev.Site = a.siteOf(rs, ev.Callsite)
					if ws >= 0 && ws < 1<<20 {
						for int(ws) >= len(s.xlate) {
							s.xlate = append(s.xlate, -1)
						}
						s.xlate[ws] = ev.Site
					}
				}
			}
			if err := a.consume(ev, rs, sinks); err != nil {
				return err
			}
			n++
			if a.opt.Progress != nil && n&0xffff == 0 {
				a.opt.Progress(n, total)
			}
		}
		s.i++
		if s.i >= len(s.ev) {
			if err := a.fetch(s); err != nil {
				return err
			}
			if s.done {
				heap.Pop(&h)
				continue
			}
		}
		s.at()
		h.siftTop()
	}
	// Every rank must have come from its worker: one that could not read
	// the run (another machine without the directory) sends nothing.
	for _, s := range streams {
		if e, ok := s.ends[-1]; ok {
			return fmt.Errorf("%w: process %d: %s", ErrDistInput, s.w, e.Err)
		}
	}
	for r, rs := range a.ranks {
		if rs != nil && !ended[r] {
			return fmt.Errorf("%w: rank %d's events never came from its worker (can every process read %s?)", ErrDistInput, r, a.rn.Dir)
		}
	}
	// What the workers' decoders found, as a serial run reports it
	// (process 0's own stream has no ends: its decoders wrote them).
	for _, s := range streams {
		a.applyEnds(s.ends)
	}
	a.m.flush()
	if a.opt.Progress != nil {
		a.opt.Progress(n, total)
	}
	a.stopMetrics()
	return a.finErr
}

// applyEnds records what a worker's decoders found at its ranks' ends
// (read errors, unknown communicators, unsorted events, bad times,
// damage) in the ranks' state, as a serial run's decoders would have.
func (a *analyzer) applyEnds(ends map[int]distEnd) {
	for r, e := range ends {
		if r < 0 || r >= len(a.ranks) || a.ranks[r] == nil {
			continue
		}
		rs := a.ranks[r]
		if e.Err != "" {
			rs.err = errors.New(e.Err)
		}
		rs.unknown, rs.unsorted, rs.badTimes = e.Unknown, e.Unsorted, e.BadTimes
		rs.remoteDamage = e.Damage
	}
}

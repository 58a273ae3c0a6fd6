package merge

// A worker of a parallel analysis (dist.go), and the in-process merge of
// the ranks a process owns, which process 0 runs for its own block too.

import (
	"container/heap"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"sync"

	"github.com/gclock/gclock/merge/datamodel"
)

// Serve runs a worker process (Dist.Me > 0) of a parallel analysis: it
// decodes and merges the rank files Owner gives it and answers process
// 0's requests until told to stop. The pass must be prepared with the
// same options as process 0's (the same command line).
func (p *Pass) Serve(d *Dist) error {
	a := p.a
	n := len(a.rn.Ranks)
	// The assignment first (or stop, when process 0 failed before it).
	msg, err := recvMsg(d.T, 0, nil)
	if err != nil {
		return err
	}
	if pl, ok, err := decodePlan(msg); ok {
		d.parted = true
		if err != nil {
			return err
		}
		return a.servePart(pl, d)
	}
	switch {
	case len(msg) == 4 && binary.LittleEndian.Uint32(msg) == 0:
		return nil
	case len(msg) != 16:
		return errors.New("parallel analysis: bad assignment")
	}
	lo := min(binary.LittleEndian.Uint64(msg[:8]), uint64(n))
	hi := min(binary.LittleEndian.Uint64(msg[8:]), uint64(n))
	var mine []*rankState
	for _, ri := range a.rn.Ranks[lo:max(lo, hi)] {
		mine = append(mine, a.ranks[ri.Rank])
	}
	done := make(chan struct{})
	chunks, spare, ends := a.localChunks(mine, n, distChunk, done) // sent chunks go back on spare
	defer func() {
		close(done)
		for range chunks { // let the merger finish
		}
	}()
	in := msg
	ended := false
	for {
		msg, err := recvMsg(d.T, 0, in)
		if err != nil {
			return err
		}
		in = msg
		if len(msg) != 4 {
			return errors.New("parallel analysis: bad request")
		}
		if binary.LittleEndian.Uint32(msg) == 0 {
			return nil
		}
		c, ok := <-chunks
		if !ok || ended {
			ended = true
			j, _ := json.Marshal(*ends)
			if err := sendReply(d.T, true, j); err != nil {
				return err
			}
			continue
		}
		// The records go out from where they are (no copy).
		err = sendReply(d.T, false, evBytes(c))
		select {
		case spare <- c[:0]:
		default:
		}
		if err != nil {
			return err
		}
	}
}

// localChunks runs mergeLocal over mine (of nRanks) in a goroutine and
// hands its chunks on chunks, which is closed when the merge has ended;
// then *ends holds what each rank's decoder found. Closing quit stops the
// merge; a spent chunk given back on spare is reused. The serving worker
// (Serve, chunks of distChunk events: what it ships) and the partitioned
// decoder (partDecode, chunks of partChunk: it routes them, and up to 8
// chunks of 4 MB were 17 MB of a K=8 worker's heap) read the same stream
// in chunks of size events.
func (a *analyzer) localChunks(mine []*rankState, nRanks, size int, quit <-chan struct{}) (chunks <-chan []datamodel.GEvent, spare chan<- []datamodel.GEvent, ends *map[int]distEnd) {
	c := make(chan []datamodel.GEvent, 2)
	sp := make(chan []datamodel.GEvent, 4)
	ends = new(map[int]distEnd)
	go func() {
		defer close(c)
		*ends = a.mergeLocal(mine, nRanks, size, quit, func(ch []datamodel.GEvent) bool {
			select {
			case c <- ch:
				return true
			case <-quit:
				return false
			}
		}, sp)
	}()
	return c, sp, ends
}

// mergeLocal decodes the ranks of mine and merges them as the serial pass
// does, handing chunks of events and end markers to send (false: stop;
// spent chunks come back on spare); it returns what each rank's decoder
// found once every stream has ended.
func (a *analyzer) mergeLocal(mine []*rankState, nRanks, size int, done <-chan struct{}, send func([]datamodel.GEvent) bool, spare <-chan []datamodel.GEvent) map[int]distEnd {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// With one core (GOMAXPROCS=1, as a process of an oversubscribed job
	// runs) a decoder goroutine per rank gains nothing and keeps up to
	// four batches in flight per rank (8 MB of a K=8 worker's 36 MB live
	// heap at 1024 ranks): the ranks are then decoded on the merge
	// goroutine when their cursor needs a batch, as the serial pass does
	// above syncRanks.
	syncDec := runtime.GOMAXPROCS(0) == 1
	for _, rs := range mine {
		if syncDec {
			rs.sync = a.newDecState(rs, nil, true)
			rs.free = make(chan *batch, 1)
			continue
		}
		depth := 2
		if nRanks > 64 {
			depth = 1
		}
		rs.out = make(chan *batch, depth)
		rs.free = make(chan *batch, depth+2)
		wg.Add(1)
		go a.decode(rs, stop, &wg)
	}
	defer func() {
		close(stop)
		for _, rs := range mine {
			if rs.out != nil {
				for range rs.out {
				}
			}
		}
		wg.Wait()
	}()
	chunk := make([]datamodel.GEvent, 0, size)
	emit := func(e datamodel.GEvent) bool {
		chunk = append(chunk, e)
		if len(chunk) < size {
			return true
		}
		if !send(chunk) {
			return false
		}
		select {
		case chunk = <-spare:
			chunk = chunk[:0]
		default:
			chunk = make([]datamodel.GEvent, 0, size)
		}
		return true
	}
	groups := distGroups(len(mine))
	if groups <= 1 {
		if !mergeRanks(mine, emit) {
			return nil
		}
	} else if !mergeGroups(mine, groups, done, emit) {
		return nil
	}
	if len(chunk) > 0 && !send(chunk) {
		return nil
	}
	wg.Wait() // every decoder has returned: its counters are final
	ends := map[int]distEnd{}
	if a.failed != nil {
		ends[-1] = distEnd{Err: a.failed.Error()}
	}
	for _, rs := range mine {
		var e distEnd
		e.Unknown, e.Unsorted, e.BadTimes = rs.unknown, rs.unsorted, rs.badTimes
		if rs.err != nil {
			e.Err = rs.err.Error()
		}
		e.Damage = rs.in.LateDamage()
		if e.Err != "" || e.Unknown+e.Unsorted+e.BadTimes > 0 || len(e.Damage) > 0 {
			ends[rs.in.Rank] = e
		}
	}
	return ends
}

// distGroupMin is the number of ranks per merge group below which a
// worker merges in one goroutine (a variable for the tests).
var distGroupMin = 128

// distGroups is how many goroutines a worker merges its n ranks with: the
// merge loop over many ranks is bound by cache misses (a cold batch per
// event), so big shares are merged in groups of at least distGroupMin
// ranks, one per core (GOMAXPROCS), whose record streams are then merged
// again (cheap: sequential records).
func distGroups(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/distGroupMin))
}

// mergeRanks merges the ranks' decoded streams (their decoders running)
// in the serial merge's order, emitting events and end markers; false
// when emit stops. From windowRanks ranks on it merges in windows, as the
// serial pass does (kway_window.go: the same order; the heap cost a
// worker of a K=2 run over 683 of 1024 ranks ≈ 165 ns an event against
// the windows' ≈ 90).
func mergeRanks(ranks []*rankState, emit func(datamodel.GEvent) bool) bool {
	h := newCursorHeap(len(ranks))
	for _, rs := range ranks {
		c := &cursor{rs: rs}
		if c.next() {
			h.add(c)
		} else if !emit(datamodel.GEvent{Rank: -1 - int32(rs.in.Rank), Enter: math.Inf(-1)}) {
			return false
		}
	}
	if len(ranks) >= windowRanks && h.Len() > 0 {
		w := newWindowMerge(h.cur) // in ascending rank order, as ranks
		// the consumer (partDecode's routing) updates each event's rank's
		// sums and pause state, as the serial consumer does: prefetched
		w.rs = make([]*rankState, len(h.cur))
		for ci, c := range h.cur {
			w.rs[ci] = c.rs
		}
		errStop := errors.New("stopped")
		err := w.run(func(ev *datamodel.GEvent, ci int32, end bool) error {
			if !emit(*ev) || end && !emit(datamodel.GEvent{Rank: -1 - int32(w.cs[ci].rs.in.Rank), Enter: ev.Enter}) {
				return errStop
			}
			return nil
		})
		return err == nil
	}
	heap.Init(h)
	for h.Len() > 0 {
		c := h.top()
		ev := &c.b.ev[c.i]
		last := ev.Enter
		if !emit(*ev) {
			return false
		}
		if done := h.advanceTop(); done != nil && !emit(datamodel.GEvent{Rank: -1 - int32(done.rs.in.Rank), Enter: last}) {
			return false
		}
	}
	return true
}

// mergeGroups merges ranks in g contiguous groups, each in its own
// goroutine, and merges the groups' record streams by the same key
// (markers of ranks without events first, as mergeRanks emits them).
func mergeGroups(ranks []*rankState, g int, done <-chan struct{}, emit func(datamodel.GEvent) bool) bool {
	const sub = 4096
	quit := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(quit)
		wg.Wait()
	}()
	streams := make([]*distStream, g)
	for i := 0; i < g; i++ {
		part := ranks[i*len(ranks)/g : (i+1)*len(ranks)/g]
		s := &distStream{ch: make(chan distFetched, 2), spare: make(chan []datamodel.GEvent, 3)}
		streams[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(s.ch)
			buf := make([]datamodel.GEvent, 0, sub)
			send := func() bool {
				select {
				case s.ch <- distFetched{ev: buf}:
				case <-quit:
					return false
				}
				select {
				case buf = <-s.spare:
					buf = buf[:0]
				default:
					buf = make([]datamodel.GEvent, 0, sub)
				}
				return true
			}
			ok := mergeRanks(part, func(e datamodel.GEvent) bool {
				buf = append(buf, e)
				return len(buf) < sub || send()
			})
			if ok && len(buf) > 0 {
				send()
			}
		}()
	}
	next := func(s *distStream) bool { // false at the stream's end
		if s.ev != nil {
			select {
			case s.spare <- s.ev:
			default:
			}
		}
		f, ok := <-s.ch
		s.ev, s.i = f.ev, 0
		return ok
	}
	h := make(streamHeap, 0, g)
	for _, s := range streams {
		for next(s) {
			for s.i < len(s.ev) && s.ev[s.i].Rank < 0 && math.IsInf(s.ev[s.i].Enter, -1) {
				if !emit(s.ev[s.i]) {
					return false
				}
				s.i++
			}
			if s.i < len(s.ev) {
				s.at()
				h = append(h, s)
				break
			}
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		s := h[0]
		if !emit(s.ev[s.i]) {
			return false
		}
		s.i++
		if s.i >= len(s.ev) && !next(s) {
			heap.Pop(&h)
			continue
		}
		s.at()
		h.siftTop()
	}
	select {
	case <-done:
		return false
	default:
	}
	return true
}

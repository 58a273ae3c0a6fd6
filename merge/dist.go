package merge

// Parallel analysis across processes (tracemerge under mpirun, docs/
// tracemerge.md "Parallel tracemerge"). Every process owns a contiguous
// block of the rank files (OwnerShare; process 0 a smaller one, Dist.Share0,
// as it also runs the analysis); a process reads,
// decompresses, decodes, corrects and orders its ranks' events and merges
// them into one stream in the order of the serial k-way merge (global
// Enter, then rank), with a marker where each rank's stream ends.
// Process 0 merges the K-1 streams and its own (merged in-process by the
// same code) by the same key and runs the matching,
// metrics, streaming analyses and outputs unchanged. A merge of merged
// streams under one total order is the serial merge: process 0 sees the
// same events in the same order, with each rank's end at the same place,
// so the outputs are byte for byte those of a serial run.
//
// Wire protocol (process 0 <-> one worker, in order):
//
//	assign  (0 -> w): first, 8-byte length 16, then uint64 lo, hi: the
//	                  worker owns the rank files [lo, hi) of Run.Ranks
//	request (0 -> w): 8-byte length 4, then uint32 1: next chunk (up to distInflight
//	                  outstanding); uint32 0: stop serving (also instead of
//	                  the assignment)
//	reply   (w -> 0): an 8-byte header: the body's length, bit 63 set
//	                  for the end record; then the body: GEvents in their
//	                  in-memory layout (the same binary runs everywhere),
//	                  sent from and received into []GEvent without a
//	                  copy; a GEvent with Rank < 0 marks the end of rank
//	                  -1-Rank (Enter: the key of its last event, -Inf for a
//	                  rank without events). The end record is a JSON map
//	                  from rank to distEnd (what each rank's decoder
//	                  found; -1: why the worker could not read the run).

import (
	"container/heap"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// Transport moves byte messages between the processes of a parallel
// analysis (mpirt.World over MPI; channels in tests). Messages between two
// processes arrive in the order they were sent.
type Transport interface {
	Send(dest, tag int, b []byte) error
	Recv(src, tag int, b []byte) error
}

// ErrDistInput is wrapped by the errors of a parallel analysis whose
// workers could not deliver the run (a worker could not read it).
var ErrDistInput = errors.New("parallel analysis")

// distTag is the message tag of the protocol.
const distTag = 7131

// distChunk is the number of events (and markers) in one reply (4 MiB):
// large, so that the latency of a request (polled, see mpirt) is paid
// rarely; distInflight requests are kept outstanding per worker.
const (
	distChunk    = 32768
	distInflight = 2
)

// Dist is this process's part in a parallel analysis of K = Procs
// processes. Process 0 analyses (Pass.SetDist), the others serve
// (Pass.Serve).
type Dist struct {
	Procs int
	Me    int
	T     Transport
	// Share0 is process 0's share of the rank files relative to a
	// worker's (0: none, 1: an equal one); only process 0's value
	// counts, it assigns the blocks. Process 0 also matches and
	// measures every event, so its share is smaller (DefaultShare0).
	Share0 float64
	// Partition asks process 0 to partition the analysis itself when the
	// pass allows it (part.go: no per-event sink, no capture, no repair
	// or refinement, a known window and footers); otherwise, and always
	// on workers, the events are shipped to process 0.
	Partition bool
	// FailPart, when set on a worker, makes its partitioned pass fail
	// with it at once (tests: a failing process must end the job, never
	// leave it hanging; tracemerge sets it from GCLOCK_PAR_TEST_FAIL).
	FailPart error

	assignErr error // sending the assignments (SetDist)
	assigned  bool  // the assignments are sent
	parted    bool  // a partitioned pass started (part.go)

	mu      sync.Mutex
	stopped bool
	stopErr error
	quit    chan struct{} // stops the fetchers
	fetchWG sync.WaitGroup
}

// Owner returns the process that decodes the file at index i of n rank
// files (Run.Ranks order) among procs processes when process 0, which runs
// the analysis, decodes none: with one process, 0; otherwise the workers
// 1..procs-1 take contiguous, equal (±1) blocks. OwnerShare(i, n, procs, 0).
func Owner(i, n, procs int) int { return OwnerShare(i, n, procs, 0) }

// OwnerShare returns the process that decodes the file at index i of n
// rank files among procs processes when process 0 takes share0 times a
// worker's share (0 ≤ share0 ≤ 1): process 0 the first
// round(n·share0/(share0+procs-1)) files, the workers 1..procs-1
// contiguous, equal (±1) blocks of the rest.
func OwnerShare(i, n, procs int, share0 float64) int {
	if procs <= 1 || n <= 0 {
		return 0
	}
	n0 := share0Files(n, procs, share0)
	if i < n0 {
		return 0
	}
	w := procs - 1
	return 1 + (i-n0)*w/(n-n0)
}

// share0Files is how many of n rank files process 0 decodes itself
// (OwnerShare); always fewer than n, so every worker has work.
func share0Files(n, procs int, share0 float64) int {
	if procs <= 1 {
		return n
	}
	if !(share0 > 0) { // also NaN
		return 0
	}
	share0 = min(share0, 1)
	n0 := int(math.Round(float64(n) * share0 / (share0 + float64(procs-1))))
	return max(0, min(n0, n-(procs-1)))
}

// ownedBlock is the range [lo, hi) of the n rank files process p owns.
func ownedBlock(p, n, procs int, share0 float64) (lo, hi int) {
	lo, hi = n, n
	for i := 0; i < n; i++ {
		if o := OwnerShare(i, n, procs, share0); o == p && lo == n {
			lo = i
		} else if o > p {
			hi = i
			break
		}
	}
	if lo == n {
		return n, n
	}
	return lo, hi
}

// DefaultShare0 is process 0's default share of the rank files relative to
// a worker's (Dist.Share0), chosen by measurement (docs/tracemerge.md
// "Speed and scaling model"): with 2 processes on 2 cores, 0.3 was the
// fastest of 0-1 (process 0's analysis takes a little less CPU per event
// than decoding and merging); with more, its analysis alone is the
// longest chain, so none.
func DefaultShare0(procs int) float64 {
	if procs == 2 {
		return 0.3
	}
	return 0
}

// distEnd is what one rank's decoder found, sent at the end of a stream.
type distEnd struct {
	Err      string   `json:"err,omitempty"`
	Unknown  int      `json:"unknown,omitempty"`
	Unsorted int      `json:"unsorted,omitempty"`
	BadTimes int      `json:"bad_times,omitempty"`
	Damage   []string `json:"damage,omitempty"`
}

var evSize = int(unsafe.Sizeof(GEvent{}))

func evBytes(ev []GEvent) []byte {
	if len(ev) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&ev[0])), len(ev)*evSize)
}

func sendMsg(t Transport, dest int, b []byte) error {
	var h [8]byte
	binary.LittleEndian.PutUint64(h[:], uint64(len(b)))
	if err := t.Send(dest, distTag, h[:]); err != nil {
		return err
	}
	if len(b) == 0 {
		return nil
	}
	return t.Send(dest, distTag, b)
}

func recvMsg(t Transport, src int, buf []byte) ([]byte, error) {
	var h [8]byte
	if err := t.Recv(src, distTag, h[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(h[:])
	if n > 1<<30 {
		return nil, fmt.Errorf("parallel analysis: message of %d bytes from process %d", n, src)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if n == 0 {
		return buf, nil
	}
	return buf, t.Recv(src, distTag, buf)
}

func request(t Transport, w int, what uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], what)
	return sendMsg(t, w, b[:])
}

// Close ends a parallel analysis on process 0: the fetchers stop (each
// after the reply it waits for), then every worker is told to stop
// serving. Safe to call more than once, and when no pass ran.
func (d *Dist) Close() error {
	if d == nil || d.Me != 0 || d.Procs <= 1 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return d.stopErr
	}
	d.stopped = true
	if d.quit != nil {
		close(d.quit)
	}
	d.fetchWG.Wait()
	for w := 1; w < d.Procs; w++ {
		if err := request(d.T, w, 0); err != nil && d.stopErr == nil {
			d.stopErr = err
		}
	}
	return d.stopErr
}

// distStream is process 0's view of one worker's merged stream.
type distStream struct {
	w     int
	ev    []GEvent
	i     int
	key   float64
	rank  int32 // of ev[i]: the event's rank, or the ended rank of a marker
	ends  map[int]distEnd
	done  bool
	ch    chan distFetched
	spare chan []GEvent
	// xlate maps the worker's call-site indices to process 0's (-1: not
	// yet known): one small table instead of a look-up in the event's
	// rank's pc cache, a cache miss per event with many ranks.
	xlate []int32
}

type distFetched struct {
	ev   []GEvent
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
				f.ev = make([]GEvent, k)
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
	var total int64
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		if f := rs.in.Meta.Footer; f != nil && total >= 0 {
			total += int64(f.Events)
		} else {
			total = -1
		}
	}
	if total < 0 {
		total = 0
	}
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
		s := &distStream{w: w, ch: make(chan distFetched, 1), spare: make(chan []GEvent, 2)}
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
		s := &distStream{w: 0, ch: make(chan distFetched, 1), spare: make(chan []GEvent, 4)}
		streams = append(streams, s)
		go func() {
			defer close(finished)
			defer close(s.ch)
			if a.mergeLocal(mine, len(a.rn.Ranks), quit, func(c []GEvent) bool {
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
				if ws := ev.site; ws >= 0 && int(ws) < len(s.xlate) && s.xlate[ws] >= 0 {
					ev.site = s.xlate[ws]
				} else {
					ev.site = a.siteOf(rs, ev.Callsite)
					if ws >= 0 && ws < 1<<20 {
						for int(ws) >= len(s.xlate) {
							s.xlate = append(s.xlate, -1)
						}
						s.xlate[ws] = ev.site
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
	chunks := make(chan []GEvent, 2)
	spare := make(chan []GEvent, 4) // sent chunks back to the merger
	var ends map[int]distEnd
	go func() {
		defer close(chunks)
		ends = a.mergeLocal(mine, n, done, func(c []GEvent) bool {
			select {
			case chunks <- c:
				return true
			case <-done:
				return false
			}
		}, spare)
	}()
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
			j, _ := json.Marshal(ends)
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

// replyEnd flags, in a reply's 8-byte header, the end record (JSON)
// instead of GEvent records; the other bits are the body's length.
const replyEnd = 1 << 63

// sendReply sends a worker's reply to process 0: the header, then the
// body from where it is.
func sendReply(t Transport, end bool, body []byte) error {
	h := uint64(len(body))
	if end {
		h |= replyEnd
	}
	var hb [8]byte
	binary.LittleEndian.PutUint64(hb[:], h)
	if err := t.Send(0, distTag, hb[:]); err != nil {
		return err
	}
	if len(body) == 0 {
		return nil
	}
	return t.Send(0, distTag, body)
}

// recvReplyHeader reads a reply's header: the body's length and whether
// it is the end record.
func recvReplyHeader(t Transport, src int) (n int, end bool, err error) {
	var hb [8]byte
	if err := t.Recv(src, distTag, hb[:]); err != nil {
		return 0, false, err
	}
	h := binary.LittleEndian.Uint64(hb[:])
	end = h&replyEnd != 0
	h &^= replyEnd
	if h > 1<<30 {
		return 0, false, fmt.Errorf("parallel analysis: reply of %d bytes from process %d", h, src)
	}
	return int(h), end, nil
}

// mergeLocal decodes the ranks of mine and merges them as the serial pass
// does, handing chunks of events and end markers to send (false: stop;
// spent chunks come back on spare); it returns what each rank's decoder
// found once every stream has ended.
func (a *analyzer) mergeLocal(mine []*rankState, nRanks int, done <-chan struct{}, send func([]GEvent) bool, spare <-chan []GEvent) map[int]distEnd {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, rs := range mine {
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
			for range rs.out {
			}
		}
		wg.Wait()
	}()
	chunk := make([]GEvent, 0, distChunk)
	emit := func(e GEvent) bool {
		chunk = append(chunk, e)
		if len(chunk) < distChunk {
			return true
		}
		if !send(chunk) {
			return false
		}
		select {
		case chunk = <-spare:
			chunk = chunk[:0]
		default:
			chunk = make([]GEvent, 0, distChunk)
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
		if m := rs.in.Src.Meta(); m != nil && len(m.Damage) > rs.in.knownDamage {
			for _, dm := range m.Damage[rs.in.knownDamage:] {
				e.Damage = append(e.Damage, damageString(rs.in.Path, dm))
			}
		}
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
// when emit stops.
func mergeRanks(ranks []*rankState, emit func(GEvent) bool) bool {
	h := make(cursorHeap, 0, len(ranks))
	for _, rs := range ranks {
		c := &cursor{rs: rs}
		if c.next() {
			h = append(h, c)
		} else if !emit(GEvent{Rank: -1 - int32(rs.in.Rank), Enter: math.Inf(-1)}) {
			return false
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		ev := &c.b.ev[c.i]
		last := ev.Enter
		if !emit(*ev) {
			return false
		}
		if done := h.advanceTop(); done != nil && !emit(GEvent{Rank: -1 - int32(done.rs.in.Rank), Enter: last}) {
			return false
		}
	}
	return true
}

// mergeGroups merges ranks in g contiguous groups, each in its own
// goroutine, and merges the groups' record streams by the same key
// (markers of ranks without events first, as mergeRanks emits them).
func mergeGroups(ranks []*rankState, g int, done <-chan struct{}, emit func(GEvent) bool) bool {
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
		s := &distStream{ch: make(chan distFetched, 2), spare: make(chan []GEvent, 3)}
		streams[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(s.ch)
			buf := make([]GEvent, 0, sub)
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
					buf = make([]GEvent, 0, sub)
				}
				return true
			}
			ok := mergeRanks(part, func(e GEvent) bool {
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

// SetDist makes process 0's pass take every rank from the workers (see
// Serve) instead of reading the files itself.
func (p *Pass) SetDist(d *Dist) {
	if d == nil || d.Procs <= 1 || d.Me != 0 {
		return
	}
	p.a.dist = d
	d.assigned, d.assignErr = false, nil
	if !d.Partition {
		// Each worker's block, at once: the workers decode while process
		// 0 still prepares its outputs.
		d.assign(len(p.a.rn.Ranks))
	}
}

// Parted reports whether process 0 started a partitioned pass (part.go):
// then a process that fails must abort the job, as the others wait for
// its messages.
func (d *Dist) Parted() bool { return d != nil && d.parted }

// assign sends every worker its block of the n rank files (once).
func (d *Dist) assign(n int) {
	if d.assigned {
		return
	}
	d.assigned = true
	for w := 1; w < d.Procs; w++ {
		lo, hi := ownedBlock(w, n, d.Procs, d.Share0)
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], uint64(lo))
		binary.LittleEndian.PutUint64(b[8:], uint64(hi))
		if err := sendMsg(d.T, w, b[:]); err != nil && d.assignErr == nil {
			d.assignErr = fmt.Errorf("parallel analysis: assigning process %d its rank files: %w", w, err)
		}
	}
}

// ServeNothing answers process 0 as a worker that could not prepare the
// run (why: the reason), with an empty stream that carries the reason,
// until told to stop; process 0's analysis then fails with it.
func ServeNothing(d *Dist, why error) error {
	p := &Pass{a: &analyzer{rn: &Run{}, failed: why}}
	return p.Serve(d)
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

package merge

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gclock/gclock/merge/datamodel"
)

// The root-cause stream drives the point-to-point stream itself (one
// matching of the messages), so in a default run both took their turns
// on one goroutine, the run's longest chain: at 16,384 ranks every
// rank's state of both is cold at each of its events, and that
// goroutine alone took ≈ 20 s of CPU of a ≈ 31 s run. From
// pipeRanks ranks a batch is split: the point-to-point stream takes its
// events on a goroutine of its own, a piece of pipeChunk events ahead,
// and writes down the wait states it finds (the calls it would make to
// OnSync) with the event they were found at; the root-cause stream
// follows on the AsyncSink's goroutine and replays them at the point of
// its Add where the stream's own Add would have made them. Neither
// stream reads the other's state, so the result is the same, event for
// event (TestRootCauseStream_PrefetchAndPipeAtManyRanksChangeNothing).

// pipeRanks is the number of ranks from which the root-cause stream
// runs its point-to-point stream on a goroutine of its own (a variable
// for the tests).
var pipeRanks = prefetchRanks

// pipeChunk is the number of events the point-to-point goroutine hands
// on at a time: a batch of asyncBatch events is asyncBatch/pipeChunk
// hand-offs, and the root-cause stream waits for the first only.
const pipeChunk = 512

// rcPipe is the hand-off between the point-to-point goroutine and the
// root-cause stream for one batch.
type rcPipe struct {
	ready chan int      // a piece is done (its index)
	syncs [][]pipedSync // by piece: the wait states found, in order
	at    int32         // the event the worker is at
	buf   []pipedSync   // the worker's piece under way
	onAdd func(P2PSync) // the stream's OnSync while piped (appends to buf)
	err   error         // the worker's error, at errAt
	errAt int           // index of the event of err (len(batch): none)
	fail  bool          // err is a panic: errAt was not taken
	saved func(P2PSync) // the stream's OnSync otherwise
}

// pipedSync is a wait state the point-to-point stream found at event i
// of a batch.
type pipedSync struct {
	i int32
	y P2PSync
}

// piped reports whether b goes through the pipe.
func (s *RootCauseStream) piped() bool {
	return s.fed == nil && s.p2p.ranks.len() >= pipeRanks && s.ranks.len() >= pipeRanks
}

// addBatchPiped adds b as addBatch would, the point-to-point stream on
// a goroutine of its own (p2p_pipe.go).
func (s *RootCauseStream) addBatchPiped(b []datamodel.GEvent) error {
	p := s.pipe
	if p == nil {
		p = &rcPipe{ready: make(chan int, asyncBatch/pipeChunk+1)}
		p.onAdd = func(y P2PSync) { p.buf = append(p.buf, pipedSync{p.at, y}) }
		s.pipe = p
	}
	pieces := (len(b) + pipeChunk - 1) / pipeChunk
	for len(p.syncs) < pieces {
		p.syncs = append(p.syncs, nil)
	}
	p.err, p.errAt, p.fail = nil, len(b), false
	p.saved = s.p2p.opt.OnSync
	s.p2p.opt.OnSync = p.onAdd
	go s.p2pPieces(b, p)
	var err error
	for c := 0; c < pieces && err == nil; c++ {
		<-p.ready
		lo, hi := c*pipeChunk, min((c+1)*pipeChunk, len(b))
		if hi > p.errAt { // the worker stopped in this piece
			hi = p.errAt
			if !p.fail {
				hi++ // its error comes after the event's own work
			}
			err = p.err
		}
		syncs := p.syncs[c]
		for i := lo; i < hi; i++ {
			for k, d := range deepStages[:3] {
				if j := i + d; j < len(b) {
					s.prefetchOwn(&b[j], k)
				}
			}
			e := &b[i]
			r := s.ranks.at(e.Rank)
			if r == nil {
				if r = s.rank(e.Rank); r == nil {
					continue
				}
			}
			if rcOpKinds[e.Op]&rcOpContinues == 0 || e.Seq == 0 { // !e.Continuation(), as Add asks
				s.addCall(r, e)
			}
			s.gen++
			for len(syncs) > 0 && syncs[0].i == int32(i) {
				s.onSync(syncs[0].y)
				syncs = syncs[1:]
			}
			s.afterP2P(r, e)
		}
	}
	// the worker has sent its last piece: it is done with the stream
	s.p2p.opt.OnSync = p.saved
	return err
}

// p2pPieces adds b's events to the point-to-point stream with its
// prefetch stages, handing on each piece of pipeChunk events as it is
// done; it stops at the first error (a panic too: the AsyncSink's
// recovery is on the other goroutine).
func (s *RootCauseStream) p2pPieces(b []datamodel.GEvent, p *rcPipe) {
	c := 0
	defer func() {
		if r := recover(); r != nil {
			p.err, p.errAt, p.fail = fmt.Errorf("point-to-point analysis failed: %v", r), int(p.at), true
			p.syncs[c], p.buf = p.buf, nil
			p.ready <- c
		}
	}()
	deep := s.p2p.PrefetchDeep()
	for ; c*pipeChunk < len(b); c++ {
		p.buf = p.syncs[c][:0]
		for i := c * pipeChunk; i < min((c+1)*pipeChunk, len(b)); i++ {
			if deep {
				if j := i + deepStages[0] + prefetchDistance; j < len(b) {
					prefetchEvent(uintptr(unsafe.Pointer(&b[j])))
				}
				for k, d := range deepStages {
					if j := i + d; j < len(b) {
						if e := &b[j]; s.p2p.Wants(e.Op) {
							s.p2p.PrefetchStage(e, k)
						} else if e.Rank >= 0 {
							s.p2p.prefetchEndCall(e, k) // endCall below
						}
					}
				}
			}
			e := &b[i]
			if e.Rank < 0 { // not a rank: the root-cause stream skips it
				continue
			}
			p.at = int32(i)
			var err error
			if s.p2p.Wants(e.Op) {
				err = s.p2p.Add(e)
			} else {
				s.p2p.endCall(e.Rank)
			}
			if err != nil {
				p.err, p.errAt = err, i
				p.syncs[c], p.buf = p.buf, nil
				p.ready <- c
				return
			}
		}
		p.syncs[c], p.buf = p.buf, nil
		p.ready <- c
	}
}

// In a partitioned pass (part.go) the root-cause stream on process 0
// does not match messages either: the point-to-point owners do, each
// over its ranks, and report the wait states they find (OnSync) as
// records keyed by their step in the serial order (p2p_part.go prSync;
// the decoders' call-boundary markers put those found at a call that is
// not point-to-point at the serial step: decision D83). Process 0 replays
// a round's records before it hands the round's events to the stream
// sinks, and the stream, fed, takes each event's wait states after the
// event's own call, where its Add would have had them from its
// point-to-point stream (as addBatchPiped does with its goroutine's).

// rcFeed is a fed root-cause stream's queue of wait states.
type rcFeed struct {
	mu   sync.Mutex
	in   []fedSync    // queued by process 0's replay, in key order
	n    atomic.Int64 // len(in): the stream looks without the lock
	q    []fedSync    // the stream's, taken from in
	head int          // next in q
	ord  []uint64     // by rank: its events the stream has taken
}

// fedSync is a wait state and the step (merge key) it was found at.
type fedSync struct {
	k mergeKey
	y P2PSync
}

// feedFrom makes s a fed stream: the wait states come from the
// replay of ps (s's point-to-point stream, which process 0 replays from
// the owners' records) instead of from its own matching.
func (s *RootCauseStream) feedFrom(ps *P2PStream) {
	f := &rcFeed{}
	s.fed = f
	ps.feed = func(k p2pRecKey, y P2PSync) {
		f.mu.Lock()
		f.in = append(f.in, fedSync{k.mergeKey, y})
		f.n.Store(int64(len(f.in)))
		f.mu.Unlock()
	}
}

// fedSyncs hands the stream the wait states found at event e (rank e.Rank
// >= 0), in their order.
func (s *RootCauseStream) fedSyncs(e *datamodel.GEvent) {
	f := s.fed
	for int(e.Rank) >= len(f.ord) {
		f.ord = append(f.ord, 0)
	}
	f.ord[e.Rank]++
	if f.head == len(f.q) {
		if f.n.Load() == 0 {
			return
		}
		f.mu.Lock()
		f.q, f.in, f.head = f.in, f.q[:0], 0
		f.n.Store(0)
		f.mu.Unlock()
	}
	ord := f.ord[e.Rank]
	for f.head < len(f.q) {
		k := &f.q[f.head].k
		if k.rank != e.Rank || k.ord != ord || math.Float64bits(k.enter) != math.Float64bits(e.Enter) {
			return
		}
		y := f.q[f.head].y
		f.head++
		s.onSync(y)
		if f.head == len(f.q) && f.n.Load() > 0 { // more queued meanwhile: this event's may follow
			f.mu.Lock()
			f.q, f.in, f.head = f.in, f.q[:0], 0
			f.n.Store(0)
			f.mu.Unlock()
		}
	}
}

package merge

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// OpFilter is implemented by sinks that ignore every event whose
// operation they do not want (the point-to-point and one-sided streams):
// an AsyncSink then neither copies nor hands over the others, a copy of
// 128 bytes per event saved on the merge's chain. Wants depends on the op
// alone (an AsyncSink asks once per op value).
type OpFilter interface {
	Wants(op trace.Op) bool
}

// AsyncSink runs a Sink in its own goroutine so slow consumers (CSV and
// JSON formatting, the Gantt builder) overlap with the merge instead of
// adding to it. Events are copied into batches; order is preserved.
// Memory: a few batches of asyncBatch events.
type AsyncSink struct {
	s    datamodel.Sink
	want OpFilter // nil: every event
	// wantLow caches want.Wants for ops below wantLowOps: an interface
	// call per event and sink was ≈ 3 % of a default run's CPU
	// (2026-11-26).
	wantLow [wantLowOps]bool
	cur     []datamodel.GEvent
	ch      chan []datamodel.GEvent
	free    chan []datamodel.GEvent
	done    chan struct{}
	firstErr
	close sync.Once
}

const asyncBatch = 4096

// wantLowOps bounds the ops whose OpFilter answer an AsyncSink keeps
// (every op gclock defines; a larger value from a newer recorder asks
// the filter).
const wantLowOps = 256

// NewAsyncSink starts the goroutine feeding s. Call Close after the last
// Add; it returns the first error s reported.
func NewAsyncSink(s datamodel.Sink) *AsyncSink {
	a := &AsyncSink{s: s, ch: make(chan []datamodel.GEvent, 4), free: make(chan []datamodel.GEvent, 6), done: make(chan struct{})}
	a.cur = make([]datamodel.GEvent, 0, asyncBatch)
	a.want, _ = s.(OpFilter)
	for op := range a.wantLow {
		a.wantLow[op] = a.want == nil || a.want.Wants(trace.Op(op))
	}
	go a.loop()
	return a
}

func (a *AsyncSink) loop() {
	defer close(a.done)
	defer func() {
		if r := recover(); r != nil {
			a.setErr(fmt.Errorf("output writer failed: %v", r))
			for range a.ch { // drain so Add never blocks
			}
		}
	}()
	pf, _ := a.s.(Prefetcher)
	for b := range a.ch {
		if a.getErr() == nil {
			if err := addBatch(a.s, pf, b); err != nil {
				a.setErr(err)
			}
		}
		select {
		case a.free <- b[:0]:
		default:
		}
	}
}

// pipedSink is a sink that adds a batch on more than one goroutine
// when piped says so (the root-cause stream at many ranks, p2p_pipe.go).
type pipedSink interface {
	piped() bool
	addBatchPiped(b []datamodel.GEvent) error
}

// Prefetcher is implemented by sinks whose state for an event is likely
// not in the cache (the point-to-point stream at thousands of ranks): an
// AsyncSink calls Prefetch for the event prefetchDistance ahead of the
// one it adds, so that the sink's loads for it are under way meanwhile.
// Prefetch must not change anything.
type Prefetcher interface {
	Prefetch(ev *datamodel.GEvent)
}

// prefetchDistance is how many events ahead of Add a Prefetcher is asked.
const prefetchDistance = 8

// DeepPrefetcher is a Prefetcher whose state for an event is a chain of
// objects, each found through the one before (the point-to-point
// stream: a rank's state, then its open request, then the request's
// message, then the message's matched peer). A single prefetch can only
// ask for the first: what it points to is not known until it has
// arrived. An AsyncSink therefore asks in stages, each further ahead
// than the next: PrefetchStage(ev, k) for the event deepStages[k]
// events ahead of the one it adds, by which time stage k-1's objects for
// that event are in the cache and their pointers can be read without a
// stall. Stage 0 replaces Prefetch. PrefetchStage must not change
// anything. PrefetchDeep says, once per batch, whether the stages are
// worth asking for (with a few ranks everything is in the cache and the
// calls would only cost).
type DeepPrefetcher interface {
	Prefetcher
	PrefetchDeep() bool
	PrefetchStage(ev *datamodel.GEvent, stage int)
}

// deepStages is how many events ahead of Add each stage of a
// DeepPrefetcher is asked (stage 0 first, furthest ahead). Measured on
// BenchmarkP2PStream_ManyRanks (docs/explanation/tracemerge.md).
var deepStages = [...]int{20, 16, 11, 6, 2}

// addBatch adds the events of b to s in order, prefetching ahead when pf
// (s as a Prefetcher) is not nil.
func addBatch(s datamodel.Sink, pf Prefetcher, b []datamodel.GEvent) error {
	if ps, ok := s.(pipedSink); ok && ps.piped() {
		return ps.addBatchPiped(b)
	}
	dp, deep := pf.(DeepPrefetcher)
	deep = deep && dp.PrefetchDeep()
	if pf == nil || dp != nil && !deep {
		for i := range b {
			if err := s.Add(&b[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if deep {
		for i := range b {
			// the event itself first: the batch was written on
			// another core
			if j := i + deepStages[0] + prefetchDistance; j < len(b) {
				prefetchEvent(uintptr(unsafe.Pointer(&b[j])))
			}
			for k, d := range deepStages {
				if j := i + d; j < len(b) {
					dp.PrefetchStage(&b[j], k)
				}
			}
			if err := s.Add(&b[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range b {
		if j := i + prefetchDistance; j < len(b) {
			pf.Prefetch(&b[j])
		}
		if err := s.Add(&b[i]); err != nil {
			return err
		}
	}
	return nil
}

// firstErr keeps the first error a consumer goroutine reports
// (AsyncSink, SharedAsync).
type firstErr struct {
	mu  sync.Mutex
	err error
}

func (f *firstErr) setErr(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

func (f *firstErr) getErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Add implements Sink: it copies ev (unless the sink is an OpFilter that
// does not want it) and returns the consumer's first error,
// if any has happened yet.
func (a *AsyncSink) Add(ev *datamodel.GEvent) error {
	if op := ev.Op; op < wantLowOps {
		if !a.wantLow[op] {
			return nil
		}
	} else if a.want != nil && !a.want.Wants(op) {
		return nil
	}
	a.cur = append(a.cur, *ev)
	if len(a.cur) == asyncBatch {
		if err := a.getErr(); err != nil {
			return err
		}
		a.ch <- a.cur
		select {
		case a.cur = <-a.free:
		default:
			a.cur = make([]datamodel.GEvent, 0, asyncBatch)
		}
	}
	return nil
}

// Close hands over the last batch, waits for the consumer and returns its
// first error. It does not close the wrapped sink.
func (a *AsyncSink) Close() error {
	a.close.Do(func() {
		if len(a.cur) > 0 {
			a.ch <- a.cur
			a.cur = nil
		}
		close(a.ch)
	})
	<-a.done
	return a.getErr()
}

// Wants implements OpFilter: whether the wrapped sink looks at events of
// op (every op when it is no OpFilter).
func (a *AsyncSink) Wants(op trace.Op) bool { return a.want == nil || a.want.Wants(op) }

// Unwrap returns the wrapped sink.
func (a *AsyncSink) Unwrap() datamodel.Sink { return a.s }

// asP2PStream returns the P2PStream s is or wraps (nil: none).
func asP2PStream(s datamodel.Sink) *P2PStream {
	for {
		switch x := s.(type) {
		case *P2PStream:
			return x
		case interface{ Unwrap() datamodel.Sink }:
			s = x.Unwrap()
		default:
			return nil
		}
	}
}

// asRootCause returns the RootCauseStream s is or wraps (nil: none).
func asRootCause(s datamodel.Sink) *RootCauseStream {
	for {
		switch x := s.(type) {
		case *RootCauseStream:
			return x
		case interface{ Unwrap() datamodel.Sink }:
			s = x.Unwrap()
		default:
			return nil
		}
	}
}

// SharedAsync runs several sinks, each in its own goroutine like an
// AsyncSink, from one copy of each event: the merge goroutine copies an
// event once into a batch that every member then reads, and the batch is
// reused when the last member is done with it (a reference count).
// Separate AsyncSinks copied each event once per sink: in a default run
// the Gantt chart and the root-cause stream both take every event, and
// the root-cause stream's copy was 45 instructions an event of the
// merge goroutine (docs/explanation/rootcause.md, "Cost").
//
// Members are window sinks (Pass.AddSink: the events whose Enter lies in
// the window) or stream sinks (Pass.AddStreamSink: every event); Attach
// registers one sink of each kind that is needed with the pass. A member
// receives every event of its kind: an OpFilter member is not asked (its
// Add ignores what it does not want), so sinks that want a few ops only
// (the point-to-point and one-sided streams) are better served by an
// AsyncSink of their own, which copies those only.
//
// A pass fed through a SharedAsync is not partitioned over processes:
// window members are per-event outputs, which need every event on
// process 0, and stream members are hidden from partPlanFor, which must
// see the root-cause and point-to-point streams themselves; so give a
// stream sink without window members an AsyncSink.
type SharedAsync struct {
	members []*sharedMember
	hasWin  bool
	hasStr  bool
	cur     *sharedBatch
	in      bool // the window sink has taken the event the stream sink takes next
	open    bool // the last event of cur is in the window (cur's last run is open)
	free    chan *sharedBatch
	firstErr
	started bool
	close   sync.Once
}

// sharedBatch is a batch of a SharedAsync: its events, the runs of them
// that lie in the window, and how many members have still to read it.
type sharedBatch struct {
	ev []datamodel.GEvent
	// win holds the window's events as runs: ev[win[0]:win[1]],
	// ev[win[2]:win[3]], ... (one run in a pass with a window, since
	// events arrive in Enter order).
	win  []int32
	refs atomic.Int32
}

// sharedMember is one sink of a SharedAsync and its goroutine's queue.
type sharedMember struct {
	s      datamodel.Sink
	window bool
	ch     chan *sharedBatch
	done   chan struct{}
}

// NewSharedAsync returns an empty SharedAsync: add its members, then
// Attach it to a pass, and Close it after the pass.
func NewSharedAsync() *SharedAsync { return &SharedAsync{} }

// AddWindow adds s as a window sink (what Pass.AddSink would take).
func (g *SharedAsync) AddWindow(s datamodel.Sink) { g.join(s, true) }

// AddStream adds s as a stream sink (what Pass.AddStreamSink would take).
func (g *SharedAsync) AddStream(s datamodel.Sink) { g.join(s, false) }

// Windows returns the number of window members.
func (g *SharedAsync) Windows() int {
	n := 0
	for _, m := range g.members {
		if m.window {
			n++
		}
	}
	return n
}

func (g *SharedAsync) join(s datamodel.Sink, window bool) {
	if g.started {
		panic("merge: SharedAsync member added after Attach")
	}
	g.members = append(g.members, &sharedMember{s: s, window: window})
	g.hasWin = g.hasWin || window
	g.hasStr = g.hasStr || !window
}

// Attach starts the members' goroutines and adds to p the sinks that
// feed them: a window sink when there are window members, a stream sink
// when there are stream members. The pass calls a window sink's Add
// before its stream sinks' for each event (analyzer.consume); with both,
// the window sink only notes that the event the stream sink takes next
// is in the window.
func (g *SharedAsync) Attach(p *Pass) {
	win, str := g.sinks()
	if win != nil {
		p.AddSink(win)
	}
	if str != nil {
		p.AddStreamSink(str)
	}
}

// sinks starts the members' goroutines and returns the window and the
// stream sink to feed them (nil: no member of that kind).
func (g *SharedAsync) sinks() (win, str datamodel.Sink) {
	g.start()
	switch {
	case g.hasWin && g.hasStr:
		return &sharedMark{g}, &sharedCopy{g: g, marked: true}
	case g.hasWin:
		return &sharedCopy{g: g, in: true}, nil
	case g.hasStr:
		return nil, &sharedCopy{g: g}
	}
	return nil, nil
}

func (g *SharedAsync) start() {
	if g.started {
		return
	}
	g.started = true
	depth := 4
	g.free = make(chan *sharedBatch, depth+2)
	g.cur = newSharedBatch()
	for _, m := range g.members {
		m.ch = make(chan *sharedBatch, depth)
		m.done = make(chan struct{})
		go g.loop(m)
	}
}

func newSharedBatch() *sharedBatch {
	return &sharedBatch{ev: make([]datamodel.GEvent, 0, asyncBatch)}
}

// sharedCopy is the sink of a SharedAsync that copies each event into
// the current batch: its window sink when it has window members only,
// its stream sink otherwise.
type sharedCopy struct {
	g      *SharedAsync
	in     bool // the events are in the window (no marks)
	marked bool // a sharedMark says which are
}

// Add implements Sink: it copies ev into the current batch and hands the
// batch to every member when it is full. The copy is in this function,
// not in one that each kind of sink calls: that call was 11
// instructions an event.
func (c *sharedCopy) Add(ev *datamodel.GEvent) error {
	g := c.g
	in := c.in
	if c.marked {
		in, g.in = g.in, false
	}
	b := g.cur
	if in != g.open {
		g.flip(b)
	}
	b.ev = append(b.ev, *ev)
	if len(b.ev) == asyncBatch {
		return g.full()
	}
	return nil
}

// sharedMark is the window sink of a SharedAsync with window and stream
// members: the pass calls it before the stream sinks for an event in the
// window (analyzer.consume), and it notes that the event the stream
// sink copies next is in the window.
type sharedMark struct{ g *SharedAsync }

// Add implements Sink.
func (m *sharedMark) Add(*datamodel.GEvent) error {
	m.g.in = true
	return nil
}

// flip opens or closes the window's run at the next event of b.
func (g *SharedAsync) flip(b *sharedBatch) {
	b.win = append(b.win, int32(len(b.ev)))
	g.open = !g.open
}

// full hands over the current batch, which is full, and takes another.
func (g *SharedAsync) full() error {
	if err := g.getErr(); err != nil {
		return err
	}
	g.handOff()
	select {
	case g.cur = <-g.free:
	default:
		g.cur = newSharedBatch()
	}
	return nil
}

// handOff closes cur's open window run and sends cur to every member.
func (g *SharedAsync) handOff() {
	b := g.cur
	if g.open {
		b.win = append(b.win, int32(len(b.ev)))
		g.open = false
	}
	b.refs.Store(int32(len(g.members)))
	for _, m := range g.members {
		m.ch <- b
	}
	g.cur = nil
}

// release notes that one member is done with b; the last one puts it
// back for reuse.
func (g *SharedAsync) release(b *sharedBatch) {
	if b.refs.Add(-1) == 0 {
		b.ev, b.win = b.ev[:0], b.win[:0]
		select {
		case g.free <- b:
		default:
		}
	}
}

func (g *SharedAsync) loop(m *sharedMember) {
	defer close(m.done)
	defer func() {
		if r := recover(); r != nil {
			g.setErr(fmt.Errorf("output writer failed: %v", r))
			for b := range m.ch { // drain so the merge never blocks
				g.release(b)
			}
		}
	}()
	pf, _ := m.s.(Prefetcher)
	for b := range m.ch {
		if g.getErr() == nil {
			if err := m.addShared(pf, b); err != nil {
				g.setErr(err)
			}
		}
		g.release(b)
	}
}

// addShared adds to m's sink the events of b it takes.
func (m *sharedMember) addShared(pf Prefetcher, b *sharedBatch) error {
	if !m.window {
		return addBatch(m.s, pf, b.ev)
	}
	for i := 0; i+1 < len(b.win); i += 2 {
		if err := addBatch(m.s, pf, b.ev[b.win[i]:b.win[i+1]]); err != nil {
			return err
		}
	}
	return nil
}

// Close hands over the last batch, waits for every member and returns
// the first error one reported. It does not close the members' sinks.
func (g *SharedAsync) Close() error {
	if !g.started {
		return nil
	}
	g.close.Do(func() {
		if len(g.cur.ev) > 0 {
			g.handOff()
		}
		for _, m := range g.members {
			close(m.ch)
		}
	})
	for _, m := range g.members {
		<-m.done
	}
	return g.getErr()
}

package merge

import (
	"fmt"
	"sync"
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
	mu      sync.Mutex
	err     error
	close   sync.Once
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

func (a *AsyncSink) setErr(err error) {
	a.mu.Lock()
	if a.err == nil {
		a.err = err
	}
	a.mu.Unlock()
}

func (a *AsyncSink) getErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
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

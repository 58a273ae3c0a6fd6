package main

/*
#include "gclock.h"
*/
import "C"

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Background encoding of full thread buffers.
//
// A full C buffer half is handed off without a copy: each thread buffer
// has two halves in a file-backed mapping (cshim/buffers.c, docs/explanation/recorder.md
// "Durability"), the thread goes on filling the other half, and one
// goroutine encodes and writes queued halves in order; once a half's
// events are in the rank file, its state word (in the mapping) says
// "written" and the thread may fill it again. A thread that fills its
// other half before Go wrote the first waits for the writer
// (gclockGoFlushWait). The queue holds at most flushQueueMax halves: when
// it is full the application thread does the work itself, first writing
// everything queued (so chunks stay in hand-off order), then its own half.
// finish() drains the queue before the final epoch and footer.
// GCLOCK_FLUSH_SYNC=1 writes every half synchronously.
//
// Chunk order: every pop from the queue happens under r.mu, the writer's
// lock, and is written before r.mu is released, so chunks reach the file in
// hand-off order whoever writes them.
//
// The encoding still costs CPU time. With Open MPI's default bind-to-core
// the goroutine runs on the rank's core and competes with the application
// there; what goes away is the single multi-millisecond stall inside one
// MPI call (see docs/explanation/recorder.md "Flush pauses").

const flushQueueMax = 2

// half is one handed-off buffer half: its events (C memory, not copied)
// and the state word to set once they are written.
type half struct {
	evs   []C.gclock_event
	state *C.uint32_t
}

type flushQueue struct {
	mu     sync.Mutex
	q      []half        // pending halves, oldest first
	wake   chan struct{} // worker wake-up (capacity 1)
	busy   int           // halves handed to the worker not yet written
	done   *sync.Cond    // signalled when busy drops
	sync   bool          // GCLOCK_FLUSH_SYNC: no background encoding
	once   sync.Once
	closed bool
}

var fq = newFlushQueue()

func newFlushQueue() *flushQueue {
	f := &flushQueue{wake: make(chan struct{}, 1)}
	f.done = sync.NewCond(&f.mu)
	// Synchronous unless GCLOCK_FLUSH_SYNC=0 (docs/explanation/recorder.md, "Flush
	// pauses": on cores the ranks fill, a writer goroutine costs more wall
	// time than the same work on the application thread).
	f.sync = strings.TrimSpace(os.Getenv("GCLOCK_FLUSH_SYNC")) != "0"
	return f
}

// written marks h's half as in the rank file: the C side may refill it.
func (h half) written() {
	if h.state != nil {
		atomic.StoreUint32((*uint32)(unsafe.Pointer(h.state)), C.GCK_LIVE_WRITTEN)
	}
}

// writeHalfLocked writes one half and marks it written. Caller holds r.mu.
func (r *recorder) writeHalfLocked(h half) {
	r.flushLocked(h.evs)
	h.written()
}

// handOff is gclockGoFlush's body: queue the half, or write it
// synchronously when the queue is full (or background encoding is off).
func (r *recorder) handOff(h half) {
	f := fq
	if f.sync || len(h.evs) == 0 {
		r.mu.Lock()
		r.writeHalfLocked(h)
		r.mu.Unlock()
		return
	}
	f.mu.Lock()
	if f.closed || len(f.q) >= flushQueueMax {
		f.mu.Unlock()
		// Full: write the queue in order, then our own half.
		r.mu.Lock()
		r.drainLocked()
		r.writeHalfLocked(h)
		r.mu.Unlock()
		return
	}
	f.q = append(f.q, h)
	f.busy++
	f.mu.Unlock()
	f.once.Do(func() { go r.flushWorker() })
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// waitWritten returns once the half whose state word is state has been
// written (the thread wants to refill it): it writes the queue itself
// rather than wait for the worker.
func (r *recorder) waitWritten(state *C.uint32_t) {
	r.mu.Lock()
	r.drainLocked()
	r.mu.Unlock()
	f := fq
	f.mu.Lock()
	for atomic.LoadUint32((*uint32)(unsafe.Pointer(state))) == C.GCK_LIVE_HANDED && f.busy > 0 {
		f.done.Wait() // the worker popped it and is writing it
	}
	f.mu.Unlock()
}

// flushWorker writes queued halves in the background.
func (r *recorder) flushWorker() {
	defer guard("background flush", nil)
	f := fq
	for range f.wake {
		func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.drainLocked()
		}()
	}
}

// drainLocked writes every queued half in order. Caller holds r.mu.
func (r *recorder) drainLocked() {
	f := fq
	for {
		f.mu.Lock()
		if len(f.q) == 0 {
			f.mu.Unlock()
			return
		}
		h := f.q[0]
		f.q[0] = half{}
		f.q = f.q[1:]
		f.mu.Unlock()

		r.writeHalfLocked(h)

		f.mu.Lock()
		f.busy--
		f.done.Broadcast()
		f.mu.Unlock()
	}
}

// drainFlushQueue writes everything queued (finalize, exit, abort) and
// stops queueing: later hand-offs are synchronous.
func (r *recorder) drainFlushQueue() {
	f := fq
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	r.mu.Lock()
	r.drainLocked()
	r.mu.Unlock()
	f.mu.Lock()
	for f.busy > 0 { // a half the worker popped is being written
		f.done.Wait()
	}
	f.mu.Unlock()
}

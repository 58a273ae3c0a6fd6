package main

/*
#include "gclock.h"
*/
import "C"

import (
	"os"
	"strings"
	"sync"
)

// Background encoding of full thread buffers.
//
// A full C buffer used to be converted, msgpack-encoded, zstd-compressed
// and written on the application thread inside the MPI call that filled it
// (≈4 ms per 32,768 events). Now the hand-off only copies the C buffer into
// a Go-owned buffer (a memcpy, ≈0.1-0.3 ms) and queues it; one goroutine
// encodes and writes queued buffers in order. The queue holds at most
// flushQueueMax buffers: when it is full the application thread does the
// work itself, first writing everything queued (so chunks stay in hand-off
// order), then its own buffer. finish() drains the queue before the final
// epoch and footer. GCLOCK_FLUSH_SYNC=1 restores the synchronous hand-off.
//
// Chunk order: every pop from the queue happens under r.mu, the writer's
// lock, and is written before r.mu is released, so chunks reach the file in
// hand-off order whoever writes them.
//
// The encoding still costs CPU time. With Open MPI's default bind-to-core
// the goroutine runs on the rank's core and competes with the application
// there; what goes away is the single multi-millisecond stall inside one
// MPI call (see docs/recorder.md "Flush pauses").

const flushQueueMax = 2

type flushQueue struct {
	mu     sync.Mutex
	q      [][]C.gclock_event // pending copies, oldest first
	free   [][]C.gclock_event // reusable copies
	wake   chan struct{}      // worker wake-up (capacity 1)
	busy   int                // buffers handed to the worker not yet written
	done   *sync.Cond         // signalled when busy drops
	sync   bool               // GCLOCK_FLUSH_SYNC: no background encoding
	once   sync.Once
	closed bool
}

var fq = newFlushQueue()

func newFlushQueue() *flushQueue {
	f := &flushQueue{wake: make(chan struct{}, 1)}
	f.done = sync.NewCond(&f.mu)
	v := strings.TrimSpace(os.Getenv("GCLOCK_FLUSH_SYNC"))
	f.sync = v != "" && v != "0"
	return f
}

// handOff is gclockGoFlush's body: copy evs and queue them, or write
// synchronously when the queue is full (or background encoding is off).
func (r *recorder) handOff(evs []C.gclock_event) {
	f := fq
	if f.sync || len(evs) == 0 {
		r.flush(evs)
		return
	}
	f.mu.Lock()
	if f.closed || len(f.q) >= flushQueueMax {
		f.mu.Unlock()
		// Full: write the queue in order, then our own buffer.
		r.mu.Lock()
		r.drainLocked()
		r.flushLocked(evs)
		r.mu.Unlock()
		return
	}
	var buf []C.gclock_event
	if n := len(f.free); n > 0 && cap(f.free[n-1]) >= len(evs) {
		buf = f.free[n-1][:len(evs)]
		f.free = f.free[:n-1]
	} else {
		buf = make([]C.gclock_event, len(evs))
	}
	copy(buf, evs)
	f.q = append(f.q, buf)
	f.busy++
	f.mu.Unlock()
	f.once.Do(func() { go r.flushWorker() })
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// flushWorker writes queued buffers in the background.
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

// drainLocked writes every queued buffer in order. Caller holds r.mu.
func (r *recorder) drainLocked() {
	f := fq
	for {
		f.mu.Lock()
		if len(f.q) == 0 {
			f.mu.Unlock()
			return
		}
		buf := f.q[0]
		f.q[0] = nil
		f.q = f.q[1:]
		f.mu.Unlock()

		r.flushLocked(buf)

		f.mu.Lock()
		if len(f.free) < flushQueueMax+1 {
			f.free = append(f.free, buf[:0])
		}
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
	for f.busy > 0 { // a buffer the worker popped is being written
		f.done.Wait()
	}
	f.mu.Unlock()
}

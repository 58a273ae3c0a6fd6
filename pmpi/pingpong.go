package main

/*
#include "pingpong.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/gclock/gclock/clocksync"
)

// pmpiTransport implements clocksync.PingPongTransport: SKaMPI-Offset's
// timed loop runs in C (cshim/pingpong.c) with no Go<->C transition between
// a timestamp and its message. clocksync takes the fast path only when the
// clock it measures flattens onto TimerClock(), i.e. onto the recorder's
// localClock (same base0), which start() stores in the transport.
// GCLOCK_PINGPONG=go turns the fast path off (the Go loop over Send/Recv),
// for comparisons.

var _ clocksync.PingPongTransport = (*pmpiTransport)(nil)

// TimerClock returns the local clock the C loop reads.
func (t *pmpiTransport) TimerClock() clocksync.Clock {
	if t.goLoop {
		return nil // never equal to a clock's base: clocksync uses its Go loop
	}
	return t.clk
}

// PingPongServe is the reference side of n ping-pongs with client.
func (t *pmpiTransport) PingPongServe(client, n int, m clocksync.LinearModel) error {
	rc := C.gclock_pp_serve(t.tc, C.int(client), C.int(n), C.int64_t(t.clk.base0), C.double(m.Slope), C.double(m.Intercept))
	return mpiErr("ping-pong (reference)", client, rc)
}

// PingPongClient is the client side of n ping-pongs with ref. Under a
// pair deadline (resync epochs: ppDeadline) the C loop may stop early;
// the ping-pongs it did not make are filled with copies of its last one,
// which leave SKaMPI-Offset's bounds, midpoint and window as the
// ping-pongs made give them (its comparisons are strict: a copy never
// replaces the original).
func (t *pmpiTransport) PingPongClient(ref, n int, m clocksync.LinearModel, sLast, tLast, sNow []float64) error {
	if n <= 0 {
		return nil
	}
	if len(sLast) < n || len(tLast) < n || len(sNow) < n {
		return fmt.Errorf("pmpi: ping-pong client: buffers shorter than %d", n)
	}
	deadline := t.dl.pair(t.tc, ref, int64(C.gclock_now_ext()))
	var done C.int
	rc := C.gclock_pp_client(t.tc, C.int(ref), C.int(n), C.int64_t(t.clk.base0), C.double(m.Slope), C.double(m.Intercept),
		(*C.double)(unsafe.Pointer(&sLast[0])), (*C.double)(unsafe.Pointer(&tLast[0])), (*C.double)(unsafe.Pointer(&sNow[0])),
		C.int64_t(deadline), &done)
	if err := mpiErr("ping-pong (client)", ref, rc); err != nil {
		return err
	}
	k := int(done)
	t.dl.count(k, n)
	if k < 1 {
		return fmt.Errorf("pmpi: ping-pong client with %d: no ping-pong done", ref)
	}
	for i := k; i < n; i++ {
		sLast[i], tLast[i], sNow[i] = sLast[k-1], tLast[k-1], sNow[k-1]
	}
	return nil
}

// ppDeadline bounds the time a client pair spends on its offset
// measurements in a resync epoch (issue 38): on an idle VM a pair's
// offsets take 0.1-1 ms, under load 3-5 ms (5 offsets of 16 ping-pongs,
// docs/explanation/clock-accuracy.md "Resync cost at 4 ranks"), but a
// pair that is not co-scheduled, at tens of ms a ping-pong, held single
// epochs for 0.17-5 s. From a pair's first ping-pong on, it has pairNS:
// past it the C loop stops at the first ping-pong no slower than twice
// the best before it (or 3 after the first late one), and the pair
// measures no further offsets (PairExpired, clocksync.HCA3Offset). A
// cut-short offset rests on fewer ping-pongs, so its SKaMPI interval, and
// with it the knot's sync-path bound, is as wide as they leave it; the
// epoch says so (params pingpongs_done, pingpongs_cut) and the recorder
// neither lengthens the interval on such a knot nor judges later knots
// against it (resync.go). Shared by a transport and its splits; used by
// the one thread that syncs. Off (pairNS 0) outside resync epochs: the
// full syncs at MPI_Init and MPI_Finalize run unchanged.
type ppDeadline struct {
	pairNS int64 // per pair (0: none)
	// the current pair: transport index and reference, first ping-pong
	tc    C.int
	ref   int
	start int64
	// this epoch's client ping-pongs: asked, done, loops cut short, and
	// pairs that stopped measuring offsets at the deadline
	asked, done, cut, stopped int
}

// begin arms the deadline for one epoch (pairNS > 0) and resets its
// counts; begin(0) disarms it.
func (d *ppDeadline) begin(pairNS int64) {
	*d = ppDeadline{pairNS: pairNS, ref: -1}
}

// pair returns the deadline (timer ns; 0: none) of the loop a client
// starts now with ref over transport tc: the first loop with another pair
// starts that pair's clock.
func (d *ppDeadline) pair(tc C.int, ref int, now int64) int64 {
	if d == nil || d.pairNS <= 0 {
		return 0
	}
	if d.ref != ref || d.tc != tc || d.start == 0 {
		d.tc, d.ref, d.start = tc, ref, now
	}
	return d.start + d.pairNS
}

// count books one loop: k of n ping-pongs done.
func (d *ppDeadline) count(k, n int) {
	if d == nil || d.pairNS <= 0 {
		return
	}
	d.asked += n
	d.done += k
	if k < n {
		d.cut++
	}
}

// PairExpired reports whether the current pair's time is over: a loose
// pair then measures no more offsets (clocksync.HCA3Offset.knot).
func (t *pmpiTransport) PairExpired() bool {
	d := t.dl
	if d == nil || d.pairNS <= 0 || d.start == 0 || int64(C.gclock_now_ext()) < d.start+d.pairNS {
		return false
	}
	d.stopped++
	return true
}

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

// PingPongClient is the client side of n ping-pongs with ref.
func (t *pmpiTransport) PingPongClient(ref, n int, m clocksync.LinearModel, sLast, tLast, sNow []float64) error {
	if n <= 0 {
		return nil
	}
	if len(sLast) < n || len(tLast) < n || len(sNow) < n {
		return fmt.Errorf("pmpi: ping-pong client: buffers shorter than %d", n)
	}
	rc := C.gclock_pp_client(t.tc, C.int(ref), C.int(n), C.int64_t(t.clk.base0), C.double(m.Slope), C.double(m.Intercept),
		(*C.double)(unsafe.Pointer(&sLast[0])), (*C.double)(unsafe.Pointer(&tLast[0])), (*C.double)(unsafe.Pointer(&sNow[0])))
	return mpiErr("ping-pong (client)", ref, rc)
}

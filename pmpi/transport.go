package main

/*
#include "gclock.h"
#include "pingpong.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/gclock/gclock/clocksync"
)

// pmpiTransport implements clocksync.Transport with PMPI calls on a private
// communicator (index tc into the shim's table; 0 is the private duplicate
// of MPI_COMM_WORLD). It never goes through the MPI_* wrappers, so the
// tool's own traffic is never recorded.
type pmpiTransport struct {
	tc         C.int
	rank, size int
	clk        localClock  // the sync's local clock, for the C ping-pong loop (pingpong.go)
	goLoop     bool        // GCLOCK_PINGPONG=go: no C ping-pong fast path
	dl         *ppDeadline // the resync epochs' pair deadline (pingpong.go), shared with the splits
}

var _ clocksync.Transport = (*pmpiTransport)(nil)

func newTransport(tc C.int) *pmpiTransport {
	return &pmpiTransport{tc: tc, rank: int(C.gclock_t_rank(tc)), size: int(C.gclock_t_size(tc)), dl: &ppDeadline{}}
}

func mpiErr(what string, peer int, rc C.int) error {
	if rc == 0 {
		return nil
	}
	return fmt.Errorf("pmpi: %s (peer %d): MPI error %d", what, peer, int(rc))
}

// Rank returns this process's rank in the transport's communicator.
func (t *pmpiTransport) Rank() int { return t.rank }

// Size returns the communicator size.
func (t *pmpiTransport) Size() int { return t.size }

func (t *pmpiTransport) send(dst int, v []float64, sync C.int) error {
	if len(v) == 0 {
		return nil
	}
	return mpiErr("MPI_Send", dst, C.gclock_t_send(t.tc, (*C.double)(unsafe.Pointer(&v[0])), C.int(len(v)), C.int(dst), sync))
}

// Send sends v to dst (PMPI_Send of len(v) doubles).
func (t *pmpiTransport) Send(dst int, v []float64) error { return t.send(dst, v, 0) }

// Ssend is the synchronous variant (PMPI_Ssend).
func (t *pmpiTransport) Ssend(dst int, v []float64) error { return t.send(dst, v, 1) }

// Recv receives exactly len(v) doubles from src.
func (t *pmpiTransport) Recv(src int, v []float64) error {
	if len(v) == 0 {
		return nil
	}
	return mpiErr("MPI_Recv", src, C.gclock_t_recv(t.tc, (*C.double)(unsafe.Pointer(&v[0])), C.int(len(v)), C.int(src)))
}

// Bcast broadcasts b from root: the length first, then the bytes. No
// clocksync algorithm times a broadcast, so the waiting ranks sleep between
// polls (gclock_t_bcast_idle) instead of taking a core from the ranks that
// time ping-pongs.
func (t *pmpiTransport) Bcast(root int, b []byte) ([]byte, error) {
	var n C.int64_t
	if t.rank == root {
		n = C.int64_t(len(b))
	}
	if err := mpiErr("MPI_Bcast(length)", root, C.gclock_t_bcast_idle(t.tc, unsafe.Pointer(&n), 8, C.int(root))); err != nil {
		return nil, err
	}
	if t.rank != root {
		b = make([]byte, int(n))
	}
	if n == 0 {
		return b, nil
	}
	err := mpiErr("MPI_Bcast", root, C.gclock_t_bcast_idle(t.tc, unsafe.Pointer(&b[0]), n, C.int(root)))
	return b, err
}

// Split partitions the communicator like MPI_Comm_split; color < 0 yields nil.
func (t *pmpiTransport) Split(color, key int) (clocksync.Transport, error) {
	var nt C.int
	if err := mpiErr("MPI_Comm_split", -1, C.gclock_t_split(t.tc, C.int(color), C.int(key), &nt)); err != nil {
		return nil, err
	}
	if nt < 0 {
		return nil, nil
	}
	nt2 := newTransport(nt)
	nt2.clk, nt2.goLoop, nt2.dl = t.clk, t.goLoop, t.dl
	return nt2, nil
}

// Barrier synchronises all members; the waiting ranks sleep between polls
// (gclock_t_barrier_idle), as in Bcast.
func (t *pmpiTransport) Barrier() error {
	return mpiErr("MPI_Barrier", -1, C.gclock_t_barrier_idle(t.tc))
}

// bcastInt64s broadcasts a few int64 values from root (helper over Bcast).
func bcastInt64s(t clocksync.Transport, root int, v []int64) ([]int64, error) {
	var b []byte
	if t.Rank() == root {
		b = make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		}
	}
	b, err := t.Bcast(root, b)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out, nil
}

// localClock is the sync's local clock: x = (timer_ns - base0_ns)*1e-9 so
// offsets stay small and float64 keeps sub-ns precision (docs/explanation/decisions.md D2).
type localClock struct{ base0 int64 }

// GetTime returns local seconds since rank 0's base0.
func (c localClock) GetTime() float64 { return float64(int64(C.gclock_now_ext())-c.base0) * 1e-9 }

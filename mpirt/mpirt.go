// Package mpirt calls MPI from a normal Go program without MPI headers or
// libraries at build time: the MPI library is dlopen()ed at run time
// (cshim/mpidl.c), so `go build ./cmd/tracemerge` works on any machine and
// the same binary runs under Open MPI's mpirun and MPICH's mpiexec
// (docs/explanation/decisions.md D17). Only what the parallel tracemerge needs is
// bound: init, rank and size, byte send and receive (waiting by polling) on
// MPI_COMM_WORLD, finalize and abort.
//
// Every MPI call runs on one locked OS thread (the one that called
// MPI_Init_thread with MPI_THREAD_FUNNELED), whatever goroutine asks.
package mpirt

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// LaunchedSize returns the number of processes the launcher started, read
// from its environment (Open MPI: OMPI_COMM_WORLD_SIZE; MPICH's Hydra and
// other PMI launchers: PMI_SIZE; PMIx launchers such as srun --mpi=pmix:
// PMIX_RANK set, size unknown before MPI_Init: -1). 0 means not started
// by an MPI launcher.
func LaunchedSize() int {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"} {
		if v := os.Getenv(k); v != "" {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	if os.Getenv("PMIX_RANK") != "" || os.Getenv("PMI_RANK") != "" {
		return -1
	}
	return 0
}

// World is MPI_COMM_WORLD after Init.
type World struct {
	Rank, Size int
	Impl       string // "openmpi" or "mpich"
	calls      chan func()
	done       bool
	sendMu     sync.Mutex
}

// ErrUnavailable is wrapped by Init when no MPI library can be loaded.
var ErrUnavailable = errors.New("MPI not available")

// Init loads the MPI library (lib, or when empty GCLOCK_LIBMPI, or the one
// the launcher's environment names (Open MPI's mpirun, or a PMIx launcher
// such as srun --mpi=pmix: libmpi.so.40), or the first of libmpich.so.12,
// libmpi.so.12, libmpi.so.40 found) and initialises MPI.
func Init(lib string) (*World, error) {
	w := &World{calls: make(chan func())}
	errc := make(chan error, 1)
	go w.loop(lib, errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	return w, nil
}

// do runs fn on the MPI thread and waits for it.
func (w *World) do(fn func()) {
	ch := make(chan struct{})
	w.calls <- func() { fn(); close(ch) }
	<-ch
}

// eagerMax is the largest message Send hands to a blocking MPI_Send: one
// every MPI sends eagerly (it completes without the receiver posting its
// receive). A blocking MPI_Send that waits for its receiver (rendezvous)
// holds the process's only MPI thread, so the process cannot post the
// receive that would let its own peer's send complete: two processes
// sending each other such a message at the same time wait forever. Open
// MPI's shared memory (vader) sends by rendezvous above 4096 bytes minus
// its largest header (≈ 4040 bytes of payload), and a 4080-byte message
// (30 events) crossing another hung the partitioned tracemerge
// (docs/benchmarks.md, 2026-11-28, sixth session). MPICH's and Open MPI's
// other transports send eagerly up to 12–64 KiB.
const eagerMax = 1024

// Send sends b to rank dest with tag. Small messages (at most eagerMax
// bytes) go by MPI_Send; larger ones by MPI_Isend and MPI_Test polled with
// growing sleeps (up to 100 µs), so a sender waiting for its receiver
// neither holds the MPI thread (other goroutines keep receiving) nor spins
// on a core. b must not change until Send returns.
func (w *World) Send(dest, tag int, b []byte) error {
	if len(b) > 1<<30 {
		return fmt.Errorf("mpirt: message of %d bytes too large", len(b))
	}
	var rc int
	if len(b) <= eagerMax {
		w.do(func() { rc = send(b, dest, tag) })
	} else {
		w.sendMu.Lock() // one nonblocking send at a time
		defer w.sendMu.Unlock()
		w.do(func() { rc = isend(b, dest, tag) })
		for nap := time.Microsecond; rc == 0; nap = min(2*nap, 100*time.Microsecond) {
			var ok bool
			w.do(func() { ok, rc = test() })
			if ok {
				break
			}
			time.Sleep(nap)
		}
	}
	if rc != 0 {
		return fmt.Errorf("mpirt: MPI_Send to %d: error %d", dest, rc)
	}
	return nil
}

// Recv receives into b from rank src with tag (MPI_Recv of at most
// len(b) bytes). It waits for the message by polling MPI_Iprobe with
// growing sleeps (up to 100 µs) rather than in MPI_Recv, which spins on
// a core that the analysis on a small machine needs.
func (w *World) Recv(src, tag int, b []byte) error {
	if len(b) > 1<<30 {
		return fmt.Errorf("mpirt: message of %d bytes too large", len(b))
	}
	var rc int
	for nap := time.Microsecond; ; nap = min(2*nap, 100*time.Microsecond) {
		var ok bool
		w.do(func() { ok, rc = iprobe(src, tag) })
		if rc != 0 || ok {
			break
		}
		time.Sleep(nap) // the MPI thread is free for other callers meanwhile
	}
	if rc == 0 {
		w.do(func() { rc = recv(b, src, tag) })
	}
	if rc != 0 {
		return fmt.Errorf("mpirt: MPI_Recv from %d: error %d", src, rc)
	}
	return nil
}

// Finalize calls MPI_Finalize (once) and stops the MPI thread.
func (w *World) Finalize() error {
	if w.done {
		return nil
	}
	w.done = true
	var rc int
	w.do(func() { rc = finalize() })
	close(w.calls)
	if rc != 0 {
		return fmt.Errorf("mpirt: MPI_Finalize: error %d", rc)
	}
	return nil
}

// abortGrace is how long Abort waits before MPI_Abort, so that the
// launcher has forwarded what this process wrote to stderr (the reason for
// the abort): MPICH's hydra ends the job at once and can drop lines it has
// not yet read (once in a CI run on 2 cores, 2026-11-27: the job's exit
// code, but neither of the failing worker's two lines).
const abortGrace = 200 * time.Millisecond

// Abort calls MPI_Abort(MPI_COMM_WORLD, code): every process of the job
// ends, after abortGrace.
func (w *World) Abort(code int) {
	time.Sleep(abortGrace)
	w.do(func() { abort(code) })
}

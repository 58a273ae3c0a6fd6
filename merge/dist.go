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
// The wire protocol is in dist_wire.go, process 0's side in dist_root.go,
// a worker's in dist_serve.go.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gclock/gclock/merge/rundir"
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
	// Share0Fixed: Share0 was chosen by the user (GCLOCK_PAR_SHARE0), and
	// a partitioned pass keeps it (else a pass of 2 processes whose
	// stream sinks take every event gives process 0 none: partPlanFor).
	Share0Fixed bool
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
// a worker's (Dist.Share0), chosen by measurement (docs/explanation/tracemerge.md
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
	p := &Pass{a: &analyzer{rn: &rundir.Run{}, failed: why}}
	return p.Serve(d)
}

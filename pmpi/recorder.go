package main

/*
#include <stdlib.h>
#include <unistd.h>
#include "gclock.h"
#include "pingpong.h"
*/
import "C"

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/trace"
)

// recorder is the per-process state behind the exported functions.
type recorder struct {
	mu      sync.Mutex
	cfg     config
	rank    int
	size    int
	tr      *pmpiTransport
	clock   localClock
	live    string // <rank file>.live: the thread buffers (durability); "" none
	synced  bool   // epoch 0 ran on every rank: epoch 1 is owed at finalize
	dir     string
	path    string
	w       *trace.Writer
	failed  bool // a write failed: recording stopped, warned once
	comms   map[uint32]trace.Comm
	unknown map[string]uint32 // member-set occurrences of unknown comms
	// written: member list (membersKey) -> Local of the first communicator
	// written to this file with it, which later ones name (trace.Comm.Same)
	written map[string]uint32
	// writtenBytes: the keys' size; past maxWrittenBytes the map starts
	// over (a program that splits into new member sets every step would
	// grow it without bound; a list is then written once more in full)
	writtenBytes int
	sync         func(clocksync.Transport, clocksync.Clock) (*syncOutcome, error)
	scfg         clocksync.Config // for the delayed self-check (GCLOCK_CHECK_AFTER)
	global       clocksync.Clock  // the latest epoch's global clock
	token        bool             // timed ping-pong loops serialised machine-wide
	meetPoll     bool             // a resync meeting's decision broadcasts poll first (gclock_meeting_poll)
	// Resync epochs (resync.go): planning state, the next epoch index,
	// epoch 0 (for arming), and whether meetings are armed.
	rs          resyncState
	nextEpoch   int
	ep0         trace.Epoch
	resyncArmed bool
}

var rec = &recorder{
	comms:   map[uint32]trace.Comm{},
	unknown: map[string]uint32{},
	written: map[string]uint32{},
}

// membersKey is a member list as a map key.
// maxWrittenBytes bounds the member lists recorder.written keeps.
var maxWrittenBytes = 16 << 20

func membersKey(members []int32) string {
	b := make([]byte, 0, 4*len(members))
	for _, m := range members {
		b = binary.LittleEndian.AppendUint32(b, uint32(m))
	}
	return string(b)
}

// warnf prints one warning line on stderr, prefixed with the rank.
func (r *recorder) warnf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gclock: rank %d: %s\n", r.rank, fmt.Sprintf(format, args...))
}

// applyOpsFilter applies GCLOCK_OPS (trace.ParseOpsFilter) before
// recording starts. A value it cannot read changes nothing: every
// operation is recorded and rank 0 says why, once.
func (r *recorder) applyOpsFilter() {
	off, err := trace.ParseOpsFilter(os.Getenv("GCLOCK_OPS"))
	if err != nil {
		if r.rank == 0 {
			r.warnf("%v; recording every operation", err)
		}
		return
	}
	for _, o := range off {
		C.gclock_set_op_off(C.int(o), 1)
	}
}

// stopRecording turns recording off after a failure (C stops recording,
// the application continues untouched).
func (r *recorder) stopRecording(err error) {
	if !r.resyncArmed {
		// With resync meetings armed the C side keeps running (and this
		// rank keeps meeting the others), only nothing is written.
		C.gclock_deactivate()
	}
	if !r.failed {
		r.failed = true
		r.warnf("%v; recording stopped for this rank (the application continues)", err)
	}
	if r.w != nil {
		// The footer says recording stopped early and why (tracemerge
		// reports it). After an I/O error it is not written: the file ends
		// in a truncated frame, which the reader reports.
		f := trace.Footer{Reason: "error", Stopped: err.Error(), Dropped: uint64(C.gclock_dropped()), EndNS: int64(C.gclock_now_ext())}
		if r.w.Close(f) == nil && r.live != "" {
			os.Remove(r.live) // the events it holds are past the stop
		}
		r.w = nil
	}
}

func guard(what string, fail func()) {
	if p := recover(); p != nil {
		fmt.Fprintf(os.Stderr, "gclock: internal error in %s: %v; recording stopped\n%s", what, p, debug.Stack())
		C.gclock_deactivate()
		if fail != nil {
			fail()
		}
	}
}

// gclockGoReady does nothing. The MPI_Init wrappers call it before
// PMPI_Init because a call from C into Go first waits until the Go runtime
// has finished starting (it starts in a thread of its own when the library
// is loaded): so the crash-signal handlers the wrapper saves are Go's, not
// the defaults Go has yet to replace, and the MPI library's initialisation
// never runs alongside the Go runtime's (docs/explanation/recorder.md, "Crash
// signals").
//
//export gclockGoReady
func gclockGoReady() {}

// gclockGoStart is called once by the MPI_Init wrappers after PMPI_Init:
// configuration, node id, timer, job id, sync epoch 0 and the trace file.
// It returns 1 when this rank records, 0 when it stays inert.
//
//export gclockGoStart
func gclockGoStart() (ok C.int) {
	defer guard("MPI_Init", func() { ok = 0 })
	recording := rec.start()
	if rec.synced { // every rank that ran epoch 0 agrees on resync meetings
		rec.armResync(recording, rec.ep0)
	}
	if recording {
		return 1
	}
	return 0
}

// start runs inside the MPI_Init wrapper after PMPI_Init. Every step that
// communicates runs on every rank, whatever happens to this rank's file.
func (r *recorder) start() bool {
	r.rank = int(C.gclock_world_rank())
	r.size = int(C.gclock_world_size())
	if os.Getenv("GCLOCK_TEST_FAULT") == "go" {
		// Test hook: a nil dereference in Go after MPI_Init must still
		// become a recovered panic (the crash-signal dispatcher in
		// cshim/lifecycle.c routes faults in this library to Go's handler).
		var p *int
		r.size += *p
	}
	if os.Getenv("GCLOCK_TEST_FAULT") == "exit" {
		// Test hook: the MPI library ending the process with exit() inside
		// a PMPI call the recorder makes (an error on its private
		// communicator is fatal): the exit handlers, which call into Go
		// again on this thread, must not wait for the recorder. (No lock
		// of the recorder is held across its MPI calls.)
		C.exit(3)
	}
	cfg, err := loadConfig(os.Getenv, os.Environ())
	if err != nil {
		// Every rank sees the same environment: all stay inert alike.
		r.warnf("%v; recording off", err)
		return false
	}
	r.cfg = cfg
	C.gclock_set_buffer_events(C.int(cfg.Buffer))
	r.tr = newTransport(0)

	// Node id: emulated (GCLOCK_NODE_SIZE) or the shared-memory leaders' order.
	// machineRanks counts the ranks on this physical machine (same boot
	// id), which can exceed the node: containers or network namespaces on
	// one machine are separate nodes to MPI but share its CPUs.
	var id, sz, mr C.int
	if rc := C.gclock_node_shared(&id, &sz, C.uint64_t(machineKey()), &mr); rc != 0 {
		r.warnf("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed (MPI error %d); assuming one node", int(rc))
	}
	nodeID, nodeSize := int(id), int(sz)
	machineRanks := int(mr)
	if cfg.NodeSize > 0 {
		nodeID = r.rank / cfg.NodeSize
		nodeSize = min(cfg.NodeSize, r.size-nodeID*cfg.NodeSize)
	}
	r.pingPongToken(machineRanks)

	// Timer, then the injected error on top of it.
	// auto (the default): the TSC where it is invariant and the kernel
	// itself keeps time with it, else CLOCK_MONOTONIC, without a warning.
	var hz C.double
	mkey := C.uint64_t(machineKey())
	if cfg.Timer == "auto" {
		cfg.Timer = "monotonic"
		if C.gclock_timer_setup(C.int(timerKinds["tsc"]), 1, mkey, &hz) == 0 {
			cfg.Timer = "tsc"
		} else {
			C.gclock_timer_setup(C.int(timerKinds["monotonic"]), 0, mkey, &hz)
		}
	} else if C.gclock_timer_setup(C.int(timerKinds[cfg.Timer]), 0, mkey, &hz) != 0 {
		r.warnf("GCLOCK_TIMER=%s is not usable on this machine; using monotonic", cfg.Timer)
		cfg.Timer = "monotonic"
		C.gclock_timer_setup(C.int(timerKinds["monotonic"]), 0, mkey, &hz)
	}
	scfg, builtin, intraAuto, err := syncConfig(nodeID, cfg.Timer)
	if err != nil {
		r.warnf("%v; recording off", err)
		return false
	}
	retryS, err := syncRetryThreshold(os.Getenv)
	if err != nil {
		r.warnf("%v; recording off", err)
		return false
	}
	r.scfg = scfg
	r.sync = clocksyncRun(scfg, intraAuto, retryS)
	if builtin {
		r.sync = fallbackSync
	}

	// base0 and the job id come from rank 0, in one broadcast; base0 is
	// rank 0's timer before any injected error, the anchor of the
	// injection's non-linear terms on every rank.
	var jobBytes []byte
	var base0 int64
	if r.rank == 0 {
		base0 = int64(C.gclock_now_ext())
		job := jobIDFromEnv(os.Getenv)
		if job == "" {
			job = time.Now().UTC().Format("20060102-150405") + "-" + strconv.Itoa(os.Getpid())
		}
		if n, procid, ok := srunSingleton(os.Getenv, r.size); ok {
			// Every task is a rank 0: keep their files apart.
			job += ".task" + sanitize(procid)
			r.warnf("srun started %d tasks but MPI_COMM_WORLD has 1 process: the MPI library did not reach Slurm's process manager and each task runs alone (Debian's Open MPI: srun --mpi=pmix; MPICH: srun --mpi=pmi2); this task records as run %s", n, job)
		}
		jobBytes = append(strconv.AppendInt(nil, base0, 10), ' ')
		jobBytes = append(jobBytes, job...)
	}
	jobBytes, err = r.tr.Bcast(0, jobBytes)
	if err != nil {
		r.warnf("broadcast of the job id failed: %v; recording off", err)
		return false
	}
	b0, job, _ := cutSpace(string(jobBytes))
	base0, _ = strconv.ParseInt(b0, 10, 64)
	var inject *trace.Injection
	if len(cfg.Pairs) > 0 {
		inject = injectClock(cfg, nodeID, base0)
	}
	r.clock = localClock{base0: base0}
	r.tr.clk = r.clock
	r.tr.goLoop = strings.EqualFold(strings.TrimSpace(os.Getenv("GCLOCK_PINGPONG")), "go")

	// The directory: a failure is reported now, but this rank still takes
	// part in the clock sync (it is collective).
	r.dir = cfg.Dir
	if r.dir == "" {
		r.dir = filepath.Join("gclock-trace", job)
	}
	if _, procid, ok := srunSingleton(os.Getenv, r.size); ok && cfg.Dir != "" {
		r.dir = filepath.Join(r.dir, "task"+sanitize(procid)) // as the default name above
	}
	if cfg.Dir != "" && C.gclock_spawned() != 0 {
		// A job started by MPI_Comm_spawn: its rank-00000.gct ... would
		// replace the spawning job's in the same GCLOCK_DIR (with the
		// default directory the job ids keep them apart already).
		r.dir = filepath.Join(r.dir, "spawned-"+job)
	}
	// Absolute: the program may change its working directory later, and the
	// sidecar is removed by name at the end.
	if abs, err := filepath.Abs(r.dir); err == nil {
		r.dir = abs
	}
	r.path = filepath.Join(r.dir, trace.RankFileName(r.rank))
	dirErr := os.MkdirAll(r.dir, 0o755)
	if dirErr != nil {
		r.failed = true
		r.warnf("cannot create trace directory %s (set GCLOCK_DIR to a writable path): %v; not recording (the application continues)", r.dir, dirErr)
	}

	ep, err := r.epoch(0)
	if err != nil {
		r.warnf("clock sync at MPI_Init failed: %v; recording off", err)
		return false
	}
	r.synced = true
	r.ep0, r.nextEpoch = ep, 1
	if r.rs.interval, err = resyncInterval(os.Getenv); err != nil {
		r.warnf("%v; no resync epochs", err)
		r.rs.interval = 0
	}
	if r.rs.adapt, err = resyncAdaptOn(os.Getenv); err != nil {
		r.warnf("%v; adapting the resync interval", err)
	}
	if r.rs.budget, err = resyncBudget(os.Getenv); err != nil {
		r.warnf("%v; using the default", err)
	}
	if r.rs.pingpongs, err = resyncPingPongs(os.Getenv); err != nil {
		r.warnf("%v; using the default", err)
	}
	if r.rs.deadlineNS, err = resyncDeadline(os.Getenv); err != nil {
		r.warnf("%v; no deadline", err)
	}
	r.applyOpsFilter()
	if cfg.CheckAfter > 0 {
		r.checkAfter(&ep, cfg.CheckAfter)
	}
	if dirErr != nil {
		return false
	}

	h := trace.Header{
		Version:   trace.FormatVersion,
		JobID:     job,
		Rank:      r.rank,
		WorldSize: r.size,
		PID:       os.Getpid(),
		Args:      cmdline(),
		MPILib:    mpiLibrary(),
		Timer:     trace.Timer{Name: cfg.Timer, TSCHz: float64(hz), CostNS: float64(C.gclock_timer_cost_ns())},
		NodeID:    nodeID,
		NodeSize:  nodeSize,
		Inject:    inject,
		Objects:   objects(),
		Config:    cfg.Echo,
	}
	h.Host, _ = os.Hostname()
	h.Exe, _ = os.Executable()
	h.StartNS = int64(C.gclock_now_ext())
	w, err := trace.Create(r.path, h, trace.WithCodec(cfg.Codec), trace.WithSyncOnClose(cfg.Fsync))
	if err != nil {
		r.failed = true
		r.warnf("cannot write trace file: %v; not recording (the application continues)", err)
		return false
	}
	r.w = w
	// The thread buffers live in <rank file>.live (cshim/buffers.c) so that a
	// killed process leaves its unwritten events for tracemerge.
	r.live = r.path + trace.LiveSuffix
	cp := C.CString(r.live)
	if rc, err := C.gclock_live_open(cp); rc != 0 {
		r.warnf("cannot create %s (%v): events not yet written when the process dies are lost", r.live, err)
		r.live = ""
	}
	C.free(unsafe.Pointer(cp))
	if err := w.WriteEpoch(ep); err != nil {
		r.stopRecording(fmt.Errorf("writing sync epoch 0 to %s: %w", r.path, err))
		return false
	}
	r.prepareFlush(cfg.Buffer)
	if why := r.armCWriter(cfg, cfg.Buffer); why != "" && r.rank == 0 {
		r.warnf("%s: event chunks are written by the recorder's Go half, with %s (docs/explanation/recorder.md, \"Flush pauses\")", why, cfg.Codec)
	}
	return true
}

// prepareFlush sizes the C encoder's workspace and the writer's buffers
// for a buffer half of n events and touches them, and encodes a few
// stand-in records, writing nothing: so these allocations and page faults
// happen here in MPI_Init rather than inside the application's first full
// buffer (docs/explanation/recorder.md, "Flush pauses": that first flush took about
// three times as long as the later ones).
func (r *recorder) prepareFlush(n int) {
	n = min(n, trace.MaxChunkEvents)
	recs, free := standInRecords(min(n, prepareEvents))
	defer free()
	if len(recs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if encodePrepare(n) != nil {
		return // the first real flush reports it
	}
	if cols, err := cColumns(recs); err == nil {
		_ = r.w.Prepare(&cols, n) // a real flush reports any error
	}
}

// prepareEvents: stand-in records prepareFlush encodes (its code paths and
// small buffers); the workspace and the writer's buffers are sized for a
// whole half without encoding one, which would cost ≈ 100 instructions per
// event of it in every rank's MPI_Init.
const prepareEvents = 256

// machineKey names the physical machine this rank runs on: a hash of the
// kernel's boot id, which every container and network or UTS namespace of
// one running kernel shares (so do its CPUs and the token's /dev/shm file,
// unless a mount namespace hides it). 0 when unreadable: the caller then
// counts the ranks of its MPI node instead.
func machineKey() uint64 {
	b, err := trace.ReadSmallFile("/proc/sys/kernel/random/boot_id")
	id := strings.TrimSpace(string(b))
	if err != nil || id == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	if k := h.Sum64(); k != 0 {
		return k
	}
	return 1
}

// pingPongToken turns on the machine-wide token that lets one timed
// ping-pong loop run at a time (cshim/pingpong.c) when this machine runs
// more ranks than it has CPUs online (machineRanks: all ranks with this
// rank's boot id, whatever MPI node they are on); GCLOCK_PINGPONG_TOKEN=1/0
// forces it. Otherwise (every rank has a CPU) a resync meeting's decision
// broadcasts may poll before they sleep (gclock_meeting_poll, D59): with
// more ranks than CPUs a polling rank took a core from the sync epoch the
// meeting started.
func (r *recorder) pingPongToken(machineRanks int) {
	ncpu := int(C.sysconf(C._SC_NPROCESSORS_ONLN))
	on := ncpu > 0 && machineRanks > ncpu
	r.meetPoll = ncpu > 0 && machineRanks > 0 && machineRanks <= ncpu
	poll := C.int(0)
	if r.meetPoll {
		poll = 1
	}
	C.gclock_meeting_poll(poll)
	switch strings.TrimSpace(os.Getenv("GCLOCK_PINGPONG_TOKEN")) {
	case "1":
		on = true
	case "0":
		on = false
	}
	if on && C.gclock_pp_token(1) != 0 {
		r.warnf("cannot open the ping-pong lock file in /dev/shm; timing loops are not serialised")
		on = false
	}
	r.token = on
}

func cutSpace(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// epoch runs one clock synchronisation on every rank and returns this
// rank's trace.Epoch; rank 0 prints one summary line.
func (r *recorder) epoch(index int) (trace.Epoch, error) {
	t0 := int64(C.gclock_now_ext())
	out, err := r.sync(r.tr, r.clock)
	if err == nil {
		// Leave together: a rank done with its part of the sync and the
		// self-check would otherwise return to the application, whose MPI
		// calls busy-poll, and take a core from the pairs still timing
		// ping-pongs (with more ranks than cores that biased the check by
		// µs). The waiting ranks sleep (pmpiTransport.Barrier).
		if berr := r.tr.Barrier(); berr != nil {
			err = fmt.Errorf("barrier after the sync: %w", berr)
		}
	}
	t1 := int64(C.gclock_now_ext())
	if err != nil {
		return trace.Epoch{}, err
	}
	r.global = out.Global
	if out.Anchor != nil && r.rs.alg == nil {
		r.rs.alg = out.Anchor // its communicators serve the resyncs
	}
	if out.Params != nil {
		out.Params["pingpong_loop"] = pingpongLoop(r.tr.goLoop)
		out.Params["pingpong_token"] = strconv.FormatBool(r.token)
		out.Params["meeting_poll"] = strconv.FormatBool(r.meetPoll)
		setKnotNS(out.Params, clocksync.LinearModel{Slope: out.SlopeS, Intercept: out.Intercept}, r.clock.base0)
	}
	ep := trace.Epoch{
		Index:     index,
		Algorithm: out.Algorithm,
		Params:    out.Params,
		StartNS:   t0,
		EndNS:     t1,
		Model:     trace.Model{T0: r.clock.base0, Slope: out.SlopeS, Intercept: out.Intercept * 1e9},
		FitPoints: out.FitPoints,
		PingPongs: out.PingPongs,
	}
	for _, m := range out.Chain {
		ep.Chain = append(ep.Chain, trace.Model{T0: r.clock.base0, Slope: m[0], Intercept: m[1] * 1e9})
	}
	maxRes := 0.0
	for _, c := range out.Check {
		ep.Check = append(ep.Check, trace.CheckResult{Rank: c.Rank, AfterNS: 0, OffsetNS: c.Offset * 1e9})
		maxRes = math.Max(maxRes, math.Abs(c.Offset))
	}
	if r.rank == 0 && !r.cfg.Quiet {
		fmt.Fprintf(os.Stderr, "gclock: sync epoch %d: %s on %d ranks, %.1f ms, max |residual| %.2f us\n",
			index, out.Algorithm, r.size, float64(out.Duration)/1e6, maxRes*1e6)
	}
	return ep, nil
}

// checkAfter is GCLOCK_CHECK_AFTER (a study setting): Algorithm 6's
// "sync, wait, check" with the wait inside MPI_Init. Every rank waits until
// after seconds past epoch 0's end on its own clock, then the self-check
// (clocksync.CheckClockAccuracy) runs again on epoch 0's global clock; rank
// 0 appends the residuals to ep.Check with AfterNS set and prints a line.
// It delays MPI_Init by about that long.
func (r *recorder) checkAfter(ep *trace.Epoch, after float64) {
	until := ep.EndNS + int64(after*1e9)
	for {
		d := until - int64(C.gclock_now_ext())
		if d <= 0 {
			break
		}
		time.Sleep(time.Duration(d))
	}
	at := int64(C.gclock_now_ext()) - ep.EndNS
	rs, err := clocksync.CheckClockAccuracy(r.tr, r.global, r.scfg)
	if err != nil {
		r.warnf("self-check %.1f s after sync epoch 0 failed: %v", after, err)
		return
	}
	maxRes := 0.0
	for _, c := range rs {
		ep.Check = append(ep.Check, trace.CheckResult{Rank: c.Rank, AfterNS: at, OffsetNS: c.Offset * 1e9})
		maxRes = math.Max(maxRes, math.Abs(c.Offset))
	}
	if r.rank == 0 && !r.cfg.Quiet {
		fmt.Fprintf(os.Stderr, "gclock: self-check %.1f s after sync epoch 0: max |residual| %.2f us over %d ranks\n",
			float64(at)/1e9, maxRes*1e6, len(rs))
	}
}

func mpiLibrary() string {
	var buf [512]C.char
	C.gclock_mpi_library_version(&buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}

func objects() []trace.Object {
	const max = 1024
	p := (*C.gclock_object)(C.calloc(max, C.size_t(unsafe.Sizeof(C.gclock_object{}))))
	if p == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(p))
	n := int(C.gclock_objects(p, max))
	objs := unsafe.Slice(p, max)[:n]
	out := make([]trace.Object, 0, n)
	for i := range objs {
		o := &objs[i]
		obj := trace.Object{
			Path: C.GoString(&o.path[0]),
			Base: uint64(o.base),
			Lo:   uint64(o.lo),
			Hi:   uint64(o.hi),
		}
		if o.build_id_len > 0 {
			obj.BuildID = hex.EncodeToString(C.GoBytes(unsafe.Pointer(&o.build_id[0]), o.build_id_len))
		}
		out = append(out, obj)
	}
	return out
}

// gclockGoFlush receives one full (or final) C thread buffer half of n
// events and hands it off (flush.go): queued for the background encoder,
// or appended to the trace as one chunk right away; *state becomes
// GCK_LIVE_WRITTEN once the rank file holds it, and only then does the C
// side refill that half.
//
//export gclockGoFlush
func gclockGoFlush(ev *C.gclock_event, n C.int64_t, state *C.uint32_t) {
	defer guard("flush", nil)
	rec.handOff(half{evs: unsafe.Slice(ev, int(n)), state: state})
}

// gclockGoFlushWait returns once the buffer half with the given state word
// has been written to the rank file (flush.go).
//
//export gclockGoFlushWait
func gclockGoFlushWait(state *C.uint32_t) {
	defer guard("flush", nil)
	rec.waitWritten(state)
}

// flush converts one C buffer to trace events and appends one chunk.
func (r *recorder) flush(evs []C.gclock_event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked(evs)
}

// flushLocked is flush with r.mu held.
func (r *recorder) flushLocked(evs []C.gclock_event) {
	if r.w == nil || len(evs) == 0 {
		return
	}
	var err error
	for len(evs) > 0 && err == nil {
		n := min(len(evs), trace.MaxChunkEvents)
		var cols trace.Columns
		// The column encoder's workspace is the C writer's too: it
		// takes it only while armed (cshim/cwrite.c); the next frame
		// arms it again.
		C.gclock_cw_disarm()
		if cols, err = cColumns(evs[:n]); err == nil {
			err = r.w.WriteColumns(&cols)
		}
		evs = evs[n:]
	}
	if err != nil {
		r.stopRecording(fmt.Errorf("writing events to %s: %w", r.path, err))
	}
}

// gclockGoComm is called by the comm-creating wrappers (and on first use
// of a communicator created by an unwrapped function) with the new
// communicator's description; it returns the id all members agree on
// (fixedID if non-zero) and writes the Comm frame.
//
//export gclockGoComm
func gclockGoComm(fixedID C.uint64_t, parent C.uint64_t, counter C.uint32_t, local C.uint32_t,
	kind *C.char, members *C.int32_t, n C.int32_t, created C.int64_t) (id C.uint64_t) {
	defer guard("communicator tracking", nil)
	var m []int32
	if n > 0 {
		for _, v := range unsafe.Slice(members, int(n)) {
			m = append(m, int32(v))
		}
	}
	return C.uint64_t(rec.comm(uint64(fixedID), uint64(parent), uint32(counter), uint32(local), C.GoString(kind), m, int64(created)))
}

// comm derives a communicator's agreed id and writes its definition.
func (r *recorder) comm(fixed, parent uint64, counter, local uint32, kind string, members []int32, created int64) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	lowest := int32(math.MaxInt32)
	for _, m := range members {
		lowest = min(lowest, m)
	}
	id := fixed
	switch {
	case id != 0:
	case kind == "unknown" || kind == "create_group" || kind == "merge" || kind == "from_group":
		// Created by a function we do not wrap, or by one whose callers
		// share no parent counter (MPI_Comm_create_group, MPI_Intercomm_
		// merge, MPI_Comm_create_from_group): the member set plus how often this rank has seen that
		// set (per kind) stands in for the parent.
		key := kind + "\x00" + membersKey(members)
		c := r.unknown[key]
		r.unknown[key] = c + 1
		h := uint64(14695981039346656037)
		for _, m := range members {
			h = (h ^ uint64(uint32(m))) * 1099511628211
		}
		id = trace.CommID(h, c, lowest)
	default:
		id = trace.CommID(parent, counter, lowest)
	}
	c := trace.Comm{ID: id, Local: local, Parent: parent, Kind: kind, Members: members, CreatedNS: created}
	r.comms[local] = c
	r.writeComm(c)
	return id
}

// writeComm writes c's COMM frame; its member list only the first time
// this file holds it (a communicator duplicated or freed in a loop names an
// earlier one's: at 1,024 ranks 5 KB less per frame).
func (r *recorder) writeComm(c trace.Comm) {
	if r.w == nil {
		return
	}
	key := ""
	if len(c.Members) > 1 {
		key = membersKey(c.Members)
		if l, ok := r.written[key]; ok {
			c.Same, c.Members = l+1, nil
		}
	}
	if err := r.w.WriteComm(c); err != nil {
		r.stopRecording(fmt.Errorf("writing communicator to %s: %w", r.path, err))
		return
	}
	if _, ok := r.written[key]; key != "" && !ok {
		if r.writtenBytes += len(key); r.writtenBytes > maxWrittenBytes {
			r.written, r.writtenBytes = map[string]uint32{}, len(key)
		}
		r.written[key] = c.Local
	}
}

// gclockGoCommFreed records MPI_Comm_free of the communicator with the
// given local index by rewriting its Comm frame with FreedNS.
//
//export gclockGoCommFreed
func gclockGoCommFreed(local C.uint32_t, freed C.int64_t) {
	defer guard("MPI_Comm_free", nil)
	r := rec
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.comms[uint32(local)]
	if !ok {
		return
	}
	c.FreedNS = int64(freed)
	delete(r.comms, uint32(local))
	r.writeComm(c)
}

// gclockGoFinish ends the recording: at MPI_Finalize (reason
// GCK_FINISH_FINALIZE) after sync epoch 1; at process exit without
// MPI_Finalize (GCK_FINISH_EXIT) and in MPI_Abort (GCK_FINISH_ABORT)
// without it.
//
//export gclockGoFinish
func gclockGoFinish(reason C.int32_t) {
	defer guard("MPI_Finalize", nil)
	why := "exit"
	switch reason {
	case C.GCK_FINISH_FINALIZE:
		why = "finalize"
	case C.GCK_FINISH_ABORT:
		why = "abort"
	}
	rec.finish(why)
}

// finish runs epoch 1 (at MPI_Finalize only, on every rank that ran epoch
// 0) and closes the file with its footer; why is the footer's Reason.
func (r *recorder) finish(why string) {
	r.drainFlushQueue()
	if why == "finalize" {
		if r.synced {
			r.finalizeResync()
			ep, err := r.epoch(r.nextEpoch)
			switch {
			case err != nil:
				r.warnf("clock sync at MPI_Finalize failed: %v", err)
			case r.w != nil:
				r.mu.Lock()
				if err := r.w.WriteEpoch(ep); err != nil {
					r.stopRecording(fmt.Errorf("writing sync epoch 1 to %s: %w", r.path, err))
				}
				r.mu.Unlock()
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return
	}
	f := trace.Footer{
		Events:      r.w.Events(),
		Dropped:     uint64(C.gclock_dropped()),
		EndNS:       int64(C.gclock_now_ext()),
		Reason:      why,
		BufferBytes: 2 * int(C.gclock_buffer_events()) * int(unsafe.Sizeof(C.gclock_event{})),
	}
	if why != "finalize" {
		f.End = endOfProcess() // docs/guide/crash-hang.md
	}
	if err := r.w.Close(f); err != nil {
		r.warnf("closing %s: %v", r.path, err)
	} else if r.live != "" {
		os.Remove(r.live) // every event is in the finished rank file
	}
	r.w = nil
}

// injectClock applies this rank's node's GCLOCK_FAKE_CLOCK spec inside the
// timer (cshim/timer.c) and returns what the header records of it.
func injectClock(cfg config, nodeID int, anchor int64) *trace.Injection {
	p := cfg.Pairs[nodeID%len(cfg.Pairs)]
	in := &trace.Injection{Spec: cfg.Fake, NodeSize: cfg.NodeSize, OffsetNS: float64(int64(p.OffsetNS)), DriftPPM: p.DriftPPM,
		Terms: p.Terms, AnchorNS: anchor}
	C.gclock_timer_fake(C.double(p.OffsetNS), C.double(p.DriftPPM))
	for i := range p.Terms {
		t := &p.Terms[i]
		switch t.Kind {
		case "step":
			C.gclock_timer_fake_term(1, C.double(t.AtNS), C.double(t.PPM), 0, nil, nil, 0)
		case "sin":
			C.gclock_timer_fake_term(2, C.double(t.AmpNS), C.double(t.PeriodNS), C.double(t.Phase), nil, nil, 0)
		case "rw":
			w := t.Walk()
			C.gclock_timer_fake_term(3, C.double(w.StepNS), 0, 0, (*C.double)(&w.OffsetNS[0]), (*C.double)(&w.FreqPPM[0]), C.int(len(w.FreqPPM)))
		}
	}
	if len(p.Terms) > 0 {
		C.gclock_timer_fake_anchor(C.int64_t(anchor))
	}
	return in
}

// Package trace defines the gclock trace file format: one file per MPI rank,
// a header followed by self-delimiting, checksummed chunks (events, comm
// definitions, sync epochs, footer). Writer and reader are streaming.
//
// This file is the cross-package contract: pmpi writes these types, merge and
// viz read them. See docs/reference/trace-format.md for the on-disk layout.
package trace

// FormatVersion is the version written into every file header: 2 since
// event chunks moved to layout 2 (templates, docs/reference/trace-format.md), 3 since
// a COMM frame may name its members by reference (Comm.Same), which an
// older reader would take for an empty communicator, 4 since it may give
// them as runs (Comm.Runs), which such a reader would take for one too,
// 5 since event chunks are layout 3 (the timing columns' values in as many
// bytes as each needs, their widths in a column of their own; D47), which
// a reader of 4 would refuse chunk by chunk, 6 since they are layout 4
// (an event with the times of the event before it holds no timing values,
// only a bit a reader of 5 refuses as reserved; D91). Readers read every
// major version from OldestFormatVersion to FormatVersion and refuse others
// with a clear message.
const FormatVersion = 6

// OldestFormatVersion is the oldest major version this reader still reads
// (1: layout-1 event chunks).
const OldestFormatVersion = 1

// Magic opens every gclock trace file.
const Magic = "GCLOCKTR"

// Header is the per-rank metadata known when the file is created (after
// MPI_Init and the init sync). Comms and epochs learned later are appended as
// their own chunks; the reader folds them into Meta.
type Header struct {
	Version   int      `msgpack:"v"`
	JobID     string   `msgpack:"job"`   // identical for all ranks of one run
	Rank      int      `msgpack:"rank"`  // world rank
	WorldSize int      `msgpack:"size"`  // MPI_COMM_WORLD size
	Host      string   `msgpack:"host"`  // gethostname
	PID       int      `msgpack:"pid"`   //
	Exe       string   `msgpack:"exe"`   // /proc/self/exe
	Args      []string `msgpack:"args"`  // argv of the application, if known
	MPILib    string   `msgpack:"mpi"`   // MPI_Get_library_version, first line
	Timer     Timer    `msgpack:"timer"` // which local timer produced timestamps
	// NodeID is this rank's node index in the sync hierarchy (emulated when
	// GCLOCK_NODE_SIZE is set, else from MPI_COMM_TYPE_SHARED).
	NodeID   int        `msgpack:"node"`
	NodeSize int        `msgpack:"nodesz"` // ranks on this rank's node
	Inject   *Injection `msgpack:"inject,omitempty"`
	Objects  []Object   `msgpack:"objs"` // loaded objects, for call-site resolution
	// StartNS is the local timer value right after MPI_Init returned to the
	// application (before that, no events exist).
	StartNS int64 `msgpack:"start"`
	// Config echoes every GCLOCK_* setting in effect, for reproducibility.
	Config map[string]string `msgpack:"cfg"`
}

// Timer describes the local time source. All event timestamps are int64
// nanoseconds of this timer (with the injection applied, if any).
type Timer struct {
	Name string `msgpack:"name"` // "monotonic", "monotonic_raw", "realtime", "tsc", "mpi_wtime"
	// TSCHz is the calibrated TSC frequency when Name == "tsc" (ticks are
	// converted to ns before recording); 0 otherwise.
	TSCHz float64 `msgpack:"tschz,omitempty"`
	// CostNS is the measured cost of one timer read on this rank (median).
	CostNS float64 `msgpack:"cost,omitempty"`
}

// Injection records the fake clock error applied inside the timer
// (GCLOCK_FAKE_CLOCK). With it, recorded(t) = t + OffsetNS + DriftPPM*1e-6*t
// where t is the raw timer value in ns, so the true (raw) time of any recorded
// timestamp r is t = (r - OffsetNS) / (1 + DriftPPM*1e-6).
//
// Non-linear terms (fakeclock.go: frequency step, sinusoidal wander,
// random-walk frequency) add Extra(t), defined relative to AnchorNS.
type Injection struct {
	Spec     string  `msgpack:"spec"`   // the GCLOCK_FAKE_CLOCK string as given
	NodeSize int     `msgpack:"nodesz"` // GCLOCK_NODE_SIZE (0 = not emulated)
	OffsetNS float64 `msgpack:"off"`    // applied to this rank
	DriftPPM float64 `msgpack:"ppm"`    // applied to this rank
	// Terms are this rank's node's non-linear terms; AnchorNS is the raw
	// timer value their times count from (rank 0's, shared by all ranks).
	Terms    []FakeTerm `msgpack:"terms,omitempty"`
	AnchorNS int64      `msgpack:"anchor,omitempty"`
}

// TrueTime returns the raw timer time of a recorded (injected) timestamp.
func (in *Injection) TrueTime(recorded int64) float64 {
	if in == nil {
		return float64(recorded)
	}
	if len(in.Terms) > 0 {
		return in.trueTimeNonLinear(float64(recorded))
	}
	return (float64(recorded) - in.OffsetNS) / (1 + in.DriftPPM*1e-6)
}

// Object is one loaded ELF object (from dl_iterate_phdr) so call-site return
// addresses can be resolved offline to function and file:line.
type Object struct {
	Path string `msgpack:"path"`
	Base uint64 `msgpack:"base"` // load address (dlpi_addr)
	// Lo/Hi bound the object's executable PT_LOAD segments in memory.
	Lo      uint64 `msgpack:"lo"`
	Hi      uint64 `msgpack:"hi"`
	BuildID string `msgpack:"bid,omitempty"`
}

// Comm defines one communicator as all its members agree on it.
// ID is derived without communication: see CommID.
type Comm struct {
	ID        uint64  `msgpack:"id"`
	Local     uint32  `msgpack:"local"`   // this rank's small index used in Event.Comm
	Parent    uint64  `msgpack:"parent"`  // parent comm ID (0 for MPI_COMM_WORLD's parent)
	Kind      string  `msgpack:"kind"`    // "world", "self", "dup", "split", "split_type", "create"
	Members   []int32 `msgpack:"members"` // world ranks in comm rank order; read-only (readers share lists)
	CreatedNS int64   `msgpack:"t"`       // local time of creation
	FreedNS   int64   `msgpack:"freed,omitempty"`
	// Same, when not 0, is 1 + the Local of an earlier communicator of
	// this file with the same members, and the frame leaves Members out
	// (version 3): a communicator duplicated or freed in a loop then costs
	// a few bytes instead of its member list. The reader fills Members in
	// (Meta.Comms always holds them).
	Same uint32 `msgpack:"same,omitempty"`
	// Runs, when not empty, gives Members as (first, count, stride)
	// triples (PackMembers; version 4): the Writer writes them instead of
	// the list where they are shorter, the reader expands them into
	// Members and leaves Runs empty.
	Runs []int32 `msgpack:"runs,omitempty"`
}

// Well-known communicator IDs.
const (
	CommWorldID uint64 = 1
	CommSelfID  uint64 = 2 // per rank; never matched across ranks
)

// CommID derives the id all members of a new communicator agree on:
// (parent id, per-parent creation counter, lowest world rank among members),
// hashed into 64 bits (FNV-1a). The per-parent counter counts collective
// communicator creations on the parent, which every member of the parent
// performs in the same order; the lowest member separates the disjoint
// results of one MPI_Comm_split.
func CommID(parent uint64, counter uint32, lowestWorldRank int32) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	mix := func(v uint64) {
		for i := 0; i < 8; i++ {
			h ^= v & 0xff
			h *= prime64
			v >>= 8
		}
	}
	mix(parent)
	mix(uint64(counter))
	mix(uint64(uint32(lowestWorldRank)))
	if h <= CommSelfID { // keep the well-known ids unique
		h += 3
	}
	return h
}

// Event is one recorded MPI call on one rank (raw local times).
type Event struct {
	Op       Op     `msgpack:"op"`
	Comm     uint32 `msgpack:"c"`  // Comm.Local index on this rank
	Seq      uint32 `msgpack:"s"`  // per-communicator collective sequence number, from 0
	Root     int32  `msgpack:"r"`  // root as comm rank, -1 where undefined
	Sent     uint64 `msgpack:"bs"` // bytes this rank sends
	Recv     uint64 `msgpack:"br"` // bytes this rank receives
	EnterNS  int64  `msgpack:"t0"` // local timer at entry
	ExitNS   int64  `msgpack:"t1"` // local timer at exit
	Callsite uint64 `msgpack:"pc"` // return address into the application
	// Peer, Tag and Req are for point-to-point and nonblocking events
	// (issue 7); zero/-1 for blocking collectives.
	Peer int32  `msgpack:"p,omitempty"`
	Tag  int32  `msgpack:"g,omitempty"`
	Req  uint32 `msgpack:"q,omitempty"`
}

// Model maps this rank's local time to the global (reference rank 0) time:
//
//	offset(t) = Slope*(t-T0) + Intercept        (ns, "local minus reference")
//	global(t) = t - offset(t)
//
// T0 anchors the fit so that float64 keeps sub-ns precision even for
// CLOCK_REALTIME values near 1.8e18 ns. The subtraction t-T0 is done in int64.
type Model struct {
	T0        int64   `msgpack:"t0"`
	Slope     float64 `msgpack:"s"`
	Intercept float64 `msgpack:"i"` // ns
}

// Offset returns local-minus-reference at local time t, in ns.
func (m Model) Offset(t int64) float64 {
	return m.Slope*float64(t-m.T0) + m.Intercept
}

// Global returns the reference-clock time (ns) of local time t.
func (m Model) Global(t int64) float64 {
	return float64(t-m.T0) - m.Offset(t) + float64(m.T0)
}

// Epoch is one clock synchronisation as this rank saw it. Epoch 0 runs in
// MPI_Init, epoch 1 in MPI_Finalize.
type Epoch struct {
	Index     int               `msgpack:"idx"`
	Algorithm string            `msgpack:"alg"`    // e.g. "h2hca(hca3/skampi,clockprop)"
	Params    map[string]string `msgpack:"params"` // fitpoints, pingpongs, offset alg, ...
	StartNS   int64             `msgpack:"t0"`     // local time when sync began
	EndNS     int64             `msgpack:"t1"`     // local time when sync ended
	Model     Model             `msgpack:"model"`  // this rank's flattened model
	// Chain is the nested model before flattening (outermost last), for
	// diagnostics; Model is what correction uses.
	Chain []Model `msgpack:"chain,omitempty"`
	// FitPoints and PingPongs actually used by this rank's level(s).
	FitPoints int `msgpack:"nfit"`
	PingPongs int `msgpack:"npp"`
	// Check is the Algorithm 6 self-check as seen by the reference rank
	// (only filled in rank 0's file): residual offset per checked rank.
	Check []CheckResult `msgpack:"check,omitempty"`
}

// CheckResult is one reference-side residual measurement (Algorithm 6).
type CheckResult struct {
	Rank     int     `msgpack:"rank"`
	AfterNS  int64   `msgpack:"after"` // time since sync end when measured
	OffsetNS float64 `msgpack:"off"`   // residual global-clock offset
}

// Footer closes a cleanly finished file.
type Footer struct {
	Events uint64 `msgpack:"n"`
	// Calls counts the MPI calls among Events: the records that do not
	// continue an earlier call's (Op.Continues). 0 in files written
	// before it was added (2026-11-26), where it is not known.
	Calls   uint64 `msgpack:"calls,omitempty"`
	Dropped uint64 `msgpack:"drop"` // events lost (buffer exhaustion etc.)
	EndNS   int64  `msgpack:"t"`
	Reason  string `msgpack:"why"` // "finalize", "exit", "abort", "error"
	// Stopped says why recording stopped before the end (Reason "error"):
	// the rank's later calls are not in the file.
	Stopped string `msgpack:"stopped,omitempty"`
	// BufferBytes is the per-thread C buffer size in use.
	BufferBytes int `msgpack:"buf"`
	// End says how the rank ended when it did not end in MPI_Finalize:
	// MPI_Abort's errorcode and call site, exit()'s status (version 4.1,
	// 2026-11-28; nil before, and after MPI_Finalize).
	End *End `msgpack:"end,omitempty"`
}

// End kinds (End.Kind).
const (
	EndAbort  = "abort"  // MPI_Abort
	EndSignal = "signal" // a signal's handler ran (fatal, or the launcher's SIGTERM, ...)
	EndExit   = "exit"   // exit() or a return from main without MPI_Finalize
)

// End is how a process ended, as the recorder wrote it (docs/guide/crash-hang.md):
// in the footer (abort, exit) or in the live sidecar's first page (a
// signal, when the process then died).
type End struct {
	Kind string `msgpack:"kind"` // EndAbort, EndSignal, EndExit
	// Code is MPI_Abort's errorcode, exit()'s status or the signal number.
	Code int32 `msgpack:"code"`
	// SigCode is the signal's si_code (SI_USER 0, SI_TKILL -6, or the
	// kernel's reason for a fault).
	SigCode int32 `msgpack:"sicode,omitempty"`
	// Addr is a fault's address (si_addr); Site MPI_Abort's call site or
	// the program counter the signal interrupted.
	Addr uint64 `msgpack:"addr,omitempty"`
	Site uint64 `msgpack:"site,omitempty"`
	// NS is the local time it was recorded.
	NS int64 `msgpack:"t"`
	// Pid is the sender of a signal sent with kill() (0 for a fault).
	Pid int32 `msgpack:"pid,omitempty"`
	// Tid is the kernel thread that got it; Thread its buffer number (the
	// order of LiveRecovery's threads), -1 when it had none.
	Tid    int32 `msgpack:"tid,omitempty"`
	Thread int32 `msgpack:"thread"`
	// Partial: the process died while recording it (fields not trusted).
	Partial bool `msgpack:"-"`
}

package datamodel

import "github.com/gclock/gclock/trace"

// This file is the contract between merge (producer) and viz / the
// tracemerge command (consumers). Fields may be added; none renamed.

// GEvent is one recorded event with its times corrected to the global
// (rank 0 reference) timebase. Global times are float64 ns in rank 0's
// timer timebase relative to the run's origin (Analysis.OriginNS, an int64
// in that timebase), so that they keep sub-ns precision whatever the
// timer's epoch (CLOCK_REALTIME values are ≈1.8e18 ns); the absolute time
// is OriginNS + round(Enter).
type GEvent struct {
	Rank       int32
	Op         trace.Op
	CommID     uint64 // trace.Comm.ID (agreed by all members)
	Seq        uint32 // per-communicator collective sequence number
	Root       int32  // comm rank of the root, -1 where undefined
	Sent       uint64 // bytes this rank sends
	Recv       uint64 // bytes this rank receives
	LocalEnter int64
	LocalExit  int64
	Enter      float64 // global ns relative to the origin (chosen correction)
	Exit       float64 // global ns relative to the origin
	// RawEnter/RawExit are the uncorrected local times shifted by the
	// rank's first timestamp alignment used for the "raw" view (ns,
	// relative to the origin).
	RawEnter float64
	RawExit  float64
	Callsite uint64
	// CommRank is this rank's index in the communicator (its comm rank),
	// -1 when the communicator is unknown. With Root it tells a rooted
	// op's root apart and orders a scan's prefix.
	CommRank int32
	// Peer, Tag and Req are the point-to-point fields of trace.Event
	// (docs/explanation/p2p.md): the other side as a world rank (trace.PeerAny,
	// trace.PeerNull), the tag, and the per-rank request id (0: none).
	Peer int32
	Tag  int32
	Req  uint32

	// Set by the engine (package merge) for matching; not part of the
	// output contract.
	// (The event's index in its communicator is CommRank: a copy of it
	// here made a GEvent 136 bytes, three cache lines; TestGEvent_IsTwoCacheLines.)
	CommIdx int32  // dense communicator index, -1 when unknown
	Site    int32  // dense call-site index, -1 when unknown
	Ord     uint64 // arrival order in its rank's reorder heap (merge/order.go): ties keep file order
}

// Continuation reports whether e is the second or a later record of one
// point-to-point call written as several records sharing its Enter and
// Exit (MPI_Waitall completing several requests, the halves of
// MPI_Sendrecv; see trace/ops.go). Its time is already counted with record
// 0, so time-in-MPI sums must skip it.
func (e *GEvent) Continuation() bool { return e.Op.Continues(e.Seq) }

// Sink consumes the merged, globally ordered event stream (by Enter).
// Gantt builders, CSV and Perfetto writers and the metric accumulators are
// all sinks, so one pass over the data feeds every output.
type Sink interface {
	Add(ev *GEvent) error
}

// Stats summarises one metric over many samples (ns).
type Stats struct {
	Count  int     `json:"count"`     // number of samples
	Total  float64 `json:"total_ns"`  // sum of the samples, ns
	Mean   float64 `json:"mean_ns"`   // Total / Count, ns
	Median float64 `json:"median_ns"` // empirical median, ns (a reservoir estimate, see ReservoirSize)
	P95    float64 `json:"p95_ns"`    // empirical 95th percentile, ns (estimated like Median)
	Max    float64 `json:"max_ns"`    // largest sample, ns
}

// Instance is one collective call matched across all members of its
// communicator: (CommID, Seq).
type Instance struct {
	CommID uint64   `json:"comm"` // communicator id (trace.CommID, the same on every member)
	Seq    uint32   `json:"seq"`  // the communicator's collective sequence number of this call
	Op     trace.Op `json:"-"`
	OpName string   `json:"op"` // MPI function name, e.g. MPI_Allreduce
	// Ranks, Enter and Exit are parallel, in comm-rank order.
	Ranks    []int32   `json:"ranks"`
	Enter    []float64 `json:"enter_ns"` // members' global enter times, ns
	Exit     []float64 `json:"exit_ns"`  // members' global exit times, ns
	Complete bool      `json:"complete"` // every member's event was found

	EntrySkew float64 `json:"entry_skew_ns"` // last enter - first enter
	ExitSkew  float64 `json:"exit_skew_ns"`  // last exit - first exit
	// Latency is first exit − last enter for N×N (synchronizing) ops and
	// 0 for all others: a rooted op or a scan may legitimately let a member
	// leave before another enters, so the difference is no latency there.
	// It is 0 too for an N×N instance in which some member does not depend
	// on the last entrant under the data rule (a count-0 Allreduce).
	Latency  float64 `json:"latency_ns"`
	Span     float64 `json:"span_ns"`   // last exit - first enter
	LastRank int32   `json:"last_rank"` // world rank that entered last
	// Violation > 0 is the clock-condition violation, ns: how far some
	// member left before a member it depends on entered (ClockViolation:
	// the last entrant for N×N ops, the root for a broadcast's non-roots,
	// the last contributor for a reduce's root, lower ranks for a scan).
	Violation float64 `json:"violation_ns"`

	// Added by merge: call sites of the latest-arriving rank (where the
	// wait is caused) and of the rank that waited most, resolved to
	// "function (file:line)" or "object+0xoff". Filled for the instances in
	// Analysis.Worst and for captured instances.
	LastCallsite uint64 `json:"last_callsite"`
	LastSite     string `json:"last_site"`     // call site of LastRank, resolved
	MaxWaitRank  int32  `json:"max_wait_rank"` // world rank that waited most (-1 nobody waited)
	MaxWaitSite  string `json:"max_wait_site"` // call site of MaxWaitRank, resolved

	// Added by merge (wait semantics per op class, see WaitClass):
	// RootRank is the world rank of the root of a rooted op (-1 none or
	// missing). Wait[i] is member i's wait, WaitCause[i] the world rank
	// that caused it (-1 when Wait[i] is 0). MaxWaitRank is the member with
	// the largest wait (-1 when nobody waited), CauseRank the rank that
	// caused that wait and CauseSite its call site.
	WaitClass string    `json:"wait_class"`
	RootRank  int32     `json:"root_rank"`  // world rank of a rooted op's root (-1 none or missing)
	Wait      []float64 `json:"wait_ns"`    // members' waits, ns, parallel to Ranks
	WaitCause []int32   `json:"wait_cause"` // world rank that caused each wait (-1 when it is 0)
	CauseRank int32     `json:"cause_rank"` // world rank that caused MaxWaitRank's wait (-1 none)
	CauseSite string    `json:"cause_site"` // call site of CauseRank, resolved

	// Added by merge: Sent[i] and Recv[i] are member i's bytes
	// (GEvent.Sent/Recv), parallel to Ranks. The waits and the clock
	// condition follow the data rule (see WaitClass): i can depend on j
	// only if j sends and i receives data; MPI_Barrier is exempt. nil (an
	// Instance built by hand or from an older analysis) means unknown:
	// every member is taken to send and receive.
	Sent []uint64 `json:"sent,omitempty"`
	Recv []uint64 `json:"recv,omitempty"` // members' received bytes, parallel to Ranks (see Sent)

	// Dense call-site indices of LastSite, MaxWaitSite and CauseSite until
	// they are resolved: set by the engine, not part of the output contract.
	LastSiteIdx, WaitSiteIdx, CauseSiteIdx int32 `json:"-"` // dense site indices until resolved
}

// OpSummary aggregates all instances of one op.
type OpSummary struct {
	Op        string  `json:"op"`            // MPI function name, e.g. MPI_Allreduce
	Count     int     `json:"count"`         // instances
	Calls     int     `json:"calls"`         // events (instances x members)
	TotalTime float64 `json:"total_time_ns"` // sum over events of exit-enter
	EntrySkew Stats   `json:"entry_skew"`    // per instance, last enter − first enter, ns
	ExitSkew  Stats   `json:"exit_skew"`     // per instance, last exit − first exit, ns
	Wait      Stats   `json:"wait"`          // per (rank, instance), semantics of WaitClass
	// Latency (first exit − last enter) only for N×N ops; Count 0 otherwise.
	Latency      Stats   `json:"latency"`
	Span         Stats   `json:"span"`             // per instance, last exit − first enter, ns
	Violations   int     `json:"clock_violations"` // instances with a clock-condition violation
	MaxViolation float64 `json:"max_violation_ns"` // largest of those violations, ns
	// WaitClass names the wait pattern of the op (WaitClass.String).
	WaitClass string `json:"wait_class"`
	// ZeroByte counts the instances (of Count) in which no member sends or
	// receives a byte (count 0): they have no waits and no clock-condition
	// violation (the data rule, see WaitClass). Always 0 for MPI_Barrier.
	ZeroByte int `json:"zero_byte_instances"`
	// BelowClockBound: the mean wait is within twice the run's typical
	// clock bound (ClockQuality.TypicalBoundNS): not a finding.
	BelowClockBound bool `json:"below_clock_bound"`
}

// CallsiteSummary aggregates waits per application call site.
type CallsiteSummary struct {
	Callsite  uint64  `json:"pc"`            // one raw pc seen there (it may differ per rank)
	Function  string  `json:"function"`      // function at the site ("" unresolved)
	File      string  `json:"file"`          // source file at the site ("" unresolved)
	Line      int     `json:"line"`          // source line at the site (0 unresolved)
	Object    string  `json:"object"`        // binary or library holding the pc ("" none known)
	Op        string  `json:"op"`            // the collective called there, e.g. MPI_Bcast
	Calls     int     `json:"calls"`         // calls of Op made there, summed over ranks
	TotalTime float64 `json:"total_time_ns"` // sum over those calls of exit − enter, ns
	Wait      Stats   `json:"wait"`          // per call, its wait, ns (WaitClass semantics)
}

// RankSummary aggregates per world rank.
type RankSummary struct {
	Rank      int32   `json:"rank"`           // world rank
	Host      string  `json:"host"`           // host name from the rank file's header
	Events    int     `json:"events"`         // its events (records) entered in the window
	TimeInMPI float64 `json:"time_in_mpi_ns"` // sum over its calls of exit − enter, ns
	TotalWait float64 `json:"total_wait_ns"`  // sum of its waits (WaitClass semantics)
	// Lateness: the sum of the waits this rank caused to other members
	// ("who makes others wait"): as the last entrant of N×N ops, as a late
	// root of 1-to-N ops, as the last contributor of N-to-1 ops, as the
	// latest lower rank of a scan.
	TotalLateness float64 `json:"total_lateness_ns"`
	LastCount     int     `json:"last_count"` // instances where it entered last
	// CausedCount: instances in which it caused some other member to wait.
	CausedCount int `json:"caused_count"`

	// Added by merge (world size <= MaxPairRanks): the ranks this rank
	// made wait most when it was last, and the ranks it waited for most,
	// top 3 each, with the summed wait.
	MadeWait  []RankAmount `json:"made_wait,omitempty"`
	WaitedFor []RankAmount `json:"waited_for,omitempty"` // top 3 ranks it waited for, with the summed wait
}

// RankAmount is a wait time (ns) attributed to another rank.
type RankAmount struct {
	Rank int32   `json:"rank"` // world rank
	NS   float64 `json:"ns"`   // wait time, ns
}

// ClockQuality states how far the corrected timeline can be trusted.
type ClockQuality struct {
	Mode       string `json:"mode"`                  // interp, init, raw
	Injected   bool   `json:"injected"`              // some rank's timer was faked (GCLOCK_FAKE_CLOCK): a test run
	InjectSpec string `json:"inject_spec,omitempty"` // the distinct injection specs, " | "-separated
	// Epochs' self-check residuals (Algorithm 6), max |offset| ns per epoch.
	CheckMaxNS     []float64 `json:"check_max_ns"`
	Algorithms     []string  `json:"algorithms"`       // sync algorithm of each of rank 0's epochs (resync ones once)
	Violations     int       `json:"violations"`       // collective instances with a clock-condition violation
	MaxViolationNS float64   `json:"max_violation_ns"` // largest of those violations, ns
	Warnings       []string  `json:"warnings"`         // why the timeline may not be trusted, one sentence each
	// Knots is the number of sync epochs of rank 0 (MPI_Init, the resync
	// epochs, MPI_Finalize), ResyncEpochs those between init and finalize,
	// MaxKnotGapNS the longest local time between two consecutive knots of
	// any rank: the correction is a straight line over that gap, so a
	// clock whose frequency changes by Δf in it is off by up to Δf·gap/4.
	Knots        int     `json:"knots"`
	ResyncEpochs int     `json:"resync_epochs"`   // rank 0's sync epochs between MPI_Init's and MPI_Finalize's
	MaxKnotGapNS float64 `json:"max_knot_gap_ns"` // longest local time between two consecutive knots of any rank, ns
	// Happened-before bounds (refine.go): per rank, and over all ranks
	// the largest bound (-1: no facts), the ranks with facts, the cells
	// whose facts the corrected clock breaks, and what --clock refined moves.
	Bounds         []RankBound `json:"bounds,omitempty"`
	BoundNS        float64     `json:"bound_ns"`             // largest RankBound.BoundNS, ns (-1: no facts)
	TypicalBoundNS float64     `json:"typical_bound_ns"`     // largest rank TypicalNS
	BoundRanks     int         `json:"bound_ranks"`          // ranks with happened-before facts
	BoundOutside   int         `json:"bound_outside_cells"`  // Σ RankBound.Outside: cells whose facts the clock breaks
	Contradictions int         `json:"bound_contradictions"` // Σ RankBound.Contradictions: cells with lo > hi
	// Disagreements: grid points where neighbouring cells' ranges are
	// disjoint (RankBound.Disagreements), summed over ranks.
	Disagreements int `json:"bound_disagreements"`
	// RefineLimited: stations the refinement's move could not reach
	// within RefineMaxRate (RankBound.Limited), summed over ranks.
	RefineLimited int     `json:"refine_limited_points"`
	RefineMoved   int     `json:"refine_moved_ranks"`  // ranks the refinement moved
	RefineMaxNS   float64 `json:"refine_max_shift_ns"` // largest move of the refinement, ns
	// Sync-path bounds (clocksync.SyncBound, each epoch's
	// Params["bound_ns"]): the half-widths of the SKaMPI intervals along
	// a rank's path to the reference, plus the model's distance from
	// their midpoints, at each knot. SyncBounds per world rank is the
	// largest over its knots (-1: some epoch recorded none), SyncBoundNS
	// the largest over the ranks (-1: none known). They hold at the knots;
	// between knots the chord's error comes on top (MaxKnotGapNS).
	SyncBounds  []float64 `json:"sync_bounds_ns,omitempty"`
	SyncBoundNS float64   `json:"sync_bound_ns"` // largest of SyncBounds, ns (-1: none known)
	// ErrorBars: per rank, the estimated error of its corrected
	// timestamps over the run (errorbars_summary.go; the per-event values are
	// events.csv's enter_err_ns and exit_err_ns).
	ErrorBars []RankErrorBars `json:"error_bars,omitempty"`
	// ErrBarsByRank indexes their medians by world rank (-1: unknown):
	// set by the engine for RankBoundNS, not part of the output contract.
	ErrBarsByRank []float64 `json:"-"`
	// LooseKnots: per rank, the sync knots whose bound was far wider than
	// their neighbours' and which the correction moved toward them
	// (correct.LooseKnotFactor).
	LooseKnots []string `json:"loose_knots,omitempty"`
	// Controlled-logical-clock repair (--clock refined, clc.go): the
	// violations the refined timeline had before it (collectives and
	// point-to-point), how many it repaired, on how many ranks, and its
	// largest move. Violations above counts what is left.
	CLCBefore  int     `json:"clc_violations_before"`
	CLCRepairs int     `json:"clc_repairs"`      // violations repaired (all passes)
	CLCRanks   int     `json:"clc_ranks"`        // ranks the repair moved
	CLCMaxNS   float64 `json:"clc_max_shift_ns"` // largest forward move of the repair, ns
}

// Analysis is the result of one tracemerge pass.
type Analysis struct {
	Dir       string `json:"dir"`        // the run directory analysed
	JobID     string `json:"job"`        // job id recorded in the rank files' headers
	WorldSize int    `json:"world_size"` // ranks in MPI_COMM_WORLD
	Events    int    `json:"events"`     // events (records) entered in the window, all ranks
	// OriginNS is the origin of every global time of the analysis (int64
	// ns in rank 0's timebase, merge.RunOrigin: rank 0's MPI_Init exit).
	// StartNS, EndNS, WindowFrom/To and all instance times are relative
	// to it; absolute = OriginNS + round(t).
	OriginNS  int64             `json:"origin_ns"`
	StartNS   float64           `json:"start_ns"`  // first global enter
	EndNS     float64           `json:"end_ns"`    // last global exit
	Clock     ClockQuality      `json:"clock"`     // how far the corrected timeline can be trusted
	Ops       []OpSummary       `json:"ops"`       // per collective op, largest TotalTime first
	Callsites []CallsiteSummary `json:"callsites"` // per (call site, collective op), largest total wait first
	Ranks     []RankSummary     `json:"ranks"`     // per rank with a usable file, by rank
	Worst     []Instance        `json:"worst"`     // top-N by entry skew
	Problems  []string          `json:"problems"`  // damaged chunks, missing ranks...
	// PostMortem: how the run ended when it did not end cleanly
	// (docs/guide/crash-hang.md; package merge/postmortem computes it,
	// merge.Analyze and runinfo.Summarize leave it nil); nil when it did.
	PostMortem *PostMortem    `json:"postmortem,omitempty"`
	Hists      []OpHistograms `json:"histograms"` // per op of Ops: exit-skew and wait histograms

	// Added by merge (not in the first contract):
	ClockMode    string  `json:"clock_mode"`              // mode requested
	WindowFrom   float64 `json:"window_from_ns"`          // global ns (relative to OriginNS), 0 = none
	WindowTo     float64 `json:"window_to_ns"`            // global ns (relative to OriginNS), 0 = none
	Instances    int     `json:"instances"`               // matched instances in the window
	Incomplete   int     `json:"incomplete_instances"`    // of which some member's event is missing
	MissingRanks []int   `json:"missing_ranks,omitempty"` // world ranks without a usable rank file
	// ExitDelays profiles, per synchronizing op and communicator, when each
	// member leaves relative to the first one (complete instances only).
	ExitDelays []ExitDelay `json:"exit_delays"`
	// Selective is what GCLOCK_OPS and MPI_Pcontrol left out (nil: nothing).
	Selective *SelectiveTracing `json:"selective,omitempty"`
	// RootCauses is the delay and critical-path analysis
	// (RootCauseStream; nil when it did not run).
	RootCauses *RootCauseResult `json:"root_causes,omitempty"`
}

// ExitDelay is the mean exit time of each member of a communicator
// relative to the first member to leave the same instance, for one op: the
// exit imbalance a collective leaves behind, per process (the HCA paper's
// Sec. 4.6, Figure 10, found MPI_Barrier releasing rank 15 40 µs after
// rank 0). Only synchronizing ops on communicators of 2..MaxExitProfile
// members are profiled.
type ExitDelay struct {
	Op        string    `json:"op"`        // the synchronizing op, e.g. MPI_Barrier
	Comm      uint64    `json:"comm"`      // communicator id (trace.CommID)
	Instances int       `json:"instances"` // complete instances profiled
	Ranks     []int32   `json:"ranks"`     // world ranks in comm-rank order
	MeanNS    []float64 `json:"mean_ns"`   // mean (my exit - first exit)
	// CI95NS is the half-width of the 95% confidence interval of the mean
	// (1.96·sd/√n).
	CI95NS []float64 `json:"ci95_ns"`
}

// Histogram is a fixed, log-spaced histogram of a metric (ns). Edges has
// len(Counts)+1 entries; samples below Edges[0] go to Counts[0], above the
// last edge to the last bin.
type Histogram struct {
	Edges  []float64 `json:"edges_ns"` // bin edges, ns: 10 ns to 100 s, 5 per decade (HistPerDecade)
	Counts []int     `json:"counts"`   // samples per bin
}

// OpHistograms carries the distributions the HTML report draws per op.
type OpHistograms struct {
	Op       string    `json:"op"`        // MPI function name
	ExitSkew Histogram `json:"exit_skew"` // per instance, last exit − first exit, ns
	Wait     Histogram `json:"wait"`      // per (member, instance), its wait, ns
}

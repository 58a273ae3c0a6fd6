package datamodel

// The post-mortem's data model: the section the reports print when a run
// did not end cleanly (docs/guide/crash-hang.md). Package merge/postmortem
// computes it (postmortem.Of) from the rank files' metadata and writes its
// text (postmortem.Lines); the analysis (Analysis.PostMortem) and
// tracemerge info (runinfo.Summary.PostMortem, package merge/runinfo) carry it.

// How a rank ended (RankEnd.How).
const (
	EndFinalize = "finalize" // MPI_Finalize: clean
	EndAbort    = "abort"    // MPI_Abort
	EndFatal    = "fatal"    // a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT)
	EndSignaled = "signaled" // SIGTERM, SIGINT, SIGXCPU, SIGUSR1/2 (launcher, batch system)
	EndExit     = "exit"     // exit() or a return from main without MPI_Finalize
	EndKilled   = "killed"   // nothing recorded: SIGKILL, the OOM killer, node loss (inferred)
	EndStopped  = "stopped"  // recording stopped early (footer "error"); the rank went on
	EndNoFile   = "no_file"  // no usable rank file
)

// PostMortem is the post-mortem section; nil (omitted) when every rank
// ended in MPI_Finalize.
type PostMortem struct {
	// First is the rank that ended first and how (the cause: an abort, a
	// fatal signal, an exit, a rank that vanished; a launcher's signal
	// only when nothing else is known). Nil when no rank is known to have
	// ended abnormally (e.g. only missing files).
	First *RankEnd `json:"first,omitempty"`
	// Ends is every rank's end that was not MPI_Finalize, in order of time.
	Ends []RankEnd `json:"ends"`
	// EndGroups are Ends grouped by how (for thousands of ranks).
	EndGroups []EndGroup `json:"end_groups"`
	// InFlight groups the calls the ranks' threads were inside when they
	// ended, STAT-like: one group per op, communicator, instance (for a
	// collective) and tag (for point-to-point).
	InFlight []FlightGroup `json:"in_flight"`
	// Deadlocks are the cycles of the wait-for graph of the blocked ranks.
	Deadlocks []Deadlock `json:"deadlocks,omitempty"`
	// Finalized lists the ranks that did end in MPI_Finalize.
	Finalized []int `json:"finalized,omitempty"`
}

// RankEnd is how one rank ended.
type RankEnd struct {
	Rank int    `json:"rank"` // world rank
	How  string `json:"how"`  // EndAbort, EndFatal, ...
	// Signal and SignalName: the signal (EndFatal, EndSignaled).
	Signal     int    `json:"signal,omitempty"`
	SignalName string `json:"signal_name,omitempty"` // e.g. "SIGSEGV"
	// Code is MPI_Abort's errorcode or exit()'s status.
	Code *int32 `json:"code,omitempty"`
	// FaultAddr is a fault's address (hex); Site MPI_Abort's call site or
	// where the signal struck, as function (file:line) where resolvable.
	FaultAddr string `json:"fault_addr,omitempty"`
	Site      string `json:"site,omitempty"` // MPI_Abort's call site or where the signal struck
	// SenderPid: a signal sent with kill() (the launcher's), its sender.
	SenderPid int32 `json:"sender_pid,omitempty"`
	// Thread is the thread buffer that got the signal (0: the thread that
	// called MPI_Init), -1 unknown; MainThread whether it is that one.
	Thread int `json:"thread"`
	// TimeS is when it ended, in seconds after the run's start (the
	// earliest MPI_Init exit), on the corrected global clock; for an
	// inferred end, the rank's last recorded activity.
	TimeS float64 `json:"time_s"`
	// Inferred: nothing was recorded; How and TimeS come from the last
	// activity.
	Inferred bool `json:"inferred"`
	// LastCall is the last call the ending thread returned from.
	LastCall string `json:"last_call,omitempty"`
	// InCall is the call the rank's threads were inside, if any.
	InCall string `json:"in_call,omitempty"`
	// Text is the sentence the reports print.
	Text string `json:"text"`
}

// EndGroup is the ranks that ended the same way.
type EndGroup struct {
	How    string  `json:"how"`     // the ranks' common end (EndAbort, EndFatal, ...)
	Text   string  `json:"text"`    // the line the reports print for the group
	Ranks  []int   `json:"ranks"`   // world ranks, sorted
	FirstS float64 `json:"first_s"` // the earliest end in the group (global s after the run's start)
	LastS  float64 `json:"last_s"`  // the latest end in the group (global s after the run's start)
}

// FlightGroup is the ranks inside the same call when they ended.
type FlightGroup struct {
	Op     string `json:"op"`                // the MPI call the ranks are inside
	Comm   string `json:"comm,omitempty"`    // "world", "self" or the id
	CommID string `json:"comm_id,omitempty"` // the communicator's agreed id
	// Instance is a collective's number on the communicator (the n-th
	// collective the members called on it, from 0).
	Instance *uint32 `json:"instance,omitempty"`
	// Tag is the point-to-point tag (all ranks of the group share it).
	Tag   *int32 `json:"tag,omitempty"`
	Ranks []int  `json:"ranks"` // world ranks inside the call, sorted
	// Threads counts the threads (a rank may have several inside).
	Threads int `json:"threads"`
	// EnteredFirstS/LastS: the earliest and latest entry (global s after
	// the run's start).
	EnteredFirstS float64 `json:"entered_first_s"`
	EnteredLastS  float64 `json:"entered_last_s"` // the latest entry into the call (global s after the run's start)
	// Peers: the point-to-point peers as "rank <- peer" ("rank -> peer"
	// for a send), at most 8, else how many distinct.
	Peers string   `json:"peers,omitempty"`
	Sites []string `json:"sites,omitempty"` // the call sites of the ranks' calls, distinct, as function (file:line)
	// NotInside: a collective's members that were not inside this
	// instance, grouped by what they were doing (never entered it, for a
	// synchronizing collective).
	NotInside []MemberState `json:"not_inside,omitempty"`
	// Text is the group's line.
	Text string `json:"text"`
}

// MemberState is the members of a collective that were elsewhere.
type MemberState struct {
	Ranks []int  `json:"ranks"` // members in this state, sorted world ranks
	State string `json:"state"` // what they were doing instead ("had left it", "inside MPI_Recv", ...)
}

// Deadlock is one cycle of the wait-for graph.
type Deadlock struct {
	Ranks []int  `json:"ranks"` // the ranks of the cycle, in wait-for order
	Text  string `json:"text"`  // the line the reports print ("rank 0 in MPI_Recv from 1 ...: deadlock")
	// Blocked are the other blocked ranks that wait on the cycle.
	Blocked []int `json:"blocked_behind,omitempty"`
}

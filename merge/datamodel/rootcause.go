package datamodel

// RootCauseResult is the delay and critical-path analysis of a run
// (RootCauseStream.Result; imbalance.json's "root_causes"). Times are ns.
//
// Every wait state found is counted in TotalWaitNS and ends in exactly
// one of: the costs of the causes (Σ Causes' CostNS over all causes,
// listed or not: AttributedNS), SmallNS, NoDelayNS or UnresolvedNS, so
// AttributedNS + SmallNS + NoDelayNS + UnresolvedNS = TotalWaitNS.
type RootCauseResult struct {
	TotalWaitNS      float64 `json:"total_wait_ns"`      // all wait states' waiting, ns
	WaitStates       int     `json:"wait_states"`        // wait states found
	CollectiveWaitNS float64 `json:"collective_wait_ns"` // of TotalWaitNS, in blocking collectives, ns
	LateSenderNS     float64 `json:"late_sender_ns"`     // of TotalWaitNS, Late Sender waits, ns
	LateReceiverNS   float64 `json:"late_receiver_ns"`   // of TotalWaitNS, Late Receiver waits, ns
	WaitAtFenceNS    float64 `json:"wait_at_fence_ns"`   // of TotalWaitNS, one-sided MPI_Win_fence waits, ns
	// LatePostNS: of TotalWaitNS, one-sided Late Post waits (an origin's
	// MPI_Win_start/complete for its target's MPI_Win_post), ns; absent
	// when 0.
	LatePostNS float64 `json:"late_post_ns,omitempty"`
	// EarlyWaitNS: of TotalWaitNS, one-sided Early Wait waits (a target's
	// MPI_Win_wait for its origins' MPI_Win_complete), ns; absent when 0.
	EarlyWaitNS float64 `json:"early_wait_ns,omitempty"`
	// AttributedNS is the sum of all causes' costs, short- and long-term.
	AttributedNS float64 `json:"attributed_ns"`
	// SmallNS went to causes beyond the rcVecK (8) largest of a wait
	// state that passed its wait on.
	SmallNS float64 `json:"small_causes_ns"`
	// NoDelayNS is waiting for which the waited-for rank spent no more
	// time than the waiting one since they last synchronised (clock
	// error, time inside MPI that the trace cannot split, or a wait
	// larger than the delays found).
	NoDelayNS float64 `json:"no_delay_ns"`
	// UnresolvedNS was passed on by wait states whose own causes were not
	// known when it was (a rooted collective whose last member entered
	// much later) or lay beyond the history kept per rank.
	UnresolvedNS float64 `json:"unresolved_ns"`
	// TruncatedWaits counts the wait states whose synchronisation
	// interval reached beyond the HistoryPerRank segments kept.
	TruncatedWaits int `json:"truncated_waits"`
	HistoryPerRank int `json:"history_per_rank"` // segments (regions and calls) kept per rank
	// RankTimeNS is Σ over ranks of the time from their first to their
	// last call: the denominator of every "share of the run".
	RankTimeNS float64 `json:"rank_time_ns"`
	// Causes are the root causes, largest cost first (at most TopN):
	// one (region, ranks) each, ranks with a similar cost in the same
	// region grouped.
	Causes []RootCause `json:"causes"`
	// Regions are the regions with the largest imbalance across ranks.
	Regions      []RegionStat `json:"regions"`
	CriticalPath CriticalPath `json:"critical_path"` // the chain of regions and calls that set the run's end
}

// RootCause is one delay: excess time of some ranks in one region that
// made others wait.
type RootCause struct {
	// Ranks lists the delaying ranks ("2", "0-511,600").
	Ranks     string `json:"ranks"`
	RankCount int    `json:"rank_count"` // ranks in Ranks
	// Region is "site → site" for computation between two MPI calls, or
	// "MPI_Op at site" for an MPI call (communication imbalance).
	Region string `json:"region"`
	Call   bool   `json:"call"` // Region is an MPI call (else computation between two calls)
	// CostNS = DirectNS + PropagatedNS: the waiting time the delay caused
	// directly (short-term cost) and through the wait states of the ranks
	// it delayed (long-term cost).
	CostNS       float64 `json:"cost_ns"`
	DirectNS     float64 `json:"direct_ns"`     // short-term cost: waits it caused directly, ns
	PropagatedNS float64 `json:"propagated_ns"` // long-term cost: through the ranks it delayed, ns
	// Share is CostNS / TotalWaitNS.
	Share float64 `json:"share"`
	// DelayNS is the excess time found in the region (Σ d over the wait
	// states it caused directly); Waits counts those wait states.
	DelayNS float64 `json:"delay_ns"`
	Waits   int     `json:"waits"` // wait states it caused directly
	// Via are the ranks the long-term cost propagated through (largest
	// first, at most 5).
	Via []RankAmount `json:"via,omitempty"`
	// BelowClockBound: the mean delay per wait state is within the clock's
	// error bound, so the cause may be an artefact of the correction.
	BelowClockBound bool `json:"below_clock_bound,omitempty"`
}

// RegionStat is one region's time across ranks.
type RegionStat struct {
	Region string  `json:"region"`   // as RootCause.Region
	Call   bool    `json:"call"`     // Region is an MPI call (else computation between two calls)
	Count  int     `json:"count"`    // times a rank ran it, summed over ranks
	Ranks  int     `json:"ranks"`    // ranks that ran it
	Total  float64 `json:"total_ns"` // time in it, summed over ranks, ns
	// MeanNS is the mean time per rank over all ranks of the run (ranks
	// that never ran it count 0); MaxNS the slowest rank's (MaxRank).
	MeanNS  float64 `json:"mean_ns"`
	MaxNS   float64 `json:"max_ns"`   // the slowest rank's time in it, ns
	MaxRank int32   `json:"max_rank"` // world rank with MaxNS (lowest on a tie)
	// ImbalanceNS = MaxNS − MeanNS: the time the slowest rank spends in
	// the region beyond the average.
	ImbalanceNS float64 `json:"imbalance_ns"`
}

// CriticalPath is the chain of regions and calls that determined when
// the run ended (Böhme et al., IPDPS 2012).
type CriticalPath struct {
	// LengthNS is the path's length: from the first call of the rank the
	// path starts on to the last exit of the run.
	LengthNS float64 `json:"length_ns"`
	EndRank  int32   `json:"end_rank"` // world rank whose last call ended last
	// Regions is the path's profile, longest first (at most TopN).
	Regions []CPRegion `json:"regions"`
	// Ranks is the time the path spends on each rank, largest first (at
	// most TopN).
	Ranks []RankAmount `json:"ranks"`
}

// CPRegion is one region's part of the critical path.
type CPRegion struct {
	Region string  `json:"region"`  // as RootCause.Region
	Call   bool    `json:"call"`    // Region is an MPI call (else computation between two calls)
	PathNS float64 `json:"path_ns"` // time the path spends in the region, ns
	Share  float64 `json:"share"`   // of the path's length
	// MeanNS is the mean time per rank in the region; ImbalanceNS the
	// critical-path imbalance indicator max(0, PathNS − MeanNS): how much
	// shorter the run would be if the region took every rank its mean.
	MeanNS      float64 `json:"mean_ns"`
	ImbalanceNS float64 `json:"imbalance_ns"` // max(0, PathNS − MeanNS), ns
	// Ranks lists the ranks the path visits in the region.
	Ranks string `json:"ranks"`
}

// MarkKind says what a Mark shows.
type MarkKind uint8

// The kinds of Mark.
const (
	// MarkRootCause: a delay of a listed root cause, on the delaying rank.
	MarkRootCause MarkKind = iota
	// MarkCriticalPath: a stay of the critical path on a rank.
	MarkCriticalPath
)

// Mark is an interval the Gantt chart and Perfetto highlight: a delay
// of one of the top root causes, or a stretch of the critical path.
// Times are global ns relative to the origin.
type Mark struct {
	Kind       MarkKind
	Rank       int32
	Start, End float64
	// Label names the cause ("root cause 1: region") or the path.
	Label string
}

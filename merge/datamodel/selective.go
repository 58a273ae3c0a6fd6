package datamodel

// SelectiveTracing says what the recorder deliberately left out of the
// trace (docs/reference/settings-details.md, "Selective tracing"): operations excluded
// by GCLOCK_OPS and the intervals in which a rank paused recording with
// MPI_Pcontrol(0). Nil in an Analysis when neither happened. Waits,
// imbalance and message matching only see what was recorded.
type SelectiveTracing struct {
	OpsSpec  string   `json:"ops_spec,omitempty"`  // rank 0's GCLOCK_OPS as set
	OpsError string   `json:"ops_error,omitempty"` // why the recorder ignored it
	Excluded []string `json:"excluded,omitempty"`  // operations not recorded
	// Paused intervals (MPI_Pcontrol(0) ... MPI_Pcontrol(level != 0)).
	PausedRanks int     `json:"paused_ranks"`
	Pauses      int     `json:"pauses"`           // MPI_Pcontrol(0) pauses, summed over ranks
	PausedNS    float64 `json:"paused_ns"`        // summed over ranks
	LongestNS   float64 `json:"longest_pause_ns"` // the longest pause of any rank, ns
	// OpenAtEnd counts pauses never resumed: they last until the rank's
	// last event (nothing after it is in the trace).
	OpenAtEnd int `json:"open_at_end"`
}

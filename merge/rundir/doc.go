// Package rundir loads a run directory for the analysis: every rank file
// (rank-*.gct) of one job, checked for consistency (Load), as a Run of
// RankInputs whose Sources hand out each rank's events chunk by chunk
// (OpenTrace, followed by a dead rank's live sidecar; MemSource for tests
// and synthetic input). What is wrong with the rank files (damaged chunks,
// missing ranks or footers, dropped events, no sync epoch) it words as
// problems, said once for all the ranks they concern.
//
// It imports only the trace format and sits below the analysis engine
// (package merge, which decodes, corrects and merges the events of a Run)
// and everything that reads a run's metadata (merge/postmortem,
// merge/runinfo) (docs/explanation/architecture.md, "Import direction").
package rundir

// Package merge turns a gclock run directory into answers: over the rank
// files of one run (loaded by package merge/rundir, below it), it corrects
// each timestamp to the global clock of rank 0 with the sync epochs'
// models (correct.Corrector: interp, init or raw), merges all ranks by global time in one streaming pass (a k-way merge over
// per-rank decoder goroutines), matches collective instances across their
// members by (communicator id, sequence number), and aggregates imbalance
// metrics per op, call site and rank (Analyze). The merged stream feeds any
// number of Sinks (Gantt, CSV, Perfetto in package viz) in the same pass.
// Call sites are named by package merge/callsite, below merge; above it,
// package merge/postmortem computes the post-mortem of a run that did not
// end cleanly, merge/rma the one-sided analysis (a Sink of the pass) and
// merge/runinfo the summary of tracemerge info
// (docs/explanation/architecture.md, "Import direction").
//
// Memory is bounded by the number of ranks and open instances, not by the
// trace length; quantiles come from bounded reservoirs. See
// docs/explanation/tracemerge.md for the design and the measurements.
package merge

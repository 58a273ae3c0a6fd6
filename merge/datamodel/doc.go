// Package datamodel is the reports' data model: the events of the merged
// stream (GEvent, and the Sink interface every consumer of the stream
// implements) and the results of an analysis (Analysis with its
// summaries, instances, clock quality, selective tracing, root causes and
// post-mortem), which the engine (package merge) fills and the outputs
// (package viz, the tracemerge command's JSON files) read. The JSON tags
// are the output contract: fields may be added, none renamed.
//
// It holds types and their small methods, not the code that computes
// them, and imports only the trace format, so that everything that
// produces or consumes these types can sit above it without importing
// the engine (docs/explanation/architecture.md, "Import direction").
// Package merge names the types its own code uses under their old names
// (merge.GEvent = datamodel.GEvent); every other package names them here.
package datamodel

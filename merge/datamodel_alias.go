package merge

import "github.com/gclock/gclock/merge/datamodel"

// The reports' data model lives in package merge/datamodel, below the
// engine (docs/explanation/architecture.md, "Import direction"), so that
// the packages split out of merge (loading and decoding below it, the
// analyses above it) can share it without importing the engine. These
// aliases keep merge's code and its callers (viz, cmd/tracemerge,
// merge/postmortem, merge/rma, merge/runinfo, the tests) compiling
// unchanged while they move; a caller can drop them package by package by
// naming datamodel directly.

// Events and the stream (datamodel/types.go).
type (
	GEvent = datamodel.GEvent
	Sink   = datamodel.Sink
)

// The analysis and its parts (datamodel/types.go).
type (
	Stats           = datamodel.Stats
	Instance        = datamodel.Instance
	OpSummary       = datamodel.OpSummary
	CallsiteSummary = datamodel.CallsiteSummary
	RankSummary     = datamodel.RankSummary
	RankAmount      = datamodel.RankAmount
	ClockQuality    = datamodel.ClockQuality
	Analysis        = datamodel.Analysis
	ExitDelay       = datamodel.ExitDelay
	Histogram       = datamodel.Histogram
	OpHistograms    = datamodel.OpHistograms
)

// The clock's bounds (datamodel/clockbounds.go).
type (
	RankBound     = datamodel.RankBound
	RankErrorBars = datamodel.RankErrorBars
)

// What selective tracing left out (datamodel/selective.go).
type SelectiveTracing = datamodel.SelectiveTracing

// The root-cause analysis's result (datamodel/rootcause.go).
type (
	RootCauseResult = datamodel.RootCauseResult
	RootCause       = datamodel.RootCause
	RegionStat      = datamodel.RegionStat
	CriticalPath    = datamodel.CriticalPath
	CPRegion        = datamodel.CPRegion
)

// The post-mortem (datamodel/postmortem.go).
type (
	PostMortem  = datamodel.PostMortem
	RankEnd     = datamodel.RankEnd
	EndGroup    = datamodel.EndGroup
	FlightGroup = datamodel.FlightGroup
	MemberState = datamodel.MemberState
	Deadlock    = datamodel.Deadlock
)

// How a rank ended (RankEnd.How; datamodel/postmortem.go).
const (
	EndFinalize = datamodel.EndFinalize
	EndAbort    = datamodel.EndAbort
	EndFatal    = datamodel.EndFatal
	EndSignaled = datamodel.EndSignaled
	EndExit     = datamodel.EndExit
	EndKilled   = datamodel.EndKilled
	EndStopped  = datamodel.EndStopped
	EndNoFile   = datamodel.EndNoFile
)

package merge

import "github.com/gclock/gclock/merge/datamodel"

// The reports' data model lives in package merge/datamodel, below the
// engine (docs/explanation/architecture.md, "Import direction"), so that
// the packages split out of merge (loading and decoding below it, the
// analyses above it) can share it without importing the engine. Every
// other package names datamodel directly (scripts/datamodelrefs.go moves
// a caller that still says merge.X); these aliases are the names merge's
// own code uses, kept so that its files did not change. The ones no code
// of merge names (the post-mortem's types, MarkKind, PairWaits) are gone.

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

// What the Gantt chart and Perfetto highlight (datamodel/rootcause.go).
type Mark = datamodel.Mark

// The kinds of Mark (datamodel/rootcause.go).
const (
	MarkRootCause    = datamodel.MarkRootCause
	MarkCriticalPath = datamodel.MarkCriticalPath
)

// The point-to-point analysis's result, p2p.json (datamodel/p2p.go).
type (
	P2PResult   = datamodel.P2PResult
	Message     = datamodel.Message
	PairWait    = datamodel.PairWait
	LateMessage = datamodel.LateMessage
	P2PRank     = datamodel.P2PRank
	P2PSite     = datamodel.P2PSite
	NBCSummary  = datamodel.NBCSummary
)

// A clock-condition violation to repair (datamodel/repair.go).
type Repair = datamodel.Repair

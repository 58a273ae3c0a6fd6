// Package viz turns the merged, globally ordered event stream of a gclock
// run into pictures and exports: a level-of-detail Gantt chart (SVG), the
// per-instance "Figure 10" view of one collective (raw clock vs global
// clock), a self-contained HTML report, a terminal imbalance report, and
// CSV and Chrome/Perfetto trace exports.
//
// Every stream consumer (Gantt, CSV, Perfetto) is a merge.Sink, so one pass
// over the merged events feeds all outputs, and each keeps memory bounded
// independently of the number of events:
//
//   - Gantt: lanes × width (per pixel-column aggregates plus at most a few
//     individual bars per pixel column), plus the collectives still in
//     flight for the wait computation (about one per rank).
//   - CSV and Perfetto: one event at a time, plus a call-site name cache.
//
// Everything that comes from a trace (host names, executable, function and
// file names) is escaped in SVG and HTML output.
package viz

import (
	"errors"
	"io"
	"time"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rma"
)

// ErrNotImplemented is returned by API functions that are not written yet.
var ErrNotImplemented = errors.New("viz: not implemented yet")

// GanttOptions configures a Gantt chart.
type GanttOptions struct {
	// Width is the plot width in pixels (default 1600). The level of detail
	// follows it: events narrower than a pixel are aggregated per pixel
	// column.
	Width int
	// WorldSize is the number of lanes (ranks). 0 grows the lanes with the
	// highest rank seen.
	WorldSize int
	// Start and End set the time window in ns of the chosen timebase
	// (global, or raw when Raw is set). Events outside are clipped. With
	// 0,0 the window follows the data in a single pass: it starts at the
	// first event and doubles whenever an event falls outside, merging
	// pixel-column aggregates pairwise (memory stays bounded; resolution
	// is at least Width columns over the final span). Callers that know
	// the run's span (merge.Analysis.StartNS/EndNS) should pass it.
	Start, End float64
	// Title is drawn above the chart.
	Title string
	// Origin is the run origin (merge.Analysis.OriginNS, ns in rank 0's
	// timebase) of the events' relative global times; the axis prints the
	// window start as an absolute time with it.
	Origin int64
	// Hosts optionally names the host of each rank (index = world rank);
	// lanes are labelled "rank N (host)".
	Hosts []string
	// Raw draws RawEnter/RawExit (uncorrected clocks) instead of the
	// global times.
	Raw bool
	// LaneHeight is the height of one lane in pixels (default: 18, smaller
	// for many ranks, at least 3).
	LaneHeight int
	// RanksPerLane groups consecutive ranks into one lane (0: automatic,
	// one rank per lane up to MaxRankLanes ranks, beyond that as many per
	// lane as keep AggregateLanes lanes; 1: always one rank per lane). A
	// grouped lane shows the ranks' average: per pixel column the share of
	// rank-time in MPI and waiting and the dominant op; its label names the
	// rank range, which --ranks (tracemerge) draws one per lane.
	RanksPerLane int
	// Ranks, if set, draws only these world ranks, one per lane in the
	// given order (the "expand" of a grouped lane); waits still take every
	// rank into account. Needs WorldSize.
	Ranks []int32
	// MaxBars caps the number of individually drawn bars (each with a
	// tooltip); the narrowest beyond it are folded into the per-column
	// aggregate. Default 6000 (about 1.4 MB of bars); the aggregate layer is
	// kept under 2 MB by coarsening its columns, so the SVG stays under 5 MB.
	MaxBars int
}

// NewGantt returns a Gantt chart builder. It is a merge.Sink: feed it the
// merged stream in global Enter order, then call WriteSVG.
//
// Wait shading: the wait of a collective call (from my enter until the
// last member entered, clamped to my own call) is computed inside the
// Gantt without knowing communicator sizes: the stream is ordered by global
// Enter, so once it has passed an event's global Exit every member that
// could still make that rank wait has been seen. Collective events are
// therefore held until the stream passes their Exit (about one per rank)
// and then drawn with the wait part hatched.
func NewGantt(opt GanttOptions) *Gantt { return newGantt(opt) }

// InstanceSVG draws the "Figure 10" view of one collective instance: every
// member's enter→exit bar on its own row, the wait part (my enter until
// the last enter) hatched, the last arriver marked, entry and exit skew
// annotated. When raw is non-nil (the same instance with uncorrected
// times in Enter/Exit) it is drawn beside the corrected panel with the same
// time scale, and exits that lie before the last enter of a synchronizing
// op (clock-condition violations) are marked in red.
func InstanceSVG(w io.Writer, inst datamodel.Instance, raw *datamodel.Instance, title string) error {
	return instanceSVG(w, inst, raw, title)
}

// RankMeta describes one rank for the Perfetto export.
type RankMeta struct {
	Rank int32
	Host string
	PID  int
}

// Report is everything the HTML report shows.
type Report struct {
	Analysis *datamodel.Analysis
	// GanttSVG is the output of Gantt.WriteSVG (inlined as is).
	GanttSVG []byte
	// RawGanttSVG optionally is a Gantt of the same run on the raw clocks
	// (GanttOptions.Raw), shown below the corrected one.
	RawGanttSVG []byte
	// Instances are Figure-10 views (InstanceSVG output), e.g. the worst
	// instances, raw vs corrected.
	Instances []NamedSVG
	// Resolve names a call site (e.g. "solve at amg.c:120"); nil prints
	// the address.
	Resolve   func(pc uint64) string
	Generated time.Time
	Version   string
	// P2P optionally is the point-to-point analysis (merge.AnalyzeP2P),
	// shown as its own section.
	P2P *datamodel.P2PResult
	// RMA optionally is the one-sided analysis (rma.Stream), shown as
	// its own section when the run made one-sided calls.
	RMA *rma.Result
}

// NamedSVG is one inline SVG with its caption.
type NamedSVG struct {
	Name string
	SVG  []byte
}

// Compile-time checks that the stream consumers are sinks.
var (
	_ datamodel.Sink = (*Gantt)(nil)
	_ datamodel.Sink = (*CSV)(nil)
	_ datamodel.Sink = (*Perfetto)(nil)
)

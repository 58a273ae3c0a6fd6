package viz

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/postmortem"
	"github.com/gclock/gclock/merge/rma"
	"github.com/gclock/gclock/trace"
)

//go:embed report.html.tmpl
var reportTmplText string

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"dur":          fmtDur,
	"postmortem":   postmortem.Lines, // viz/postmortem.go, docs/guide/crash-hang.md
	"pct":          pct,
	"hex":          func(pc uint64) string { return "0x" + strconv.FormatUint(pc, 16) },
	"ns":           func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) },
	"time":         func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 MST") },
	"safeCSSColor": func(c string) template.CSS { return template.CSS(c) },
	"bar": func(part, whole float64) string { // width in % for inline bars
		if whole <= 0 || part <= 0 {
			return "0"
		}
		return strconv.FormatFloat(min(100, 100*part/whole), 'f', 1, 64)
	},
}).Parse(reportTmplText))

// htmlOp is one row of the per-op table.
type htmlOp struct {
	datamodel.OpSummary
	Color       string
	WaitPct     string
	LatencyText string // median, or "-" for ops without latency (rooted, scans)
}

// htmlInst is one row of the worst-instance table.
type htmlInst struct {
	datamodel.Instance
	Comm    string
	Lat     string
	Longest string
}

// htmlRank is one row of the rank table.
type htmlRank struct {
	datamodel.RankSummary
	MadeWaitMost, WaitedForMost string
}

// ReportExitProfiles bounds the exit-delay charts of the HTML report.
const ReportExitProfiles = 8

type htmlCallsite struct {
	datamodel.CallsiteSummary
	Name string
}

type htmlHist struct {
	Op             string
	ExitSkew, Wait template.HTML
}

type htmlSVG struct {
	Name string
	SVG  template.HTML
}

type htmlData struct {
	// Root causes (delay analysis) and the critical path.
	RootSummary string
	RootCauses  []RootCauseRow
	CritPath    []datamodel.CPRegion
	A           *datamodel.Analysis
	Title       string
	Hosts       int
	Span        float64
	Banners     []string
	Injected    bool
	Raw         bool
	Ops         []htmlOp
	TotalMPI    float64
	MaxWait     float64
	MaxLate     float64
	Callsites   []htmlCallsite
	Ranks       []htmlRank
	RanksNote   string // set when only some ranks are listed
	Worst       []htmlInst
	Gantt       template.HTML
	RawGantt    template.HTML
	Instances   []htmlSVG
	Hists       []htmlHist
	ExitDelays  []htmlSVG
	MoreExits   int
	Generated   time.Time
	Version     string
	Checks      []string
	Knots       string // KnotsLine
	Selective   string // SelectiveLine
	Bounds      string // BoundsLine
	CallsTotal  int
	P2P         *datamodel.P2PResult
	P2PRanks    []htmlP2PRank
	P2PNote     string
	RMA         *rma.Result
}

// MaxRankRows is how many ranks the HTML report's per-rank tables list in
// full; a larger run lists the RankRowsTop ranks that wait most and those
// that make others wait most (imbalance.json and p2p.json keep them all).
const (
	MaxRankRows = 256
	RankRowsTop = 100
)

// topRanks keeps, when there are more than MaxRankRows entries, the
// RankRowsTop largest by each key (the union, in the original order).
func topRanks[T any](all []T, keys ...func(T) float64) ([]T, bool) {
	if len(all) <= MaxRankRows {
		return all, false
	}
	keep := make([]bool, len(all))
	for _, key := range keys {
		idx := make([]int, len(all))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return key(all[idx[a]]) > key(all[idx[b]]) })
		for _, i := range idx[:RankRowsTop] {
			keep[i] = true
		}
	}
	var out []T
	for i, k := range keep {
		if k {
			out = append(out, all[i])
		}
	}
	return out, true
}

type htmlP2PRank struct {
	datamodel.P2PRank
	WaitedForMost string
}

// ReportTopN bounds the call-site and worst-instance tables of the HTML
// report.
const ReportTopN = 50

// WriteHTML writes the self-contained HTML report: run summary, loud
// banners when the clock was injected or left raw or violated the clock
// condition, clock quality, the Gantt chart, the instance views, the
// imbalance tables (per op, per call site, per rank, worst instances) and
// histograms of exit skew and wait per op. CSS and SVG are inline and no
// external URL is referenced; a few lines of optional JavaScript make the
// tables sortable. Everything from the trace is HTML-escaped by
// html/template; the SVGs passed in r must come from this package.
func WriteHTML(w io.Writer, r Report) error {
	a := r.Analysis
	if a == nil {
		return fmt.Errorf("viz: html report: nil analysis")
	}
	d := htmlData{
		A: a, Hosts: hostCount(a), Span: a.EndNS - a.StartNS, Banners: clockBanners(a),
		Injected: a.Clock.Injected, Raw: a.Clock.Mode == "raw",
		Gantt: template.HTML(r.GanttSVG), RawGantt: template.HTML(r.RawGanttSVG), Generated: r.Generated, Version: r.Version,
	}
	d.Title = "gclock report"
	if a.JobID != "" {
		d.Title += ": job " + a.JobID
	}
	for _, o := range a.Ops {
		d.TotalMPI += o.TotalTime
	}
	for _, o := range a.Ops {
		op, _ := trace.OpByName(o.Op)
		d.Ops = append(d.Ops, htmlOp{OpSummary: o, Color: opColor(op), WaitPct: pct(o.Wait.Total, o.TotalTime), LatencyText: latencyOrDash(o.Latency)})
		d.CallsTotal += o.Calls
	}
	sort.SliceStable(d.Ops, func(i, j int) bool { return d.Ops[i].Wait.Total > d.Ops[j].Wait.Total })
	cs := append([]datamodel.CallsiteSummary(nil), a.Callsites...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Wait.Total > cs[j].Wait.Total })
	for _, c := range cs[:min(ReportTopN, len(cs))] {
		name := callsiteName(c)
		if c.Function == "" && c.File == "" && r.Resolve != nil {
			if s := r.Resolve(c.Callsite); s != "" {
				name = s
			}
		}
		d.Callsites = append(d.Callsites, htmlCallsite{CallsiteSummary: c, Name: name})
	}
	for _, rk := range a.Ranks {
		d.Ranks = append(d.Ranks, htmlRank{RankSummary: rk, MadeWaitMost: rankAmounts(rk.MadeWait), WaitedForMost: rankAmounts(rk.WaitedFor)})
	}
	sort.SliceStable(d.Ranks, func(i, j int) bool { return d.Ranks[i].Rank < d.Ranks[j].Rank })
	for _, rk := range d.Ranks {
		d.MaxWait = max(d.MaxWait, rk.TotalWait)
		d.MaxLate = max(d.MaxLate, rk.TotalLateness)
	}
	if top, cut := topRanks(d.Ranks, func(r htmlRank) float64 { return r.TotalWait }, func(r htmlRank) float64 { return r.TotalLateness }); cut {
		d.RanksNote = fmt.Sprintf("%d of %d ranks listed: the %d that wait most and the %d that make others wait most; imbalance.json lists every rank.",
			len(top), len(d.Ranks), RankRowsTop, RankRowsTop)
		d.Ranks = top
	}
	if p := r.P2P; p != nil && (p.Messages > 0 || p.Requests > 0 || p.UnmatchedSends > 0 || p.UnmatchedRecvs > 0) {
		d.P2P = p
		for _, rk := range p.Ranks {
			d.P2PRanks = append(d.P2PRanks, htmlP2PRank{P2PRank: rk, WaitedForMost: rankAmounts(rk.WaitedFor)})
		}
		if top, cut := topRanks(d.P2PRanks, func(r htmlP2PRank) float64 { return r.WaitTimeNS }, func(r htmlP2PRank) float64 { return r.LateSenderNS }); cut {
			d.P2PNote = fmt.Sprintf("%d of %d ranks listed: the %d that wait longest for messages and the %d with the most late-sender wait; p2p.json lists every rank.",
				len(top), len(d.P2PRanks), RankRowsTop, RankRowsTop)
			d.P2PRanks = top
		}
	}
	if r.RMA != nil && r.RMA.Calls > 0 {
		d.RMA = r.RMA
	}
	for _, in := range a.Worst[:min(ReportTopN, len(a.Worst))] {
		h := htmlInst{Instance: in, Comm: CommName(in.CommID), Lat: "-", Longest: longestWait(in)}
		if merge.WaitClassOf(opOf(&in)).HasLatency() {
			h.Lat = fmtDur(in.Latency)
		}
		d.Worst = append(d.Worst, h)
	}
	for i, e := range a.ExitDelays {
		if i == ReportExitProfiles {
			d.MoreExits = len(a.ExitDelays) - i
			break
		}
		title := fmt.Sprintf("%s, comm %s (%d members), %d instances", e.Op, CommName(e.Comm), len(e.Ranks), e.Instances)
		d.ExitDelays = append(d.ExitDelays, htmlSVG{Name: title, SVG: template.HTML(ExitDelaySVG(e, title))})
	}
	for _, s := range r.Instances {
		d.Instances = append(d.Instances, htmlSVG{Name: s.Name, SVG: template.HTML(s.SVG)})
	}
	for _, h := range a.Hists {
		op, _ := trace.OpByName(h.Op)
		c := opColor(op)
		d.Hists = append(d.Hists, htmlHist{
			Op:       h.Op,
			ExitSkew: template.HTML(HistogramSVG(h.ExitSkew, h.Op+": exit skew per instance", c)),
			Wait:     template.HTML(HistogramSVG(h.Wait, h.Op+": wait per rank and instance", c)),
		})
	}
	for i, v := range a.Clock.CheckMaxNS {
		d.Checks = append(d.Checks, "full sync "+strconv.Itoa(i)+": "+fmtDur(v))
	}
	d.Knots = strings.TrimPrefix(KnotsLine(a.Clock), "knots: ")
	d.Selective = strings.TrimPrefix(SelectiveLine(a.Selective), "selective tracing: ")
	d.Bounds = strings.TrimPrefix(BoundsLine(a.Clock), "clock bounds ")
	if len(a.Clock.LooseKnots) > 0 {
		d.Bounds += "; " + strings.Join(a.Clock.LooseKnots, "; ")
	}
	if l := CLCLine(a.Clock); l != "" {
		d.Bounds += "; " + l
	}
	if rc := a.RootCauses; rc != nil {
		d.RootSummary = RootCauseSummary(rc)
		d.RootCauses = RootCauseRows(rc, RootCauseTopN)
		for i, r := range rc.CriticalPath.Regions {
			if i == ReportTopN {
				break
			}
			d.CritPath = append(d.CritPath, r)
		}
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	if err := reportTmpl.Execute(bw, d); err != nil {
		return fmt.Errorf("viz: html report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("viz: html report: writing: %w", err)
	}
	return nil
}

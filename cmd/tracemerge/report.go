package main

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/viz"
)

// writeText is the command's own imbalance report, used when the viz
// package does not provide one (viz.WriteImbalanceText not implemented).
func writeText(w io.Writer, an *datamodel.Analysis, top int) {
	ns := merge.FormatNS
	fmt.Fprintf(w, "gclock imbalance report: job %s, %d ranks, %d events, %d instances, span %s\n",
		oneLine(an.JobID), an.WorldSize, an.Events, an.Instances, ns(an.EndNS-an.StartNS))
	fmt.Fprintf(w, "clock: %s", an.Clock.Mode)
	if len(an.Clock.Algorithms) > 0 {
		fmt.Fprintf(w, ", sync %s", oneLine(strings.Join(an.Clock.Algorithms, " / ")))
	}
	for i, c := range an.Clock.CheckMaxNS {
		fmt.Fprintf(w, ", epoch %d self-check max |residual| %s", i, ns(c))
	}
	fmt.Fprintf(w, ", clock-condition violations %d", an.Clock.Violations)
	if an.Clock.Violations > 0 {
		fmt.Fprintf(w, " (max %s)", ns(an.Clock.MaxViolationNS))
	}
	fmt.Fprintln(w)
	for _, warn := range an.Clock.Warnings {
		fmt.Fprintf(w, "!!! %s\n", oneLine(warn))
	}
	if an.WindowFrom != 0 || an.WindowTo != 0 {
		fmt.Fprintf(w, "window: instances whose first enter lies in the selected --from/--to window\n")
	}

	fmt.Fprintf(w, "\nCollectives by time spent (wait per pattern: N×N ops wait for the last entrant, Bcast/Scatter non-roots for the root,\nthe Reduce/Gather root for the last contributor, Scan ranks for lower ranks, capped at the call; exit skew = last exit - first exit;\nlatency = first exit - last enter, N×N ops only):\n")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tinstances\tcalls\ttime in op\twait total\twait mean\twait p95\tentry skew p50\texit skew p50\texit skew p95\tlatency p50\tviolations\t")
	for _, o := range an.Ops {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", o.Op, o.Count, o.Calls, ns(o.TotalTime),
			ns(o.Wait.Total), ns(o.Wait.Mean), ns(o.Wait.P95), ns(o.EntrySkew.Median), ns(o.ExitSkew.Median), ns(o.ExitSkew.P95), latencyText(o.Latency), o.Violations)
	}
	tw.Flush()

	ranks := append([]datamodel.RankSummary(nil), an.Ranks...)
	sort.SliceStable(ranks, func(i, j int) bool { return ranks[i].TotalLateness > ranks[j].TotalLateness })
	fmt.Fprintf(w, "\nWho makes others wait (lateness = waits caused: as last entrant, late root, last contributor, latest lower rank):\n")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\thost\tlast arrivals\tlateness caused\tits own wait\ttime in MPI\tevents\tmade wait most\t")
	for i, r := range ranks {
		if i >= top {
			break
		}
		var who []string
		for _, m := range r.MadeWait {
			who = append(who, fmt.Sprintf("rank %d %s", m.Rank, ns(m.NS)))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%d\t%s\t\n", r.Rank, oneLine(r.Host), r.LastCount, ns(r.TotalLateness), ns(r.TotalWait), ns(r.TimeInMPI), r.Events, strings.Join(who, ", "))
	}
	tw.Flush()

	fmt.Fprintf(w, "\nCall sites by wait:\n")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "op\tcalls\twait total\twait mean\tcall site\t")
	for i, c := range an.Callsites {
		if i >= top {
			break
		}
		loc := c.Function
		if c.File != "" {
			loc += fmt.Sprintf(" (%s:%d)", c.File, c.Line)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", c.Op, c.Calls, ns(c.Wait.Total), ns(c.Wait.Mean), oneLine(loc))
	}
	tw.Flush()

	fmt.Fprintf(w, "\nWorst instances by entry skew (zoom with --instance COMM:SEQ):\n")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "instance\top\tentry skew\texit skew\tlatency\tlast rank\t")
	for _, in := range an.Worst {
		flag := ""
		if !in.Complete {
			flag = " (incomplete)"
		}
		fmt.Fprintf(tw, "%s:%d\t%s\t%s\t%s\t%s\t%d%s\t\n", commName(in.CommID), in.Seq, in.OpName, ns(in.EntrySkew), ns(in.ExitSkew), instLatencyText(in), in.LastRank, flag)
	}
	tw.Flush()

	for _, e := range an.ExitDelays {
		if e.Op != "MPI_Barrier" && e.Op != "MPI_Allreduce" {
			continue
		}
		fmt.Fprintf(w, "\nExit imbalance of %s on comm %s (%d instances): mean exit after the first rank leaves\n", e.Op, commName(e.Comm), e.Instances)
		for i, r := range e.Ranks {
			if i >= top {
				fmt.Fprintf(w, "  ... %d more ranks in imbalance.json (exit_delays)\n", len(e.Ranks)-top)
				break
			}
			fmt.Fprintf(w, "  rank %d: %s ± %s\n", r, ns(e.MeanNS[i]), ns(e.CI95NS[i]))
		}
		break
	}
	if len(an.Problems) > 0 {
		fmt.Fprintf(w, "\nProblems with the input (results use the intact data):\n")
		for _, p := range an.Problems {
			fmt.Fprintf(w, "  - %s\n", oneLine(p))
		}
	}
}

// oneLine keeps untrusted names from breaking the text layout.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' { // MPICH's "MPICH Version:\t4.0.2"
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// writeFallbackHTML is a minimal self-contained report used when
// viz.WriteHTML is not available: the text report and the inline SVGs.
func writeFallbackHTML(w io.Writer, an *datamodel.Analysis, gantt []byte, inst []viz.NamedSVG, text []byte) {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gclock report %s</title>\n", html.EscapeString(an.JobID))
	fmt.Fprint(w, "<style>body{font-family:sans-serif;margin:1em}pre{font-size:12px}.warn{color:#b00;font-weight:bold}</style></head><body>\n")
	fmt.Fprintf(w, "<h1>gclock run %s</h1>\n", html.EscapeString(an.JobID))
	for _, warn := range an.Clock.Warnings {
		fmt.Fprintf(w, "<p class=\"warn\">%s</p>\n", html.EscapeString(warn))
	}
	if len(gantt) > 0 {
		fmt.Fprint(w, "<h2>Gantt</h2>\n<div>")
		_, _ = w.Write(stripXMLDecl(gantt))
		fmt.Fprint(w, "</div>\n")
	}
	for _, n := range inst {
		fmt.Fprintf(w, "<h2>%s</h2>\n<div>", html.EscapeString(n.Name))
		_, _ = w.Write(stripXMLDecl(n.SVG))
		fmt.Fprint(w, "</div>\n")
	}
	fmt.Fprintf(w, "<h2>Imbalance</h2>\n<pre>%s</pre>\n</body></html>\n", html.EscapeString(string(text)))
}

func stripXMLDecl(b []byte) []byte {
	s := string(b)
	if strings.HasPrefix(s, "<?xml") {
		if i := strings.Index(s, "?>"); i >= 0 {
			return []byte(strings.TrimLeft(s[i+2:], "\r\n"))
		}
	}
	return b
}

// latencyText is the latency median, or "-" for ops without latency
// (rooted ops and scans; merge.WaitClass.HasLatency).
func latencyText(s datamodel.Stats) string {
	if s.Count == 0 {
		return "-"
	}
	return merge.FormatNS(s.Median)
}

func instLatencyText(in datamodel.Instance) string {
	if !merge.WaitClassOf(in.Op).HasLatency() {
		return "-"
	}
	return merge.FormatNS(in.Latency)
}

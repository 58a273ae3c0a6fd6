package postmortem

// The post-mortem as text.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// signalNames names the signals the recorder records (Linux numbers).
var signalNames = map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM",
	15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ"}

// SignalName names Linux signal sig ("SIGSEGV"), "signal N" otherwise.
func SignalName(sig int) string {
	if s, ok := signalNames[sig]; ok {
		return s
	}
	return "signal " + strconv.Itoa(sig)
}

// peerText is " from 1 tag 7" / " to 1 tag 7".
func peerText(c pmCall) string {
	var b strings.Builder
	dir := " from "
	if c.op.IsSend() {
		dir = " to "
	}
	p := func(r int) string {
		switch r {
		case -1:
			return "any source"
		case -2:
			return "MPI_PROC_NULL"
		}
		return strconv.Itoa(r)
	}
	if c.peer != math.MinInt {
		b.WriteString(dir + p(c.peer))
		if c.fl.Tag != trace.NoArg {
			if c.fl.Tag == -1 && !c.op.IsSend() {
				b.WriteString(" any tag")
			} else {
				fmt.Fprintf(&b, " tag %d", c.fl.Tag)
			}
		}
	}
	if c.peer2 != math.MinInt {
		b.WriteString(", to " + p(c.peer2))
		if c.fl.Tag2 != trace.NoArg {
			fmt.Fprintf(&b, " tag %d", c.fl.Tag2)
		}
	}
	return b.String()
}

// callText is "MPI_Recv from 1 tag 7" (withComm: "... on world").
func callText(c pmCall, withComm bool) string {
	s := c.op.String()
	if c.op.IsCollective() && c.comm != nil {
		return fmt.Sprintf("%s on %s, instance %d", s, commLabel(c.comm), c.fl.Seq)
	}
	s += peerText(c)
	if withComm && c.comm != nil && c.comm.Kind != "world" {
		s += " on " + commLabel(c.comm)
	}
	if c.fl.Requests > 0 {
		s += fmt.Sprintf(" (%d request%s)", c.fl.Requests, plural(int(c.fl.Requests), "", "s"))
	}
	return s
}

// Lines is the section as text lines (the text report and
// tracemerge info print them under "Post-mortem").
func Lines(pm *datamodel.PostMortem) []string {
	if pm == nil {
		return nil
	}
	var out []string
	if f := pm.First; f != nil {
		when := fmt.Sprintf("%.3f s", f.TimeS)
		if f.TimeS < 0 {
			when = "an unknown time"
		}
		if f.Inferred {
			when = "about " + when + " (inferred)"
		}
		out = append(out, fmt.Sprintf("first to end: rank %d at %s: %s", f.Rank, when, f.Text))
	} else {
		out = append(out, "first to end: not known (no rank recorded how it ended)")
	}
	if len(pm.EndGroups) > 0 {
		out = append(out, "how the ranks ended, in order:")
	}
	for _, g := range pm.EndGroups {
		when := ""
		switch {
		case g.FirstS < 0:
		case g.How == datamodel.EndKilled:
			when = fmt.Sprintf(" after %.3f s", g.FirstS)
		case fmt.Sprintf("%.3f", g.FirstS) == fmt.Sprintf("%.3f", g.LastS):
			when = fmt.Sprintf(" at %.3f s", g.FirstS)
		default:
			when = fmt.Sprintf(" at %.3f-%.3f s", g.FirstS, g.LastS)
		}
		txt := g.Text
		if len(g.Ranks) == 1 {
			for _, e := range pm.Ends {
				if e.Rank == g.Ranks[0] {
					txt = e.Text
				}
			}
		}
		out = append(out, fmt.Sprintf("  %s %s%s: %s", plural(len(g.Ranks), "rank", "ranks"), rundir.RankRanges(g.Ranks, ", "), when, txt))
	}
	if len(pm.Finalized) > 0 {
		out = append(out, fmt.Sprintf("  %s %s: MPI_Finalize", plural(len(pm.Finalized), "rank", "ranks"), rundir.RankRanges(pm.Finalized, ", ")))
	}
	if len(pm.InFlight) > 0 {
		out = append(out, "calls in flight when the ranks ended:")
		for _, g := range pm.InFlight {
			out = append(out, "  "+g.Text)
		}
	} else {
		out = append(out, "calls in flight when the ranks ended: none recorded")
	}
	for _, d := range pm.Deadlocks {
		out = append(out, "  "+d.Text)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

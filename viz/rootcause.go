package viz

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
)

// RootCauseMinShare is the share of all waiting below which a root cause
// is not listed in the reports (imbalance.json lists it).
const RootCauseMinShare = 0.01

// RootCauseTopN bounds the root causes and critical-path regions the
// reports list.
const RootCauseTopN = 15

// RootCauseRow is one listed root cause, formatted for the reports.
type RootCauseRow struct {
	Ranks, Region, Cost, Share, Direct, Propagated, Via, RunShare string
	Call                                                          bool
}

// RootCauseRows returns the root causes the reports list: share of all
// waiting ≥ RootCauseMinShare and a mean delay above the clock bound,
// largest cost first, at most n.
func RootCauseRows(rc *datamodel.RootCauseResult, n int) []RootCauseRow {
	if rc == nil {
		return nil
	}
	var rows []RootCauseRow
	for _, c := range rc.Causes {
		if len(rows) == n {
			break
		}
		if c.Share < RootCauseMinShare || c.BelowClockBound {
			continue
		}
		var via []string
		for _, v := range c.Via {
			via = append(via, fmt.Sprint(v.Rank))
		}
		row := RootCauseRow{Ranks: c.Ranks, Region: c.Region, Call: c.Call, Cost: fmtDur(c.CostNS),
			Share: pct(c.CostNS, rc.TotalWaitNS), Direct: fmtDur(c.DirectNS), Propagated: fmtDur(c.PropagatedNS),
			Via: strings.Join(via, ","), RunShare: pct(c.CostNS, rc.RankTimeNS)}
		if row.Via == "" {
			row.Via = "-"
		}
		rows = append(rows, row)
	}
	return rows
}

// RootCauseSummary is the sentence above the root-cause table.
func RootCauseSummary(rc *datamodel.RootCauseResult) string {
	if rc == nil {
		return ""
	}
	if rc.WaitStates == 0 {
		return "no rank waited for another: no root cause."
	}
	kinds := fmt.Sprintf("collective %s, Late Sender %s, Late Receiver %s", fmtDur(rc.CollectiveWaitNS), fmtDur(rc.LateSenderNS), fmtDur(rc.LateReceiverNS))
	if rc.WaitAtFenceNS > 0 {
		kinds += ", Wait at Fence " + fmtDur(rc.WaitAtFenceNS)
	}
	if rc.LatePostNS > 0 {
		kinds += ", Late Post " + fmtDur(rc.LatePostNS)
	}
	if rc.EarlyWaitNS > 0 {
		kinds += ", Early Wait " + fmtDur(rc.EarlyWaitNS)
	}
	s := fmt.Sprintf("%s of waiting in %d wait states (%s of the ranks' time; %s); %s attributed to delays",
		fmtDur(rc.TotalWaitNS), rc.WaitStates, pct(rc.TotalWaitNS, rc.RankTimeNS), kinds, pct(rc.AttributedNS+rc.SmallNS, rc.TotalWaitNS))
	var un []string
	if rc.NoDelayNS > 0 {
		un = append(un, fmtDur(rc.NoDelayNS)+" without a delay of the waited-for rank (time inside MPI, clock error)")
	}
	if rc.UnresolvedNS > 0 {
		un = append(un, fmtDur(rc.UnresolvedNS)+" passed on by wait states not yet resolved or beyond the history kept")
	}
	if len(un) > 0 {
		s += "; unattributed: " + strings.Join(un, ", ")
	}
	return s + "."
}

// writeRootCauses writes the "Root causes of waiting" and critical-path
// sections of the text report.
func writeRootCauses(w *bufio.Writer, a *datamodel.Analysis) {
	rc := a.RootCauses
	if rc == nil {
		return
	}
	fmt.Fprintf(w, "\nRoot causes of waiting (delay analysis, Böhme et al.): %s\n", term(RootCauseSummary(rc)))
	rows := RootCauseRows(rc, RootCauseTopN)
	if len(rows) == 0 && rc.WaitStates > 0 {
		fmt.Fprintf(w, "  no single delay causes %s or more of the waiting (above the clock bound): the waiting is spread thinly.\n", pct(RootCauseMinShare, 1))
	}
	if len(rows) > 0 {
		t := newTable("llrrrrrl", "ranks", "region (where the delaying ranks spend the excess time)", "cost", "share of waiting", "direct", "propagated", "share of run", "propagated via ranks")
		for _, r := range rows {
			t.row(r.Ranks, term(r.Region), r.Cost, r.Share, r.Direct, r.Propagated, r.RunShare, r.Via)
		}
		t.write(w)
	}
	cp := rc.CriticalPath
	if cp.LengthNS <= 0 || len(cp.Regions) == 0 {
		return
	}
	fmt.Fprintf(w, "\nCritical path (%s, ends on rank %d): the regions that set the run's length; \"gain if balanced\" is the critical-path imbalance (path time − mean per rank)\n",
		fmtDur(cp.LengthNS), cp.EndRank)
	t := newTable("lrrrrl", "region", "on the path", "share", "mean per rank", "gain if balanced", "ranks on the path")
	for i, r := range cp.Regions {
		if i == ReportTopN {
			break
		}
		t.row(term(r.Region), fmtDur(r.PathNS), pct(r.PathNS, cp.LengthNS), fmtDur(r.MeanNS), fmtDur(r.ImbalanceNS), r.Ranks)
	}
	t.write(w)
}

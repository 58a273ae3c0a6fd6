package main

// The one-sided part of the report (issue 11 §4, docs/explanation/rma.md).

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/rma"
)

// rmaOptions configures the one-sided analysis; from/to bound (absolute
// global ns, to 0 = none) the transfers kept for drawing.
func rmaOptions(from, to float64) rma.Options {
	return rma.Options{KeepTransfers: maxMessageList, From: from, To: to}
}

// writeRMAText appends the one-sided section to the text report.
func writeRMAText(w io.Writer, r *rma.Result, top int) {
	if r == nil || r.Calls == 0 {
		return
	}
	fmt.Fprintf(w, "\nOne-sided: %d calls, %d transfers (%d bytes put or accumulated, %d bytes fetched) on %d windows; %d fence instances (%d incomplete), %d access and %d exposure epochs (%d unmatched)\n",
		r.Calls, r.Transfers, r.Put, r.Got, len(r.Windows), r.FenceInstances, r.FenceIncomplete, r.AccessEpochs, r.ExposureEpochs, r.Unmatched)
	for _, p := range []rma.Wait{r.WaitAtFence, r.LatePost, r.EarlyWait} {
		fmt.Fprintf(w, "%s: %d waits, total %s, largest %s\n", p.Pattern, p.Count, merge.FormatNS(p.TotalNS), merge.FormatNS(p.MaxNS))
	}
	fmt.Fprintln(w, "(Wait at Fence: last member's entry - my entry in MPI_Win_fence; Late Post: origin's MPI_Win_start/complete before its target's MPI_Win_post; Early Wait: target's MPI_Win_wait before its origins' last MPI_Win_complete)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\ttransfers\tbytes put\tbytes got\ttime in RMA calls\tin synchronisation\tin lock/unlock/flush\tWait at Fence\tLate Post\tEarly Wait")
	for i, rk := range r.Ranks {
		if i >= max(top, 64) {
			fmt.Fprintf(tw, "... %d more ranks in rma.json\n", len(r.Ranks)-i)
			break
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", rk.Rank, rk.Transfers, rk.Put, rk.Got,
			merge.FormatNS(rk.TimeNS), merge.FormatNS(rk.SyncNS), merge.FormatNS(rk.LockNS),
			merge.FormatNS(rk.FenceWaitNS), merge.FormatNS(rk.LatePostNS), merge.FormatNS(rk.EarlyWaitNS))
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "window\tkind\tmembers\tfences\ttransfers\tbytes put\tbytes got\tWait at Fence\tLate Post\tEarly Wait")
	for _, win := range r.Windows {
		fmt.Fprintf(tw, "%#x\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", win.ID, win.Kind, win.Members, win.Fences, win.Transfers, win.Put, win.Got,
			merge.FormatNS(win.FenceWaitNS), merge.FormatNS(win.LatePostNS), merge.FormatNS(win.EarlyWaitNS))
	}
	tw.Flush()
}

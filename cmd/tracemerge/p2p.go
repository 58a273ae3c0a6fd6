package main

// The point-to-point part of the report (issue 7, docs/explanation/p2p.md).

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/callsite"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
)

// maxMessageList bounds the messages kept for Gantt lines and Perfetto
// flows.
const maxMessageList = 200_000

// p2pOptions configures the point-to-point analysis; from/to bound
// (absolute global ns, to 0 = none) the messages kept for drawing.
func p2pOptions(mode correct.ClockMode, res *callsite.Resolver, top int, from, to float64, rendezvous uint64) merge.P2POptions {
	return merge.P2POptions{Clock: mode, TopN: top, Resolve: res,
		KeepMessages: maxMessageList, From: from, To: to, RendezvousBytes: rendezvous}
}

// p2pClockWarning is the clock-quality line for point-to-point
// clock-condition violations ("" when there are none).
func p2pClockWarning(p *datamodel.P2PResult) string {
	if p == nil || p.Violations == 0 {
		return ""
	}
	return fmt.Sprintf("%d point-to-point clock-condition violations (a receive completed before its send started), largest %s",
		p.Violations, merge.FormatNS(p.MaxViolationNS))
}

// writeP2PText appends the point-to-point section to the text report.
// clk flags waits within the clocks' bounds (nil: no flags).
func writeP2PText(w io.Writer, p *datamodel.P2PResult, top int, clk *datamodel.ClockQuality) {
	if p == nil || (p.Messages == 0 && p.Requests == 0 && p.UnmatchedSends == 0 && p.UnmatchedRecvs == 0) {
		return
	}
	fmt.Fprintf(w, "\nPoint-to-point: %d messages matched (%d bytes), %d unmatched sends, %d unmatched receives, %d unresolved wildcard receives; %d requests (%d never completed, %d cancelled), %d unsuccessful polls\n",
		p.Messages, p.Bytes, p.UnmatchedSends, p.UnmatchedRecvs, p.Unresolved, p.Requests, p.Uncompleted, p.Cancelled, p.Polls)
	if p.ReusedRequestIDs > 0 {
		fmt.Fprintf(w, "request ids: %d starts reused the id of a request still open (more than 4,294,967,295 requests on a rank); told apart by communicator, peer and tag\n", p.ReusedRequestIDs)
	}
	fmt.Fprintf(w, "clock condition: %d receives completed before their send started", p.Violations)
	if p.Violations > 0 {
		fmt.Fprintf(w, " (largest %s)", merge.FormatNS(p.MaxViolationNS))
	}
	fmt.Fprintln(w)
	pairs := func(title string, pw datamodel.PairWaits, culprit, victim string) {
		fmt.Fprintf(w, "\n%s: %d waits, total %s, largest %s\n", title, pw.Count, merge.FormatNS(pw.TotalNS), merge.FormatNS(pw.MaxNS))
		if len(pw.Pairs) == 0 {
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\t%s\twaits\twait total\n", culprit, victim)
		for i, pr := range pw.Pairs {
			if i >= top {
				break
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\n", pr.Culprit, pr.Victim, pr.Count, merge.FormatNS(pr.NS))
		}
		tw.Flush()
	}
	pairs("Late Sender (receiver waits for a send that started later; per receive, so the waits of receives one Waitall completes overlap)", p.LateSender, "late sender", "waiting receiver")
	pairs("Late Receiver (synchronous sender waits for the receive to be posted)", p.LateReceiver, "late receiver", "waiting sender")

	fmt.Fprintln(w, "\nWaiting for messages per rank (completion calls, blocking receives, unsuccessful polls)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tsends\trecvs\tcompletion calls\twait time\tlate-sender wait (per call)\twaited most for (slowest neighbour per call)")
	for _, r := range p.Ranks {
		var wf []string
		for _, a := range r.WaitedFor {
			wf = append(wf, fmt.Sprintf("rank %d %s", a.Rank, merge.FormatNS(a.NS)))
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Rank, r.Sends, r.Recvs, r.WaitCalls,
			merge.FormatNS(r.WaitTimeNS), merge.FormatNS(r.LateSenderNS), p2pOrDash(strings.Join(wf, ", ")))
	}
	tw.Flush()

	if len(p.Sites) > 0 {
		fmt.Fprintf(w, "\nCompletion call sites (top %d by time)\n", len(p.Sites))
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "call site\top\tcalls\tunsuccessful polls\ttime\tranks")
		for _, s := range p.Sites {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\n", s.Site, s.Op, s.Calls, s.Polls, merge.FormatNS(s.TimeNS), s.Ranks)
		}
		tw.Flush()
	}
	if len(p.Worst) > 0 {
		flagged := 0
		fmt.Fprintln(w, "\nWorst late senders (by the receiver's wait)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "sender\treceiver\ttag\tbytes\tsend\twaited in\twait")
		for i, m := range p.Worst {
			if i >= top {
				break
			}
			wait := merge.FormatNS(m.WaitNS)
			if clk != nil && clk.BelowBound(m.WaitNS, m.Src, m.Dst) {
				wait = "≲" + wait
				flagged++
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%s\t%s\n", m.Src, m.Dst, m.Tag, m.Bytes, m.SendOp, m.RecvOp, wait)
		}
		tw.Flush()
		if flagged > 0 {
			fmt.Fprintln(w, "≲: wait within the two ranks' clock bounds (happened-before facts): not a finding")
		}
	}
	if len(p.NBC) > 0 {
		fmt.Fprintln(w, "\nNonblocking collectives (instances matched by communicator and sequence number)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "op\tinstances\tcomplete\tstart skew p95\twait total\twait max")
		for _, n := range p.NBC {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", n.Op, n.Instances, n.Complete, merge.FormatNS(n.StartSkew.P95),
				merge.FormatNS(n.Wait.Total), merge.FormatNS(n.Wait.Max))
		}
		tw.Flush()
	}
}

func p2pOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

package viz

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// TextTopN is how many call sites, ranks and instances the terminal report
// lists in each table.
const TextTopN = 10

// WriteImbalanceText writes the imbalance report users read in a terminal:
// a clock-trust banner, then where the time goes (per op), where the waits
// are caused (call sites), who waits and who makes others wait (ranks) and
// the worst instances. Strings from the trace are stripped of control
// characters so a hostile host name cannot drive the terminal.
func WriteImbalanceText(w io.Writer, a *datamodel.Analysis) error {
	if a == nil {
		return fmt.Errorf("viz: imbalance report: nil analysis")
	}
	bw := bufio.NewWriter(w)
	writeImbalance(bw, a)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("viz: imbalance report: %w", err)
	}
	return nil
}

// term strips terminal control characters (ESC, CSI, BEL, ...) from s.
func term(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

func pct(part, whole float64) string {
	if whole <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 1, 64) + "%"
}

// callsiteName formats a call site summary as "function (file:line)".
func callsiteName(c datamodel.CallsiteSummary) string {
	s := c.Function
	if c.File != "" {
		loc := c.File
		if c.Line > 0 {
			loc += ":" + strconv.Itoa(c.Line)
		}
		if s == "" {
			s = loc
		} else {
			s += " (" + loc + ")"
		}
	}
	if s == "" {
		s = "0x" + strconv.FormatUint(c.Callsite, 16)
		if c.Object != "" {
			s += " in " + c.Object
		}
	}
	return s
}

func hostCount(a *datamodel.Analysis) int {
	hs := map[string]bool{}
	for _, r := range a.Ranks {
		if r.Host != "" {
			hs[r.Host] = true
		}
	}
	return len(hs)
}

// clockBanners returns the loud warnings about the clock, most severe first.
func clockBanners(a *datamodel.Analysis) []string {
	var b []string
	c := a.Clock
	if c.Injected {
		spec := c.InjectSpec
		if spec == "" {
			spec = "(no spec recorded)"
		}
		b = append(b, "CLOCK ERROR WAS INJECTED: timestamps were deliberately faked by the test injection ("+spec+"). These results test gclock; they do not measure this machine.")
	}
	if c.Mode == "raw" {
		b = append(b, "RAW CLOCKS: times were NOT corrected to a global clock; cross-rank skews and waits include clock offsets.")
	}
	if c.Violations > 0 {
		b = append(b, fmt.Sprintf("%d clock-condition violations (a rank left a collective before a rank whose data it needs entered, by up to %s): cross-rank times are off by at least that much.",
			c.Violations, fmtDur(c.MaxViolationNS)))
	}
	return b
}

func writeImbalance(w *bufio.Writer, a *datamodel.Analysis) {
	job := a.JobID
	if job == "" {
		job = "?"
	}
	hosts := "hosts"
	if hostCount(a) == 1 {
		hosts = "host"
	}
	fmt.Fprintf(w, "gclock imbalance report: job %s, %d ranks on %d %s, %d events, span %s\n",
		term(job), a.WorldSize, hostCount(a), hosts, a.Events, fmtDur(a.EndNS-a.StartNS))
	writePostMortemText(w, a.PostMortem) // postmortem.go
	if bs := clockBanners(a); len(bs) > 0 {
		line := strings.Repeat("!", 78)
		fmt.Fprintln(w, line)
		for _, b := range bs {
			fmt.Fprintf(w, "!!! %s\n", term(b))
		}
		fmt.Fprintln(w, line)
	}
	c := a.Clock
	fmt.Fprintf(w, "clock: mode %s", term(orDash(c.Mode)))
	if len(c.Algorithms) > 0 {
		fmt.Fprintf(w, ", sync %s", term(strings.Join(c.Algorithms, ", ")))
	}
	if len(c.CheckMaxNS) > 0 {
		var s []string
		for _, v := range c.CheckMaxNS {
			s = append(s, fmtDur(v))
		}
		fmt.Fprintf(w, ", self-check max |offset| per epoch %s", strings.Join(s, " / "))
	}
	fmt.Fprintf(w, ", clock-condition violations %d\n", c.Violations)
	if line := KnotsLine(c); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	if line := BoundsLine(c); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	for _, l := range c.LooseKnots {
		fmt.Fprintf(w, "clock knots: %s\n", term(l))
	}
	if line := CLCLine(c); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	if line := SelectiveLine(a.Selective); line != "" {
		fmt.Fprintf(w, "%s\n", term(line))
	}
	for _, s := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", term(s))
	}
	for _, s := range a.Problems {
		fmt.Fprintf(w, "problem: %s\n", term(s))
	}
	writeRootCauses(w, a)

	// Per op, by total wait.
	ops := append([]datamodel.OpSummary(nil), a.Ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Wait.Total > ops[j].Wait.Total })
	var totalMPI float64
	for _, o := range ops {
		totalMPI += o.TotalTime
	}
	fmt.Fprintf(w, "\nPer operation (by total wait)\n")
	t := newTable("llrrrrrrrrrrrr", "op", "wait pattern", "instances", "calls", "time in op", "share of MPI", "wait total", "wait %",
		"wait mean", "wait p95", "entry skew p95", "exit skew p95", "latency median", "violations")
	for _, o := range ops {
		mean := fmtDur(o.Wait.Mean)
		if o.BelowClockBound {
			mean = "≲" + mean // within the clocks' bound: not a finding
		}
		t.row(term(o.Op), term(orDash(o.WaitClass)), itoa(o.Count), itoa(o.Calls), fmtDur(o.TotalTime), pct(o.TotalTime, totalMPI),
			fmtDur(o.Wait.Total), pct(o.Wait.Total, o.TotalTime), mean, fmtDur(o.Wait.P95),
			fmtDur(o.EntrySkew.P95), fmtDur(o.ExitSkew.P95), latencyOrDash(o.Latency), itoa(o.Violations))
	}
	t.write(w)
	fmt.Fprint(w, WaitLegend)
	var zero []string
	for _, o := range ops {
		if o.ZeroByte > 0 {
			zero = append(zero, fmt.Sprintf("%s %d of %d", term(o.Op), o.ZeroByte, o.Count))
		}
	}
	if len(zero) > 0 {
		fmt.Fprintf(w, "instances moving no data (count 0): %s\n", strings.Join(zero, ", "))
	}
	if b := a.Clock.FlagBoundNS(); b >= 0 {
		var below []string
		for _, o := range ops {
			if o.BelowClockBound {
				below = append(below, term(o.Op))
			}
		}
		if len(below) > 0 {
			fmt.Fprintf(w, "≲: mean wait within twice the clocks' typical bound (±%s): below what the clocks resolve, not a finding (%s)\n",
				fmtDur(b), strings.Join(below, ", "))
		}
	}

	// Call sites, by total wait.
	cs := append([]datamodel.CallsiteSummary(nil), a.Callsites...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Wait.Total > cs[j].Wait.Total })
	fmt.Fprintf(w, "\nCall sites where ranks wait (top %d of %d by total wait)\n", min(TextTopN, len(cs)), len(cs))
	t = newTable("llrrrrr", "call site", "op", "calls", "time in op", "wait total", "wait mean", "wait p95")
	for _, c := range cs[:min(TextTopN, len(cs))] {
		t.row(term(truncate(callsiteName(c), 60)), term(c.Op), itoa(c.Calls),
			fmtDur(c.TotalTime), fmtDur(c.Wait.Total), fmtDur(c.Wait.Mean), fmtDur(c.Wait.P95))
	}
	t.write(w)

	// Ranks: who waits, who makes others wait.
	rs := append([]datamodel.RankSummary(nil), a.Ranks...)
	writeRanks := func(title string, key func(r datamodel.RankSummary) float64) {
		sort.SliceStable(rs, func(i, j int) bool { return key(rs[i]) > key(rs[j]) })
		n := 0
		for n < len(rs) && n < TextTopN && key(rs[n]) > 0 {
			n++
		}
		fmt.Fprintf(w, "\n%s (top %d of %d ranks)\n", title, n, len(rs))
		t := newTable("rlrrrrrrrll", "rank", "host", "events", "time in MPI", "wait total", "wait % of MPI", "made others wait", "caused waits in", "times last",
			"made wait most", "waited for most")
		for _, r := range rs[:n] {
			t.row(itoa(int(r.Rank)), term(truncate(orDash(r.Host), 30)), itoa(r.Events),
				fmtDur(r.TimeInMPI), fmtDur(r.TotalWait), pct(r.TotalWait, r.TimeInMPI), fmtDur(r.TotalLateness), itoa(r.CausedCount), itoa(r.LastCount),
				rankAmounts(r.MadeWait), rankAmounts(r.WaitedFor))
		}
		t.write(w)
	}
	writeRanks("Who waits: total wait in collectives (patterns above)",
		func(r datamodel.RankSummary) float64 { return r.TotalWait })
	writeRanks("Who makes others wait: waits this rank caused (last entrant, late root, last contributor, latest lower rank)",
		func(r datamodel.RankSummary) float64 { return r.TotalLateness })

	// Worst instances.
	fmt.Fprintf(w, "\nWorst instances (by entry skew; in a rooted op a large skew need not mean waiting: see the longest wait)\n")
	t = newTable("lrrrrrrrrll", "op", "comm", "instance", "members", "entry skew", "exit skew", "latency", "last rank", "clock violation",
		"longest wait (rank, site, caused by)", "last rank's site")
	for _, in := range a.Worst[:min(TextTopN, len(a.Worst))] {
		v := "-"
		if in.Violation > 0 {
			v = fmtDur(in.Violation)
		}
		lat := "-"
		if merge.WaitClassOf(opOf(&in)).HasLatency() {
			lat = fmtDur(in.Latency)
		}
		t.row(term(orDash(in.OpName)), CommName(in.CommID), itoa(int(in.Seq)), itoa(len(in.Ranks)),
			fmtDur(in.EntrySkew), fmtDur(in.ExitSkew), lat, itoa(int(in.LastRank)), v,
			term(truncate(longestWait(in), 70)), term(truncate(orDash(in.LastSite), 40)))
	}
	t.write(w)
}

// WaitLegend explains the wait and latency columns (text report).
const WaitLegend = `wait: N×N ops (Barrier, Allreduce, Allgather(v), Alltoall(v,w), Reduce_scatter) wait for the last member to enter;
      late broadcast (Bcast, Scatter(v)): non-roots wait for the root; early reduce (Reduce, Gather(v)): the root waits
      for the last non-root; Scan/Exscan: a rank waits for the latest lower rank. Every wait is capped at the rank's own
      time in the call. Only where data flows: a rank receiving no bytes waits for nobody and one sending none makes
      nobody wait (Barrier excepted), so count-0 calls have no wait and no clock-condition violation. latency = first
      exit - last enter, for N×N ops only ("-" otherwise: a rooted op may release a member before another enters).
`

// latencyOrDash prints the latency median, or "-" when the op has none.
func latencyOrDash(s datamodel.Stats) string {
	if s.Count == 0 {
		return "-"
	}
	return fmtDur(s.Median)
}

// rankAmounts prints "3: 1.2 ms, 5: 80 µs".
func rankAmounts(l []datamodel.RankAmount) string {
	if len(l) == 0 {
		return "-"
	}
	parts := make([]string, len(l))
	for i, m := range l {
		parts[i] = itoa(int(m.Rank)) + ": " + fmtDur(m.NS)
	}
	return strings.Join(parts, ", ")
}

// longestWait describes the member of in that waited longest.
func longestWait(in datamodel.Instance) string {
	if in.MaxWaitRank < 0 {
		return "-"
	}
	w := 0.0
	for i, r := range in.Ranks {
		if r == in.MaxWaitRank && i < len(in.Wait) {
			w = in.Wait[i]
		}
	}
	s := "rank " + itoa(int(in.MaxWaitRank)) + " " + fmtDur(w)
	if in.MaxWaitSite != "" {
		s += " at " + in.MaxWaitSite
	}
	if in.CauseRank >= 0 {
		s += " for rank " + itoa(int(in.CauseRank))
	}
	return s
}

// CommName names a communicator id: "world" for MPI_COMM_WORLD, a short
// hex id otherwise (the ids of derived communicators are 64-bit hashes).
func CommName(id uint64) string {
	if id == trace.CommWorldID {
		return "world"
	}
	return fmt.Sprintf("%#x", id)
}

func itoa(i int) string { return strconv.Itoa(i) }

// table is a plain-text table with per-column alignment ('l' or 'r').
type table struct {
	align string
	rows  [][]string
}

func newTable(align string, header ...string) *table {
	return &table{align: align, rows: [][]string{header}}
}

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) {
	if len(t.rows) == 1 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	width := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var sb strings.Builder
	for _, r := range t.rows {
		sb.Reset()
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				sb.WriteString("  ")
			}
			if i < len(t.align) && t.align[i] == 'r' {
				sb.WriteString(pad + c)
			} else if i == len(r)-1 {
				sb.WriteString(c)
			} else {
				sb.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, sb.String())
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// CLCLine states what the controlled-logical-clock repair of --clock
// refined did ("" when it did nothing).
func CLCLine(c datamodel.ClockQuality) string {
	if c.CLCRepairs == 0 {
		return ""
	}
	return fmt.Sprintf("clock repair (controlled logical clock): the refined timeline had %d clock-condition violations; %d repairs on %d ranks moved events forward by up to %s, local intervals kept within %.0f%%; %d collective violations left (point-to-point: see that section)",
		c.CLCBefore, c.CLCRepairs, c.CLCRanks, fmtDur(c.CLCMaxNS), merge.CLCRate*100, c.Violations)
}

// BoundsLine states the happened-before bounds of the corrected clocks
// and what --clock refined moved ("" without facts).
func BoundsLine(c datamodel.ClockQuality) string {
	sync := ""
	switch {
	case c.SyncBoundNS == 0:
		// Every rank's path to rank 0 has no ping-pong on it: the ranks
		// read rank 0's own clock (one host, no emulated nodes).
		sync = "sync paths: none, every rank reads rank 0's clock (no offset to measure)"
	case c.SyncBoundNS > 0:
		sync = fmt.Sprintf("sync paths (SKaMPI intervals to rank 0, at the knots) ±%s at most", fmtDur(c.SyncBoundNS))
	}
	if c.BoundRanks == 0 {
		if sync == "" {
			return ""
		}
		return "clock bounds (" + sync + "): no happened-before facts"
	}
	s := fmt.Sprintf("clock bounds (happened-before facts of N×N collectives with rank 0): %d ranks, typical ±%s, loosest ±%s",
		c.BoundRanks, fmtDur(c.TypicalBoundNS), fmtDur(c.BoundNS))
	if c.BoundOutside > 0 {
		s += fmt.Sprintf("; the clock breaks the facts in %d cells", c.BoundOutside)
		if c.Mode != "refined" {
			s += " (--clock refined moves it into them)"
		}
	}
	if c.Contradictions > 0 {
		s += fmt.Sprintf("; %d cells contradictory (violations remain)", c.Contradictions)
	}
	if c.RefineMoved > 0 {
		s += fmt.Sprintf("; refined: %d ranks moved, by up to %s", c.RefineMoved, fmtDur(c.RefineMaxNS))
	}
	if c.RefineLimited > 0 {
		s += fmt.Sprintf("; refined: %d places would need the clock's rate to change by more than %.0f%% (limited, violations may remain)",
			c.RefineLimited, merge.RefineMaxRate*100)
	}
	if sync != "" {
		s += "; " + sync
	}
	return s
}

// SelectiveLine says what GCLOCK_OPS and MPI_Pcontrol left out of the
// trace ("" when nothing was).
func SelectiveLine(s *datamodel.SelectiveTracing) string {
	if s == nil {
		return ""
	}
	var parts []string
	switch {
	case s.OpsError != "":
		parts = append(parts, "GCLOCK_OPS not understood, every operation recorded ("+s.OpsError+")")
	case len(s.Excluded) > 0:
		ex := s.Excluded
		more := ""
		if len(ex) > 12 {
			ex, more = ex[:12], fmt.Sprintf(" and %d more", len(s.Excluded)-12)
		}
		parts = append(parts, fmt.Sprintf("GCLOCK_OPS=%s: %d operations not recorded (%s%s)", s.OpsSpec, len(s.Excluded), strings.Join(ex, ", "), more))
	}
	if s.Pauses > 0 {
		p := fmt.Sprintf("recording paused by MPI_Pcontrol(0) on %d rank(s): %d interval(s), %s in all, longest %s",
			s.PausedRanks, s.Pauses, fmtDur(s.PausedNS), fmtDur(s.LongestNS))
		if s.OpenAtEnd > 0 {
			p += fmt.Sprintf(" (%d never resumed)", s.OpenAtEnd)
		}
		parts = append(parts, p)
	}
	return "selective tracing: " + strings.Join(parts, "; ") + "; waits, imbalance and message matching see only what was recorded"
}

// KnotsLine says how many sync epochs (knots of the offset curve) the run
// has and what their largest gap means for accuracy ("" without epochs).
func KnotsLine(c datamodel.ClockQuality) string {
	if c.Knots == 0 {
		return ""
	}
	s := fmt.Sprintf("knots: %d sync epochs (%d resync epochs between MPI_Init and MPI_Finalize)", c.Knots, c.ResyncEpochs)
	if c.MaxKnotGapNS > 0 {
		// A frequency change of 1 ppm inside a gap G bends the clock off
		// the straight line between the knots by up to 1e-6·G/4.
		s += fmt.Sprintf(", largest gap %s: a clock whose frequency changes by 1 ppm between two knots is off by up to %s there",
			fmtDur(c.MaxKnotGapNS), fmtDur(c.MaxKnotGapNS*1e-6/4))
	}
	return s
}

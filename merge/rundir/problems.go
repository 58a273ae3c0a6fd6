package rundir

import (
	"fmt"
	"math"
	"strings"
)

// A job killed at its time limit (the common end of a long HPC run) leaves
// every rank without a footer, and tracemerge said so once per rank: 2,000
// ranks, 4,078 lines of report and warnings, 2,053 of `tracemerge info`
// (now 80 and 54). The per-rank problems of the rank files' metadata are notes
// whose kind says what is wrong; noteLines says each kind once for all the
// ranks it concerns.

type noteKind int

const (
	noteText     noteKind = iota // said as it is, rank by rank
	noteNoFooter                 // no footer, no live sidecar
	noteAbnormal                 // no footer, events recovered from the live sidecar
	noteDropped                  // the recorder dropped events
	noteNoEpoch                  // no sync epoch
)

// RankNote is one thing a rank file's metadata (or the analysis, of a
// rank) says is wrong: a rank and its words.
type RankNote struct {
	Rank int
	Text string // the words for this rank alone
	kind noteKind
	n    int64   // noteAbnormal: events recovered; noteDropped: events dropped
	last float64 // noteAbnormal: the last recorded call's end after MPI_Init (s); NaN unknown
}

// maxRankRanges bounds the ranges a grouped line lists.
const maxRankRanges = 16

// noteLines words notes (in rank order): a kind that concerns one rank in
// that rank's words, a kind that concerns several in one line naming them
// all, where the first of them stood.
func noteLines(notes []RankNote) []string {
	byKind := map[noteKind][]RankNote{}
	for _, n := range notes {
		if n.kind != noteText {
			byKind[n.kind] = append(byKind[n.kind], n)
		}
	}
	var out []string
	said := map[noteKind]bool{}
	for _, n := range notes {
		g := byKind[n.kind]
		switch {
		case n.kind == noteText || len(g) == 1:
			out = append(out, n.Text)
		case !said[n.kind]:
			said[n.kind] = true
			out = append(out, groupLine(n.kind, g))
		}
	}
	return out
}

// groupLine says one kind of note for the ranks of g (two or more).
func groupLine(kind noteKind, g []RankNote) string {
	ranks := make([]int, len(g))
	var sum, lo, hi int64 = 0, math.MaxInt64, 0
	first, last := math.Inf(1), math.Inf(-1)
	for i, n := range g {
		ranks[i] = n.Rank
		sum += n.n
		lo, hi = min(lo, n.n), max(hi, n.n)
		if !math.IsNaN(n.last) {
			first, last = min(first, n.last), max(last, n.last)
		}
	}
	who := fmt.Sprintf("%d ranks (%s)", len(g), rankList(ranks))
	switch kind {
	case noteNoFooter:
		return who + ": no footer: they did not finish cleanly (no live sidecar: events after their last flush are lost)"
	case noteAbnormal:
		s := fmt.Sprintf("%s ended abnormally (no footer): %d events recovered from their live sidecars", who, sum)
		if !math.IsInf(first, 1) {
			s += fmt.Sprintf(", the last recorded calls ending %.3f to %.3f s after their MPI_Init", first, last)
		}
		return s
	case noteDropped:
		return fmt.Sprintf("%s: the recorder dropped %d events (buffer exhaustion; %d to %d per rank)", who, sum, lo, hi)
	default: // noteNoEpoch
		return who + ": no sync epoch: their times are not corrected (raw)"
	}
}

// rankList is RankRanges(ranks, ", ") up to maxRankRanges ranges.
func rankList(ranks []int) string {
	parts := strings.Split(RankRanges(ranks, "\x00"), "\x00")
	if len(parts) > maxRankRanges {
		return strings.Join(parts[:maxRankRanges], ", ") + fmt.Sprintf(" and %d more ranges", len(parts)-maxRankRanges)
	}
	return strings.Join(parts, ", ")
}

// SameTextLines says notes of equal text once, after the ranks they concern
// ("rank 3: text", "3 ranks (0-1, 5): text"), in the order of their first
// rank.
func SameTextLines(notes []RankNote) []string {
	ranks := map[string][]int{}
	var order []string
	for _, n := range notes {
		if _, ok := ranks[n.Text]; !ok {
			order = append(order, n.Text)
		}
		ranks[n.Text] = append(ranks[n.Text], n.Rank)
	}
	out := make([]string, len(order))
	for i, text := range order {
		if r := ranks[text]; len(r) == 1 {
			out[i] = fmt.Sprintf("rank %d: %s", r[0], text)
		} else {
			out[i] = fmt.Sprintf("%d ranks (%s): %s", len(r), rankList(r), text)
		}
	}
	return out
}

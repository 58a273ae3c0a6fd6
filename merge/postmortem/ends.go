package postmortem

// How the ranks ended: the first end and the others grouped by how they ended.

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
)

// firstEnd picks the rank that ended first: the earliest cause (an abort,
// a fatal signal, an exit, a rank that vanished while not inside an MPI
// call); a launcher's signal or a rank that vanished inside a call only
// when nothing else is known.
func firstEnd(ends []datamodel.RankEnd, ranks []*pmRank) *datamodel.RankEnd {
	cause := func(e datamodel.RankEnd) int {
		switch e.How {
		case datamodel.EndAbort, datamodel.EndFatal, datamodel.EndExit:
			return 0
		case datamodel.EndKilled:
			if e.Rank < len(ranks) && ranks[e.Rank] != nil && len(ranks[e.Rank].calls) == 0 {
				return 1
			}
			return 3
		case datamodel.EndSignaled:
			return 2
		}
		return 4
	}
	best := -1
	for i, e := range ends {
		if math.IsNaN(e.TimeS) || e.TimeS < 0 && e.How == datamodel.EndNoFile {
			continue
		}
		if best < 0 || cause(e) < cause(ends[best]) || cause(e) == cause(ends[best]) && e.TimeS < ends[best].TimeS {
			best = i
		}
	}
	if best < 0 || cause(ends[best]) > 3 {
		return nil
	}
	f := ends[best]
	return &f
}

// groupEnds groups ends by their text without the rank-specific parts.
func groupEnds(ends []datamodel.RankEnd) []datamodel.EndGroup {
	idx := map[string]int{}
	var out []datamodel.EndGroup
	for _, e := range ends {
		key := e.How + "|" + e.SignalName
		if e.Code != nil {
			key += "|" + strconv.Itoa(int(*e.Code))
		}
		text := groupText(e)
		key += "|" + text
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, datamodel.EndGroup{How: e.How, Text: text, FirstS: e.TimeS, LastS: e.TimeS})
		}
		g := &out[i]
		g.Ranks = append(g.Ranks, e.Rank)
		if e.TimeS >= 0 {
			if g.FirstS < 0 || e.TimeS < g.FirstS {
				g.FirstS = e.TimeS
			}
			g.LastS = math.Max(g.LastS, e.TimeS)
		}
	}
	for i := range out {
		sort.Ints(out[i].Ranks)
	}
	return out
}

// groupText is an end's sentence without what differs rank to rank (pids,
// addresses, last calls).
func groupText(e datamodel.RankEnd) string {
	switch e.How {
	case datamodel.EndSignaled:
		if e.SenderPid != 0 {
			return e.SignalName + " sent by another process (the launcher?)"
		}
		return e.SignalName
	case datamodel.EndFatal:
		return e.SignalName
	case datamodel.EndKilled:
		return "ended without a record (SIGKILL, the OOM killer, a lost node?), inferred from the last activity"
	}
	return strings.SplitN(e.Text, "; last returned", 2)[0]
}

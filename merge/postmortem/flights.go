package postmortem

// The calls left in flight, grouped STAT-like, and the members a collective still waited for.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

type flightKey struct {
	op   trace.Op
	comm uint64
	kind string
	seq  uint32
	tag  int32
}

// groupFlights groups the calls in flight STAT-like.
func groupFlights(ranks []*pmRank) []datamodel.FlightGroup {
	type acc struct {
		g      datamodel.FlightGroup
		calls  []pmCall
		callRk []int // the rank of each call
		sites  map[string]bool
	}
	idx := map[flightKey]*acc{}
	var order []flightKey
	for _, pr := range ranks {
		if pr == nil {
			continue
		}
		seen := map[flightKey]bool{}
		for _, c := range pr.calls {
			k := flightKey{op: c.op, seq: math.MaxUint32, tag: math.MinInt32}
			if c.comm != nil {
				k.comm, k.kind = c.comm.ID, c.comm.Kind
			}
			if c.op.IsCollective() {
				k.seq = c.fl.Seq
			} else {
				k.tag = c.fl.Tag
			}
			a := idx[k]
			if a == nil {
				a = &acc{sites: map[string]bool{}}
				a.g.Op = c.op.String()
				if c.comm != nil {
					a.g.Comm, a.g.CommID = commLabel(c.comm), fmt.Sprintf("%#x", c.comm.ID)
				}
				if c.op.IsCollective() {
					s := c.fl.Seq
					a.g.Instance = &s
				} else if c.fl.Tag != trace.NoArg {
					t := c.fl.Tag
					a.g.Tag = &t
				}
				a.g.EnteredFirstS, a.g.EnteredLastS = c.enterS, c.enterS
				idx[k] = a
				order = append(order, k)
			}
			a.g.Threads++
			a.calls = append(a.calls, c)
			a.callRk = append(a.callRk, pr.rank)
			if !seen[k] {
				seen[k] = true
				a.g.Ranks = append(a.g.Ranks, pr.rank)
			}
			a.g.EnteredFirstS = math.Min(a.g.EnteredFirstS, c.enterS)
			a.g.EnteredLastS = math.Max(a.g.EnteredLastS, c.enterS)
			if c.site != "" {
				a.sites[c.site] = true
			}
		}
	}
	var out []datamodel.FlightGroup
	for _, k := range order {
		a := idx[k]
		g := a.g
		for s := range a.sites {
			g.Sites = append(g.Sites, s)
		}
		sort.Strings(g.Sites)
		if len(g.Sites) > 4 {
			g.Sites = append(g.Sites[:4], fmt.Sprintf("... %d more", len(a.sites)-4))
		}
		if !k.op.IsCollective() {
			distinct := map[string]bool{}
			var parts []string
			for i, c := range a.calls {
				p := strings.TrimSpace(peerText(c))
				distinct[p] = true
				if i < 8 {
					parts = append(parts, fmt.Sprintf("rank %d %s", a.callRk[i], p))
				}
			}
			switch {
			case len(distinct) == 1:
				g.Peers = strings.TrimSpace(peerText(a.calls[0]))
			case len(a.calls) <= 8:
				g.Peers = strings.Join(parts, ", ")
			default:
				g.Peers = fmt.Sprintf("%d distinct peers", len(distinct))
			}
		} else if len(a.calls) > 0 && a.calls[0].members != nil {
			g.NotInside = notInside(ranks, a.calls[0], g.Ranks)
		}
		g.Text = flightText(g, k.op)
		out = append(out, g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].Ranks) != len(out[j].Ranks) {
			return len(out[i].Ranks) > len(out[j].Ranks)
		}
		return out[i].Ranks[0] < out[j].Ranks[0]
	})
	return out
}

// notInside groups a collective's members that were not inside instance
// c by what they were doing.
func notInside(ranks []*pmRank, c pmCall, inside []int) []datamodel.MemberState {
	in := map[int]bool{}
	for _, r := range inside {
		in[r] = true
	}
	idx := map[string]int{}
	var out []datamodel.MemberState
	for _, m := range c.members {
		r := int(m)
		if in[r] {
			continue
		}
		st := memberState(ranks, r, c)
		i, ok := idx[st]
		if !ok {
			i = len(out)
			idx[st] = i
			out = append(out, datamodel.MemberState{State: st})
		}
		out[i].Ranks = append(out[i].Ranks, r)
	}
	return out
}

// passedIt says whether rank r was inside a later collective on c's
// communicator than c's instance: it had left c's instance (a rooted or
// tree-shaped collective lets a member leave before another received its
// part), so c does not wait for it.
func passedIt(ranks []*pmRank, r int, c pmCall) (uint32, bool) {
	if r < 0 || r >= len(ranks) || ranks[r] == nil || c.comm == nil {
		return 0, false
	}
	for _, o := range ranks[r].calls {
		if o.op.IsCollective() && o.comm != nil && o.comm.ID == c.comm.ID && o.fl.Seq > c.fl.Seq {
			return o.fl.Seq, true
		}
	}
	return 0, false
}

// memberState says what rank r was doing (for a collective c it was not in).
func memberState(ranks []*pmRank, r int, c pmCall) string {
	if r < 0 || r >= len(ranks) || ranks[r] == nil {
		return "no rank file"
	}
	if seq, ok := passedIt(ranks, r, c); ok {
		return fmt.Sprintf("had left it: inside instance %d", seq)
	}
	pr := ranks[r]
	if len(pr.calls) > 0 {
		var d []string
		for _, c := range pr.calls {
			d = append(d, "in "+callText(c, true))
		}
		return strings.Join(d, "; ")
	}
	if pr.clean {
		return "finished (MPI_Finalize)"
	}
	return "ended, not inside an MPI call: " + groupText(pr.end)
}

// flightText is a group's line.
func flightText(g datamodel.FlightGroup, op trace.Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: inside %s", plural(len(g.Ranks), "rank", "ranks"), rundir.RankRanges(g.Ranks, ", "), g.Op)
	if g.Comm != "" && (op.IsCollective() || g.Comm != "world") {
		b.WriteString(" on " + g.Comm)
	}
	if g.Instance != nil {
		fmt.Fprintf(&b, ", instance %d", *g.Instance)
	}
	if g.Peers != "" {
		b.WriteString(" " + g.Peers)
	}
	if lo, hi := fmt.Sprintf("%.3f", g.EnteredFirstS), fmt.Sprintf("%.3f", g.EnteredLastS); lo == hi {
		fmt.Fprintf(&b, ", entered %s s", lo)
	} else {
		fmt.Fprintf(&b, ", entered %s-%s s", lo, hi)
	}
	if g.Threads > len(g.Ranks) {
		fmt.Fprintf(&b, " (%d threads)", g.Threads)
	}
	if len(g.Sites) == 1 {
		b.WriteString(", at " + g.Sites[0])
	}
	verb := "members not inside it"
	if op.Synchronizing() {
		verb = "members that never entered it"
		for _, m := range g.NotInside {
			if strings.HasPrefix(m.State, "had left it") {
				// one left it, so every member had entered it
				verb = "members not inside it"
			}
		}
	}
	for i, m := range g.NotInside {
		if i == 0 {
			b.WriteString("; " + verb + ": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s (%s)", plural(len(m.Ranks), "rank", "ranks"), rundir.RankRanges(m.Ranks, ", "), m.State)
	}
	return b.String()
}

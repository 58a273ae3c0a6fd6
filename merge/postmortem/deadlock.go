package postmortem

// The wait-for graph of the calls left in flight and its cycles, named as deadlocks.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// blocking says whether a rank inside op waits for its peer.
func blocking(op trace.Op) bool {
	switch op {
	case trace.OpRecv, trace.OpSend, trace.OpSsend, trace.OpRsend, trace.OpBsend, trace.OpSendrecv,
		trace.OpSendrecvReplace, trace.OpProbe, trace.OpMprobe:
		return true
	}
	return op.IsCollective()
}

// deadlocks finds the cycles of the wait-for graph: a rank inside a
// blocking point-to-point call waits for its peer, a rank inside a
// collective for the members not inside the same instance.
func deadlocks(ranks []*pmRank) []datamodel.Deadlock {
	n := len(ranks)
	edges := make([][]int, n)
	why := map[[2]int]string{}
	// waitedFor lists the members a collective instance waits for: those
	// neither inside it nor past it, computed once per instance (every
	// member inside it waits for the same ones).
	type instKey struct {
		comm uint64
		seq  uint32
	}
	waited := map[instKey][]int{}
	waitedFor := func(c pmCall) []int {
		if c.comm == nil {
			return nil
		}
		k := instKey{c.comm.ID, c.fl.Seq}
		if w, ok := waited[k]; ok {
			return w
		}
		var w []int
		for _, m := range c.members {
			r := int(m)
			if r < 0 || r >= n || ranks[r] == nil {
				continue
			}
			inside := false
			for _, o := range ranks[r].calls {
				if o.op == c.op && o.comm != nil && o.comm.ID == c.comm.ID && o.fl.Seq == c.fl.Seq {
					inside = true
				}
			}
			if _, left := passedIt(ranks, r, c); !inside && !left {
				w = append(w, r)
			}
		}
		waited[k] = w
		return w
	}
	for _, pr := range ranks {
		if pr == nil {
			continue
		}
		for _, c := range pr.calls {
			if !blocking(c.op) {
				continue
			}
			add := func(to int) {
				if to < 0 || to >= n || ranks[to] == nil || len(ranks[to].calls) == 0 {
					return
				}
				k := [2]int{pr.rank, to}
				if _, ok := why[k]; !ok {
					edges[pr.rank] = append(edges[pr.rank], to)
					why[k] = callText(c, true)
				}
			}
			if c.op.IsCollective() {
				for _, r := range waitedFor(c) {
					if r != pr.rank {
						add(r)
					}
				}
				continue
			}
			if c.peer >= 0 {
				add(c.peer)
			}
			if c.peer2 >= 0 && c.op != trace.OpSendrecv && c.op != trace.OpSendrecvReplace {
				add(c.peer2)
			}
		}
	}
	for i := range edges {
		sort.Ints(edges[i])
	}
	sccs := tarjan(edges)
	var out []datamodel.Deadlock
	for _, comp := range sccs {
		self := len(comp) == 1 && contains(edges[comp[0]], comp[0])
		if len(comp) < 2 && !self {
			continue
		}
		sort.Ints(comp)
		cyc := cycleThrough(edges, comp)
		var parts []string
		for i, r := range cyc {
			if i == 8 {
				parts = append(parts, fmt.Sprintf("... %d more", len(cyc)-8))
				break
			}
			parts = append(parts, fmt.Sprintf("rank %d in %s", r, why[[2]int{r, cyc[(i+1)%len(cyc)]}]))
		}
		d := datamodel.Deadlock{Ranks: comp, Text: strings.Join(parts, ", ") + ": deadlock"}
		if len(comp) > len(cyc) {
			d.Text += fmt.Sprintf(" (%d ranks wait on each other: %s)", len(comp), rundir.RankRanges(comp, ", "))
		}
		out = append(out, d)
	}
	// ranks that wait (directly or not) on a cycle: breadth first along
	// the reversed edges
	rev := make([][]int, n)
	for r, es := range edges {
		for _, to := range es {
			rev[to] = append(rev[to], r)
		}
	}
	for i := range out {
		seen := map[int]bool{}
		q := append([]int(nil), out[i].Ranks...)
		for _, r := range q {
			seen[r] = true
		}
		for len(q) > 0 {
			v := q[0]
			q = q[1:]
			for _, w := range rev[v] {
				if !seen[w] {
					seen[w] = true
					q = append(q, w)
					out[i].Blocked = append(out[i].Blocked, w)
				}
			}
		}
		sort.Ints(out[i].Blocked)
		if len(out[i].Blocked) > 0 {
			out[i].Text += fmt.Sprintf("; blocked behind it: %s %s", plural(len(out[i].Blocked), "rank", "ranks"), rundir.RankRanges(out[i].Blocked, ", "))
		}
	}
	return out
}

func contains(s []int, x int) bool {
	i := sort.SearchInts(s, x)
	return i < len(s) && s[i] == x
}

// tarjan returns the strongly connected components of the graph
// (iterative, so thousands of ranks in one cycle do not overflow a stack).
func tarjan(edges [][]int) [][]int {
	n := len(edges)
	index, low := make([]int, n), make([]int, n)
	for i := range index {
		index[i] = -1
	}
	onStack := make([]bool, n)
	var out [][]int
	var st []int
	next := 0
	type frame struct{ v, i int }
	for s := 0; s < n; s++ {
		if index[s] >= 0 || len(edges[s]) == 0 {
			continue
		}
		call := []frame{{s, 0}}
		index[s], low[s] = next, next
		next++
		st = append(st, s)
		onStack[s] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.i < len(edges[f.v]) {
				w := edges[f.v][f.i]
				f.i++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					st = append(st, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] == index[v] {
				var comp []int
				for {
					w := st[len(st)-1]
					st = st[:len(st)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				out = append(out, comp)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return minOf(out[i]) < minOf(out[j]) })
	return out
}

func minOf(s []int) int {
	m := s[0]
	for _, x := range s {
		m = min(m, x)
	}
	return m
}

// cycleThrough returns a shortest cycle from the component's lowest rank
// back to itself (breadth first, inside the component).
func cycleThrough(edges [][]int, comp []int) []int {
	in := map[int]bool{}
	for _, r := range comp {
		in[r] = true
	}
	start := comp[0]
	prev := map[int]int{}
	q := []int{start}
	seen := map[int]bool{}
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		for _, w := range edges[v] {
			if !in[w] {
				continue
			}
			if w == start {
				var cyc []int
				for x := v; ; x = prev[x] {
					cyc = append(cyc, x)
					if x == start {
						break
					}
				}
				for i, j := 0, len(cyc)-1; i < j; i, j = i+1, j-1 {
					cyc[i], cyc[j] = cyc[j], cyc[i]
				}
				return cyc
			}
			if !seen[w] {
				seen[w] = true
				prev[w] = v
				q = append(q, w)
			}
		}
	}
	return comp
}

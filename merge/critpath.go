package merge

import (
	"cmp"
	"slices"
)

// The critical path (Böhme, Geimer, Arnold, Voigtländer, Wolf, "Scalable
// critical-path based performance analysis", IPDPS 2012): the chain of
// regions and calls, through the wait edges, that determines when the run
// ends. Scalasca finds it in a backward replay from the rank that ends
// last: inside a wait state the path leaves the waiting rank for the rank
// it waited for, at the moment that rank entered the call waited for.
//
// Forward, the same path is the one each rank's timeline inherits: a
// rank's path up to now is its own segments since its last wait, appended
// to the path of the rank it last waited for, taken up to the moment that
// rank entered the call it was waited for. rcPath keeps that as a chain of
// immutable nodes (each a few (rank, region) amounts and a parent), so a
// wait costs a pointer and one node however many ranks waited for the
// same call; a chain longer than the stream's cpDepth is flattened into
// one node.
// At the end the path of the rank that left its last call last is the
// critical path, summed per (rank, region).

// cpMinDepth and cpMaxDepth bound a path's chain of nodes before it is
// flattened (RootCauseStream.cpDepth): cpNodeBudget nodes over all ranks,
// within these bounds. A flatten costs a sort of every (rank, region) on
// the path, so a longer chain makes it rarer (at 8 ranks, 256 nodes made
// flattens 13 % of the stream's CPU), while the chains' memory is at most
// ranks × depth nodes. The sums do not depend on the depth: a flattened
// node holds the left-to-right sum of the chain it replaces, and the
// chain after it goes on adding in the same order.
const (
	cpMinDepth   = 256
	cpMaxDepth   = 4096
	cpNodeBudget = 1 << 15
)

// cpDepthFor returns the chain depth for a run of ranks ranks.
func cpDepthFor(ranks int) int {
	return min(cpMaxDepth, max(cpMinDepth, cpNodeBudget/max(1, ranks)))
}

// cpChunkFor returns the entries of a rank's new pending array for a run
// of ranks ranks: the nodes made at its waited-for calls share it, so
// one allocation serves several (16 entries, about 4 calls) where the
// ranks are few; beyond 128 ranks a node may keep its whole array alive
// on its own, so it takes 4 (one call).
func cpChunkFor(ranks int) int {
	if ranks <= 128 {
		return 16
	}
	return 4
}

// cpNode is one piece of a path: amounts per (rank, region) and the path
// before it.
type cpNode struct {
	parent *cpNode
	delta  []rcEnt
	depth  int
	flat   []rcEnt // memoised sum of the chain (flatten)
}

// rcPath is a rank's critical-path state.
type rcPath struct {
	base *cpNode
	// frozen, when set, are the rank's own segments after base and
	// before pending, shared with a node of the waiters' path: the node
	// of frozen after base that is the rank's path is only made when the
	// path grows on it (base), not when the rank's next wait replaces it.
	frozen  []rcEnt
	pending []rcEnt // the rank's own segments since base (and frozen), folded up to from
	// from is the first of the rank's segments not yet folded into
	// pending: they are summed from the ring only when the path is
	// needed (the rank is waited for, or the ring is about to overwrite
	// them), so a rank whose path a wait replaces never sums them.
	// Segment ovPos−1 counts ovDur instead of its duration (the part of
	// the waiting call after the wait).
	from   uint64
	ovPos  uint64
	ovDur  float64
	rank   int32
	since  uint64 // position of the call of the last wait taken
	nodeAt uint64 // position the cached node was made at (+1; 0 none)
	node   *cpNode
	stint  *cpStint // cached with node
	// start is when the path reached this rank (its first call, or the
	// end of its last wait taken); stints are the path's earlier stays.
	start  float64
	stints *cpStint
}

// cpStint is one stay of a path on a rank, [from, to], and the stays
// before it: what the Gantt chart and Perfetto draw. A chain longer than
// 2·cpMaxStints is cut to the last cpMaxStints.
type cpStint struct {
	rank     int32
	from, to float64
	prev     *cpStint
	count    int
}

// cpMaxStints bounds the stays of the critical path kept for drawing.
const cpMaxStints = 1 << 14

func newStint(rank int32, from, to float64, prev *cpStint) *cpStint {
	st := &cpStint{rank: rank, from: from, to: to, prev: prev, count: 1}
	if prev != nil {
		st.count = prev.count + 1
	}
	if st.count > 2*cpMaxStints {
		x := st
		for i := 1; i < cpMaxStints && x.prev != nil; i++ {
			x = x.prev
		}
		x.prev = nil
		st.count = cpMaxStints
	}
	return st
}

// add appends a segment of region reg, dur ns, to the rank's own part.
func (p *rcPath) add(reg int32, dur float64) {
	if dur == 0 {
		return
	}
	k := rcCauseKey(p.rank, reg)
	for i := len(p.pending) - 1; i >= 0 && i >= len(p.pending)-8; i-- {
		if p.pending[i].cause == k {
			p.pending[i].amt += dur
			return
		}
	}
	for i := range p.pending {
		if p.pending[i].cause == k {
			p.pending[i].amt += dur
			return
		}
	}
	p.pending = append(p.pending, rcEnt{k, dur})
}

// fold adds r's segments [r.cp.from, to) to its path's pending part, in
// order (the sums are those of adding each segment as it came).
func (r *rcRank) fold(to uint64) {
	p := &r.cp
	for q := p.from; q < to; q++ {
		g := r.seg(q)
		d := g.dur
		if q+1 == p.ovPos {
			d = p.ovDur
		}
		p.add(g.region, d)
	}
	if to > p.from {
		p.from = to
	}
}

// newCPNode returns the node of delta after parent, flattening a chain
// of maxDepth nodes; m is scratch.
func newCPNode(parent *cpNode, delta []rcEnt, m map[int64]float64, maxDepth int) *cpNode {
	if parent != nil && parent.depth >= maxDepth {
		return &cpNode{delta: mergeEntsIn(parent.flatten(m), delta, m), depth: 1}
	}
	n := &cpNode{parent: parent, delta: delta, depth: 1}
	if parent != nil {
		n.depth = parent.depth + 1
	}
	return n
}

// flatten returns the sum of the chain ending at n, memoised on n only
// (the nodes between are summed in one walk, oldest first, so the float
// sums do not depend on which nodes were flattened before).
func (n *cpNode) flatten(m map[int64]float64) []rcEnt {
	if n == nil {
		return nil
	}
	if n.flat != nil {
		return n.flat
	}
	var chain []*cpNode
	for x := n; x != nil; x = x.parent {
		chain = append(chain, x)
	}
	clear(m)
	for i := len(chain) - 1; i >= 0; i-- {
		for _, e := range chain[i].delta {
			m[e.cause] += e.amt
		}
	}
	n.flat = entsOf(m)
	return n.flat
}

// mergeEnts returns a + b summed per key (a new slice; zeros dropped).
func mergeEnts(a, b []rcEnt) []rcEnt {
	return mergeEntsIn(a, b, make(map[int64]float64, len(a)+len(b)))
}

// mergeEntsIn is mergeEnts with m as scratch.
func mergeEntsIn(a, b []rcEnt, m map[int64]float64) []rcEnt {
	clear(m)
	for _, e := range a {
		m[e.cause] += e.amt
	}
	for _, e := range b {
		m[e.cause] += e.amt
	}
	return entsOf(m)
}

// entsOf returns m's non-zero entries sorted by key.
func entsOf(m map[int64]float64) []rcEnt {
	return entsAppend(make([]rcEnt, 0, len(m)), m)
}

// entsAppend appends m's non-zero entries, sorted by key, to dst.
func entsAppend(dst []rcEnt, m map[int64]float64) []rcEnt {
	n := len(dst)
	for k, v := range m {
		if v != 0 {
			dst = append(dst, rcEnt{k, v})
		}
	}
	slices.SortFunc(dst[n:], func(a, b rcEnt) int { return cmp.Compare(a.cause, b.cause) })
	return dst
}

// jump: rank a waited w in its call at pa for rank b's call at pb. a's
// path becomes b's path up to pb's enter, then the rest of a's call after
// the wait and a's later segments.
func (s *RootCauseStream) jump(a *rcRank, pa uint64, b *rcRank, pb uint64, w, need float64) {
	if pa < a.cp.since || pa < a.oldest() || pb < b.oldest() {
		return // an older wait than the one a's path already took
	}
	var nb *cpNode
	var st *cpStint
	if b.cp.nodeAt == pb+1 && b.cp.node != nil {
		nb, st = b.cp.node, b.cp.stint
	} else {
		// b's pending part becomes a node of b's path (its new base); the
		// waiters' node is that part followed by b's segments from the
		// needed call on, subtracted (the same sums, in the same order,
		// as a node of them after b's new base). Both nodes share the
		// pending array; b's next pending part goes on after them. b's
		// node is made only when needed (frozen until then: b often
		// waits next, and its path is then replaced).
		b.cp.materialise(s)
		b.fold(b.n)
		old, nP := b.cp.base, len(b.cp.pending)
		buf := b.cp.pending
		for p := pb; p < b.n; p++ { // b's segments from the needed call on
			g := b.seg(p)
			if g.dur != 0 {
				buf = append(buf, rcEnt{rcCauseKey(b.rank, g.region), -g.dur})
			}
		}
		nAll := len(buf)
		if nP > 0 {
			b.cp.frozen = buf[:nP:nP]
		}
		if nAll > nP {
			nb = newCPNode(old, buf[:nAll:nAll], s.cpScratch, s.cpDepth)
		} else { // the waiters' path is b's
			b.cp.materialise(s)
			nb = b.cp.base
		}
		b.cp.pending = buf[nAll:nAll]
		if cap(b.cp.pending) < 4 { // the nodes end before it
			b.cp.pending = make([]rcEnt, 0, max(s.cpChunk, nP))
		}
		st = newStint(b.rank, b.cp.start, need, b.cp.stints)
		b.cp.node, b.cp.nodeAt, b.cp.stint = nb, pb+1, st
	}
	a.cp.base, a.cp.frozen = nb, nil
	a.cp.stints, a.cp.start = st, need
	a.cp.pending = a.cp.pending[:0] // no node shares it (nodes end before it)
	a.cp.since = pa
	a.cp.nodeAt, a.cp.node, a.cp.stint = 0, nil, nil
	// a's own part: the rest of its call after the wait and its later
	// segments, summed when needed (fold).
	a.cp.from, a.cp.ovPos, a.cp.ovDur = pa, pa+1, max(0, a.seg(pa).dur-w)
}

// criticalPath returns the path of the rank whose last call ended last,
// summed per (rank, region).
func (s *RootCauseStream) criticalPath() []rcEnt {
	r := s.rankIf(s.cpRank)
	if r == nil {
		return nil
	}
	r.cp.materialise(s)
	r.fold(r.n)
	return mergeEnts(r.cp.base.flatten(map[int64]float64{}), r.cp.pending)
}

// materialise makes the node of p's frozen segments after its base its
// new base.
func (p *rcPath) materialise(s *RootCauseStream) {
	if p.frozen != nil {
		p.base = newCPNode(p.base, p.frozen, s.cpScratch, s.cpDepth)
		p.frozen = nil
	}
}

// criticalStints returns the critical path's stays on ranks, oldest
// first (the last cpMaxStints to 2·cpMaxStints of them).
func (s *RootCauseStream) criticalStints() []cpStint {
	r := s.rankIf(s.cpRank)
	if r == nil {
		return nil
	}
	out := []cpStint{{rank: r.rank, from: r.cp.start, to: s.cpEnd}}
	for x := r.cp.stints; x != nil; x = x.prev {
		out = append(out, cpStint{rank: x.rank, from: x.from, to: x.to})
	}
	slices.Reverse(out)
	return out
}

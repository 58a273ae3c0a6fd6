package merge

import (
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

// cpMaxFrozen bounds a rank's frozen part (rcPath.frozen, amounts):
// beyond it the part is made a node of its own at the rank's next turn
// as the waited-for rank, as the waiters' nodes copy it
// (RootCauseStream.cpFrozen; 0: a node at every turn). On the 10^7-event
// benchmark run 32 made the arena's chains hold 25 MB more (peak RSS 87
// against 62 MB) for 2 instructions an event less than 8 (65 MB); 4
// cost 7 more.
const cpMaxFrozen = 8

// cpNode is one piece of a path: amounts per (rank, region) and the path
// before it. Nodes live in the stream's arena (cpArena) and name each
// other by index (0: none), so the garbage collector has no pointers to
// follow and the stream allocates nothing per node.
type cpNode struct {
	parent   int32 // 0: none
	depth    int32
	off, n   uint32 // delta: cpArena.ents[off:off+n]
	foff, fn uint32 // memoised sum of the chain (flatten), when hasFlat
	hasFlat  bool
}

// rcPath is a rank's critical-path state.
type rcPath struct {
	base int32 // node (cpArena.nodes)
	// frozen, when set, are the rank's own segments after base and
	// before pending, from its turns as the waited-for rank since base
	// (copied into those turns' waiters' nodes): the node of frozen
	// after base that is the rank's path is only made when the path
	// grows on it (base) or frozen passes cpFrozen, not when the rank's
	// next wait replaces it.
	frozen  []rcEnt
	pending []rcEnt // the rank's own segments since base (and frozen), folded up to from
	spare   []rcEnt // an array for the next pending part (nodes copy their amounts)
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
	node   int32
	stint  int32 // cached with node (cpArena.stints)
	// start is when the path reached this rank (its first call, or the
	// end of its last wait taken); stints are the path's earlier stays.
	start  float64
	stints int32
}

// cpStint is one stay of a path on a rank, [from, to], and the stays
// before it (prev, an index in cpArena.stints; 0: none): what the Gantt
// chart and Perfetto draw. A chain longer than 2·cpMaxStints is cut to
// the last cpMaxStints.
type cpStint struct {
	rank, prev int32
	count      int32
	from, to   float64
}

// cpMaxStints bounds the stays of the critical path kept for drawing.
const cpMaxStints = 1 << 14

// cpHeadroom is the size of the arena's arrays after a compaction, in
// multiples of their live part: a compaction copies the live part, so
// with room for (cpHeadroom−1)·live new entries it costs about
// 1/(cpHeadroom−1) copies per entry made, for an arena (and its spare
// arrays) of up to 2·cpHeadroom times what the paths reach. 4 saved
// about 10 instructions an event (0.5 %) on the 8-rank benchmark for a
// few MB more peak RSS on its 10^7-event run: 2 it is.
const cpHeadroom = 2

// cpArena holds the critical path's nodes, their amounts and the stays,
// in flat arrays (index 0 of nodes and stints unused). When one is full
// the live part (reachable from the ranks' paths) is copied to a new
// array of twice its size, so the arena stays within a small factor of
// what the paths can still reach, and the copying costs O(1) per node.
type cpArena struct {
	nodes  []cpNode
	ents   []rcEnt
	stints []cpStint
	newIx  []int32 // scratch of compactions
	merge  []rcEnt // scratch of newCPNode
	chain  []int32 // scratch of flatten
	// the arrays before the last compaction, reused by the next one
	spareNodes  []cpNode
	spareEnts   []rcEnt
	spareStints []cpStint
	compactions int // of nodes and of stays (tests)
}

// reuse returns spare emptied when it holds n, else a new array of n.
func reuse[T any](spare []T, n int) []T {
	if cap(spare) >= n {
		return spare[:0]
	}
	return make([]T, 0, n)
}

func (s *RootCauseStream) newStint(rank int32, from, to float64, prev int32) int32 {
	a := &s.cpa
	if len(a.stints) == 0 {
		a.stints = make([]cpStint, 1, 64)
	}
	if len(a.stints) == cap(a.stints) {
		prev = s.compactStints(prev)
	}
	st := cpStint{rank: rank, from: from, to: to, prev: prev, count: 1}
	if prev != 0 {
		st.count = a.stints[prev].count + 1
	}
	if st.count > 2*cpMaxStints {
		x := prev // st's prev chain: st itself is step 0
		for i := 2; i < cpMaxStints && a.stints[x].prev != 0; i++ {
			x = a.stints[x].prev
		}
		a.stints[x].prev = 0
		st.count = cpMaxStints
	}
	a.stints = append(a.stints, st)
	return int32(len(a.stints) - 1)
}

// compactStints moves the stays reachable from the ranks' paths (and
// extra) to a new array, returning extra's new index.
func (s *RootCauseStream) compactStints(extra int32) int32 {
	a := &s.cpa
	ix, live := s.markLive(len(a.stints), func(i int32) int32 { return a.stints[i].prev }, func(r *rcRank) (*int32, *int32) {
		return &r.cp.stints, &r.cp.stint
	}, &extra)
	ns := append(reuse(a.spareStints, max(64, cpHeadroom*(live+1))), cpStint{})
	for i := 1; i < len(a.stints); i++ {
		if ix[i] != 0 {
			st := a.stints[i]
			st.prev = ix[st.prev]
			ns = append(ns, st)
		}
	}
	a.stints, a.spareStints = ns, a.stints
	a.compactions++
	s.remapRoots(ix, func(r *rcRank) (*int32, *int32) { return &r.cp.stints, &r.cp.stint }, &extra)
	return extra
}

// markLive numbers the entries of an arena of n reachable from every
// rank's two roots (and extra) through parent, in their order: ix[i] is
// the new index of entry i, 0 for the dead; live is how many live.
func (s *RootCauseStream) markLive(n int, parent func(int32) int32, roots func(*rcRank) (*int32, *int32), extra *int32) (ix []int32, live int) {
	a := &s.cpa
	if cap(a.newIx) < n {
		a.newIx = make([]int32, n)
	}
	ix = a.newIx[:n]
	clear(ix)
	mark := func(i int32) {
		for i != 0 && ix[i] == 0 {
			ix[i] = -1
			i = parent(i)
		}
	}
	for i := range s.ranks.len() {
		if r := s.ranks.at(int32(i)); r != nil {
			x, y := roots(r)
			mark(*x)
			mark(*y)
		}
	}
	mark(*extra)
	k := int32(1)
	for i := 1; i < n; i++ {
		if ix[i] != 0 {
			ix[i] = k
			k++
		}
	}
	return ix, int(k - 1)
}

// remapRoots gives every rank's two roots (and extra) their new index.
func (s *RootCauseStream) remapRoots(ix []int32, roots func(*rcRank) (*int32, *int32), extra *int32) {
	for i := range s.ranks.len() {
		if r := s.ranks.at(int32(i)); r != nil {
			x, y := roots(r)
			*x, *y = ix[*x], ix[*y]
		}
	}
	*extra = ix[*extra]
}

// compactNodes moves the nodes reachable from the ranks' paths (and
// extra) and their amounts to new arrays with room for nn more nodes
// and ne more amounts, returning extra's new index.
func (s *RootCauseStream) compactNodes(nn, ne int, extra int32) int32 {
	a := &s.cpa
	roots := func(r *rcRank) (*int32, *int32) { return &r.cp.base, &r.cp.node }
	ix, live := s.markLive(len(a.nodes), func(i int32) int32 { return a.nodes[i].parent }, roots, &extra)
	lents := 0
	for i := 1; i < len(a.nodes); i++ {
		if ix[i] != 0 {
			lents += int(a.nodes[i].n + a.nodes[i].fn)
		}
	}
	nodes := append(reuse(a.spareNodes, max(64, cpHeadroom*(live+nn+1))), cpNode{})
	ents := reuse(a.spareEnts, max(256, cpHeadroom*(lents+ne)))
	for i := 1; i < len(a.nodes); i++ {
		if ix[i] == 0 {
			continue
		}
		nd := a.nodes[i]
		nd.parent = ix[nd.parent]
		off := uint32(len(ents))
		ents = append(ents, a.ents[nd.off:nd.off+nd.n]...)
		nd.off = off
		if nd.hasFlat {
			foff := uint32(len(ents))
			ents = append(ents, a.ents[nd.foff:nd.foff+nd.fn]...)
			nd.foff = foff
		}
		nodes = append(nodes, nd)
	}
	a.nodes, a.ents, a.spareNodes, a.spareEnts = nodes, ents, a.nodes, a.ents
	a.compactions++
	s.remapRoots(ix, roots, &extra)
	return extra
}

// cpReserve makes room for nn nodes and ne amounts, compacting the arena
// when full; it returns parent's index after that.
func (s *RootCauseStream) cpReserve(nn, ne int, parent int32) int32 {
	a := &s.cpa
	if len(a.nodes) == 0 {
		a.nodes = make([]cpNode, 1, 64)
	}
	if len(a.nodes)+nn > cap(a.nodes) || len(a.ents)+ne > cap(a.ents) {
		return s.compactNodes(nn, ne, parent)
	}
	return parent
}

// add appends a segment of region reg, dur ns, to the rank's own part.
func (p *rcPath) add(reg int32, dur float64) {
	if dur == 0 {
		return
	}
	k := rcCauseKey(p.rank, reg)
	for i := len(p.pending) - 1; i >= 0; i-- { // latest first (keys are distinct)
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
// of cpDepth nodes.
func (s *RootCauseStream) newCPNode(parent int32, delta []rcEnt) int32 {
	a := &s.cpa
	if parent != 0 && int(a.nodes[parent].depth) >= s.cpDepth {
		a.merge = mergeEntsAppend(a.merge[:0], s.flatten(parent), delta, &s.cpScratch)
		parent, delta = 0, a.merge
	}
	parent = s.cpReserve(1, len(delta), parent)
	nd := cpNode{parent: parent, depth: 1, off: uint32(len(a.ents)), n: uint32(len(delta))}
	if parent != 0 {
		nd.depth = a.nodes[parent].depth + 1
	}
	a.ents = append(a.ents, delta...)
	a.nodes = append(a.nodes, nd)
	return int32(len(a.nodes) - 1)
}

// flatten returns the sum of the chain ending at node n (valid until the
// arena next changes), memoised on n only (the nodes between are summed
// in one walk, oldest first, so the float sums do not depend on which
// nodes were flattened before).
func (s *RootCauseStream) flatten(n int32) []rcEnt {
	if n == 0 {
		return nil
	}
	a := &s.cpa
	if nd := a.nodes[n]; nd.hasFlat {
		return a.ents[nd.foff : nd.foff+nd.fn]
	}
	a.chain = a.chain[:0]
	for x := n; x != 0; x = a.nodes[x].parent {
		a.chain = append(a.chain, x)
	}
	m := &s.cpScratch
	m.reset()
	m.addChain(a)
	a.merge = m.appendTo(a.merge[:0])
	n = s.cpReserve(0, len(a.merge), n)
	nd := &a.nodes[n]
	nd.foff, nd.fn, nd.hasFlat = uint32(len(a.ents)), uint32(len(a.merge)), true
	a.ents = append(a.ents, a.merge...)
	return a.ents[nd.foff : nd.foff+nd.fn]
}

// mergeEnts returns a + b summed per key (a new slice; zeros dropped).
func mergeEnts(a, b []rcEnt) []rcEnt {
	return mergeEntsAppend(make([]rcEnt, 0, len(a)+len(b)), a, b, &entSums{})
}

// mergeEntsAppend appends a + b summed per key, sorted by key, to dst,
// with m as scratch.
func mergeEntsAppend(dst, a, b []rcEnt, m *entSums) []rcEnt {
	m.reset()
	m.addAll(a)
	m.addAll(b)
	return m.appendTo(dst)
}

// jump: rank a waited w in its call at pa for rank b's call at pb. a's
// path becomes b's path up to pb's enter, then the rest of a's call after
// the wait and a's later segments.
func (s *RootCauseStream) jump(a *rcRank, pa uint64, b *rcRank, pb uint64, w, need float64) {
	if pa < a.cp.since { // (waitOf has seen pa and pb in their rings)
		return // an older wait than the one a's path already took
	}
	var nb, st int32
	if b.cp.nodeAt == pb+1 && b.cp.node != 0 {
		nb, st = b.cp.node, b.cp.stint
	} else {
		// The waiters' node is b's frozen and pending parts followed by
		// b's segments from the needed call on, subtracted (the same
		// sums, in the same order, as nodes of them after b's base).
		// b's pending part joins its frozen part: b's own node of them
		// is made only when needed (b often waits next, and its path is
		// then replaced) or when the frozen part grows past cpFrozen, so
		// an N×N instance makes one node, however often b is the last
		// (D72). A new pending part goes into b's spare
		// array.
		b.fold(b.n)
		bp := &b.cp
		if len(bp.frozen)+len(bp.pending) > s.cpFrozen {
			bp.materialise(s)
		}
		nb = s.waitersNode(b, pb)
		if len(bp.pending) > 0 {
			if bp.frozen != nil {
				bp.frozen, bp.pending = append(bp.frozen, bp.pending...), bp.pending[:0]
			} else {
				bp.frozen, bp.pending, bp.spare = bp.pending, bp.spare[:0], nil
			}
		}
		if nb == 0 { // the waiters' path is b's
			bp.materialise(s)
			nb = bp.base
		}
		st = s.newStint(b.rank, b.cp.start, need, b.cp.stints)
		b.cp.node, b.cp.nodeAt, b.cp.stint = nb, pb+1, st
	}
	if a.cp.frozen != nil {
		a.cp.spare = a.cp.frozen[:0]
	}
	a.cp.base, a.cp.frozen = nb, nil
	a.cp.stints, a.cp.start = st, need
	a.cp.pending = a.cp.pending[:0]
	a.cp.since = pa
	a.cp.nodeAt, a.cp.node, a.cp.stint = 0, 0, 0
	// a's own part: the rest of its call after the wait and its later
	// segments, summed when needed (fold).
	ov := a.seg(pa).dur - w
	if ov < 0 { // max(0, ov) without its NaN and −0 cases (a −0 adds nothing: add skips it)
		ov = 0
	}
	a.cp.from, a.cp.ovPos, a.cp.ovDur = pa, pa+1, ov
	a.setSlowAt(s.hist) // from may have gone back: pushSlow is then due sooner
}

// waitersNode returns the node, after b's base, of b's frozen and
// pending parts followed by b's segments from its call at pb on,
// subtracted; 0 when there are no such segments (the waiters' path is
// then b's). The amounts go to the arena directly, unless the chain is
// to be flattened (newCPNode).
func (s *RootCauseStream) waitersNode(b *rcRank, pb uint64) int32 {
	bp, a := &b.cp, &s.cpa
	nP := len(bp.frozen) + len(bp.pending)
	if bp.base != 0 && int(a.nodes[bp.base].depth) >= s.cpDepth {
		buf := append(append(s.cpBuf[:0], bp.frozen...), bp.pending...)
		for p := pb; p < b.n; p++ { // b's segments from the needed call on
			if g := b.seg(p); g.dur != 0 {
				buf = append(buf, rcEnt{rcCauseKey(b.rank, g.region), -g.dur})
			}
		}
		s.cpBuf = buf
		if len(buf) == nP {
			return 0
		}
		return s.newCPNode(bp.base, buf)
	}
	parent := s.cpReserve(1, nP+int(b.n-pb), bp.base) // (bp.base follows a compaction)
	off := len(a.ents)
	ents := append(append(a.ents, bp.frozen...), bp.pending...)
	for p := pb; p < b.n; p++ { // b's segments from the needed call on
		if g := b.seg(p); g.dur != 0 {
			ents = append(ents, rcEnt{rcCauseKey(b.rank, g.region), -g.dur})
		}
	}
	if len(ents) == off+nP {
		a.ents = ents[:off]
		return 0
	}
	a.ents = ents
	nd := cpNode{parent: parent, depth: 1, off: uint32(off), n: uint32(len(ents) - off)}
	if parent != 0 {
		nd.depth = a.nodes[parent].depth + 1
	}
	a.nodes = append(a.nodes, nd)
	return int32(len(a.nodes) - 1)
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
	return mergeEnts(s.flatten(r.cp.base), r.cp.pending)
}

// materialise makes the node of p's frozen segments after its base its
// new base.
func (p *rcPath) materialise(s *RootCauseStream) {
	if p.frozen != nil {
		p.base = s.newCPNode(p.base, p.frozen)
		p.spare, p.frozen = p.frozen[:0], nil
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
	for x := r.cp.stints; x != 0; x = s.cpa.stints[x].prev {
		st := s.cpa.stints[x]
		out = append(out, cpStint{rank: st.rank, from: st.from, to: st.to})
	}
	slices.Reverse(out)
	return out
}

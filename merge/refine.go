package merge

import (
	"math"
	"sort"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
)

// Post-mortem refinement from the trace itself (issue 10 §4,
// docs/explanation/clocksync.md "Refinement and error bounds").
//
// Happened-before facts. In an N×N collective that carries data (Barrier,
// Allreduce, Allgather, Alltoall(v,w), Reduce_scatter(_block)) no member
// leaves before every member entered. For a member r and rank 0 (the
// reference timebase) in the same instance, with corrected times g and
// true times g - e (e = the corrected clock's error, e_0 = 0):
//
//	exit_r ≥ enter_0  ⇒  e_r ≤ g_exit_r - g_enter_0  (hi)
//	exit_0 ≥ enter_r  ⇒  e_r ≥ g_enter_r - g_exit_0  (lo)
//
// so e_r ∈ [lo, hi] at that moment: a proven bound on the corrected
// clock's error relative to rank 0, as tight as the collective's latency.
// The facts of all instances in a cell of a global time grid are
// intersected (lo = max, hi = min); an empty intersection (lo > hi) is a
// contradiction: some fact is violated whatever the offset.
//
// Bounds. Per rank, the largest max(hi, -lo) over its cells bounds the
// interpolated clock's error wherever the facts reach; the report shows it
// and flags waits and skews smaller than it.
//
// Refinement (correct.ClockRefined). Each rank's offset curve is moved by a
// piecewise-linear δ(g) (the corrected time becomes g - δ(g), so a fact's
// range [lo, hi] holds after the move where lo ≤ δ ≤ hi). The grid move
// takes at each grid point the value inside the ranges of both adjacent
// cells that is closest to 0 (no move where the interpolation already
// satisfies the facts: the moves are as small as the facts allow), linear
// between the points. δ is a path through stations, each cell's first
// call entry and last call exit (inside its range, so linear between them
// inside it at every call) and the grid points (free), taking at each the
// value nearest the grid move that the ranges and a slope of at most
// RefineMaxRate allow (refineKnots). Where neighbouring cells agree that is
// the grid move; where their ranges are disjoint (a disagreement: the
// clock wandered more than the facts' width between them) no shared value
// meets both, and δ changes between the two cells' calls, where none of
// their facts lies. A station the slope cannot reach is limited, counted
// (RankBound.Limited) and its cell's facts may stay violated.
// Contradictory cells take their range's midpoint; their violation remains
// and is reported, never hidden. Rank 0 is never moved.
//
// Point-to-point messages with rank 0 are facts too, one-sided: a message
// from rank 0 to r cannot be received before it was sent,
//
//	recv_exit_r ≥ send_enter_0  ⇒  e_r ≤ g_recv_exit_r - g_send_enter_0  (hi)
//
// and one from r to rank 0 gives e_r ≥ g_send_enter_r - g_recv_exit_0
// (lo), at the receive's and the send's call of r. A halo exchange with
// rank 0 gives both sides in one cell. A cell with one side only guides
// the refinement (its range is open on the other side) but is not counted
// in the bounds (Bounded, widths, BoundNS), which need both. Messages
// between two other ranks relate two unknown errors and are not used
// (docs/explanation/clocksync.md, "Refinement and error bounds").

// RefineCells is the target number of grid cells over a run; the cell is
// never shorter than RefineMinCellNS.
const (
	RefineCells     = 512
	RefineMinCellNS = 50e6 // 50 ms
)

// RefineMaxRate is the steepest slope the refinement's move may take: the
// corrected clock runs at least 1 - RefineMaxRate as fast as the
// interpolated one (never backwards, which a slope of 1 would mean) and at
// most 1 + RefineMaxRate, like the repair's tents (CLCRate). A real
// clock's error changes by parts per million; a step that needs more comes
// from calls µs apart in two cells whose ranges the clock's wander within
// them made disjoint, or from facts that contradict each other.
const RefineMaxRate = CLCRate

// refineMarginNS keeps a moved value this far inside a range's ends (at
// most half its width), so that float rounding in the corrected times
// (about 0.002 ns at 10^13 ns from the origin) cannot turn a value on a
// fact's edge into a violation.
const refineMarginNS = 0.01

// hbCell is one grid cell's intersection of facts for one rank; first and
// last are the earliest entry and the latest exit of the rank's calls that
// gave them (the times where δ must lie inside the range).
type hbCell struct {
	lo, hi      float64
	first, last float64
	n           int32
}

// hbGrid accumulates the facts of every rank (merge's metrics goroutine).
type hbGrid struct {
	start, step float64 // global ns relative to the origin
	cells       [][]hbCell
}

func newHBGrid(start, end float64, ranks int) *hbGrid {
	step := RefineMinCellNS
	if !math.IsInf(end, 0) && !math.IsInf(start, 0) && end > start {
		step = max(step, (end-start)/RefineCells)
	}
	if math.IsInf(start, 0) {
		start = 0
	}
	return &hbGrid{start: start, step: step, cells: make([][]hbCell, ranks)}
}

func (h *hbGrid) cell(g float64) int {
	i := int(math.Floor((g - h.start) / h.step))
	if i < 0 {
		return 0
	}
	return i
}

// add records e_r ∈ [lo, hi] for rank's call from global time enter to
// exit (its cell is the one of enter).
func (h *hbGrid) add(rank int32, enter, exit, lo, hi float64) {
	if int(rank) >= len(h.cells) || rank <= 0 {
		return
	}
	i := h.cell(enter)
	if i > 1<<20 {
		return // far beyond the expected end: not a grid of this run
	}
	cs := h.cells[rank]
	for len(cs) <= i {
		cs = append(cs, hbCell{lo: math.Inf(-1), hi: math.Inf(1)})
	}
	c := &cs[i]
	if c.n == 0 {
		c.first, c.last = enter, exit
	}
	c.first, c.last = min(c.first, enter), max(c.last, max(exit, enter))
	c.lo = max(c.lo, lo)
	c.hi = min(c.hi, hi)
	c.n++
	h.cells[rank] = cs
}

// merge adds o's facts (a grid of the same geometry) to h.
func (h *hbGrid) merge(o *hbGrid) {
	for r, oc := range o.cells {
		if r >= len(h.cells) {
			break
		}
		cur := h.cells[r]
		for len(cur) < len(oc) {
			cur = append(cur, hbCell{lo: math.Inf(-1), hi: math.Inf(1)})
		}
		for i, c := range oc {
			if c.n == 0 {
				continue
			}
			x := &cur[i]
			if x.n == 0 {
				x.first, x.last = c.first, c.last
			}
			x.first, x.last = min(x.first, c.first), max(x.last, c.last)
			x.lo, x.hi = max(x.lo, c.lo), min(x.hi, c.hi)
			x.n += c.n
		}
		h.cells[r] = cur
	}
}

// p2pFacts makes the pass collect the happened-before facts of the
// point-to-point messages with rank 0 that a stream reports
// (P2POptions.onMessage) in a grid of its own (the stream runs on the
// merge goroutine, the collectives' facts go to a.hb on the metrics
// goroutine); the result merges it into a.hb before the bounds. Such a
// pass is never partitioned (partPlanFor): its facts would stay with the
// owners.
func (p *Pass) p2pFacts() func(src, dst int32, sendEnter, sendExit, recvEnter, recvExit float64) {
	a := p.a
	g := &hbGrid{start: a.hb.start, step: a.hb.step, cells: make([][]hbCell, len(a.hb.cells))}
	a.p2pHB = g
	return func(src, dst int32, sendEnter, sendExit, recvEnter, recvExit float64) {
		switch {
		case src == 0 && dst > 0:
			g.add(dst, recvEnter, recvExit, math.Inf(-1), recvExit-sendEnter)
		case dst == 0 && src > 0:
			g.add(src, sendEnter, sendExit, sendEnter-recvExit, math.Inf(1))
		}
	}
}

// Refinement is correct.ClockRefined's input: per world rank the knots of the move
// δ (global ns relative to Origin), computed by a first pass over the grid
// of cells Start + i·Step, and what it had to limit.
type Refinement struct {
	Origin      int64
	Start, Step float64
	Points      map[int32][]RefineKnot
	Limited     map[int32]RefineLimits
}

// RefineLimits is what a rank's refinement had to limit: the stations and
// the facts of their cells (RankBound.Limited, LimitedFacts).
type RefineLimits struct{ Points, Facts int }

// RefineKnot is one knot of a rank's move: δ = D ns at the interpolated
// global time G (ns relative to Refinement.Origin). Knots are sorted by
// strictly increasing G.
type RefineKnot struct{ G, D float64 }

// rankAdjust is one rank's δ(g), piecewise linear through its knots and
// constant beyond them; idx[i] is the first knot at or after the grid
// point start + i·step, so at finds its segment in O(1).
type rankAdjust struct {
	start, step float64
	k           []RefineKnot
	idx         []int32
}

func newRankAdjust(start, step float64, k []RefineKnot) *rankAdjust {
	r := &rankAdjust{start: start, step: step, k: k}
	if step > 0 && len(k) > 0 {
		n := int(math.Ceil((k[len(k)-1].G-start)/step)) + 1
		if n < 1 {
			n = 1
		}
		r.idx = make([]int32, n)
		j := 0
		for i := range r.idx {
			p := start + float64(i)*step
			for j < len(k) && k[j].G < p {
				j++
			}
			r.idx[i] = int32(j)
		}
	}
	return r
}

// At is δ(g) (correct.Move).
func (r *rankAdjust) At(g float64) float64 {
	k := r.k
	n := len(k)
	if n == 0 {
		return 0
	}
	if g <= k[0].G {
		return k[0].D
	}
	if g >= k[n-1].G {
		return k[n-1].D
	}
	i := 1
	if x := (g - r.start) / r.step; x > 0 && len(r.idx) > 0 {
		c := int(min(x, float64(len(r.idx)-1)))
		i = max(int(r.idx[c]), 1) // every knot before idx[c] is < g
	}
	for k[i].G < g { // stops at n-1 at the latest: g < k[n-1].G
		i++
	}
	a, b := k[i-1], k[i] // a.G < g ≤ b.G
	return a.D + (g-a.G)/(b.G-a.G)*(b.D-a.D)
}

// Move is rank's moves (correct.ClockRefined) for a corrector whose origin is
// origin, to attach with correct.Corrector.SetRefinement (nil: ref is nil or does
// not move rank).
func (ref *Refinement) Move(rank int32, origin int64) correct.Move {
	if ref == nil {
		return nil
	}
	k := ref.Points[rank]
	if len(k) == 0 {
		return nil
	}
	shift := float64(ref.Origin - origin)
	ks := make([]RefineKnot, len(k))
	for i, x := range k {
		ks[i] = RefineKnot{G: x.G + shift, D: x.D}
	}
	return newRankAdjust(ref.Start+shift, ref.Step, ks)
}

// bounds turns the grid into per-rank bounds and, when refine, the moves.
func (h *hbGrid) bounds(origin int64, refine bool) ([]datamodel.RankBound, *Refinement) {
	var out []datamodel.RankBound
	var ref *Refinement
	if refine {
		ref = &Refinement{Origin: origin, Start: h.start, Step: h.step, Points: map[int32][]RefineKnot{}, Limited: map[int32]RefineLimits{}}
	}
	for r, cs := range h.cells {
		if len(cs) == 0 {
			continue
		}
		b := datamodel.RankBound{Rank: int32(r), Cells: len(cs), BoundNS: -1}
		var widths, cellBounds []float64
		for _, c := range cs {
			if c.n == 0 {
				continue
			}
			b.Facts += int(c.n)
			if math.IsInf(c.lo, 0) || math.IsInf(c.hi, 0) {
				continue // one side only (point-to-point): no bound
			}
			b.Bounded++
			if c.lo > c.hi {
				b.Contradictions++
				b.ContradictionFacts += int(c.n)
			}
			if c.lo > 0 || c.hi < 0 {
				b.Outside++
			}
			cb := max(c.hi, -c.lo)
			b.BoundNS = max(b.BoundNS, cb)
			widths = append(widths, c.hi-c.lo)
			cellBounds = append(cellBounds, cb)
		}
		if len(widths) > 0 {
			sort.Float64s(widths)
			sort.Float64s(cellBounds)
			b.MedianWidthNS = widths[len(widths)/2]
			b.MaxWidthNS = widths[len(widths)-1]
			b.TypicalNS = cellBounds[len(cellBounds)/2]
		}
		b.Disagreements = disagreements(cs)
		if refine {
			ks, lim := refineKnots(cs, h.start, h.step)
			b.Limited, b.LimitedFacts = lim.Points, lim.Facts
			b.Moved, b.MaxShiftNS = knotMoves(ks)
			if b.Moved > 0 {
				ref.Points[int32(r)] = ks
			}
			if lim.Points > 0 {
				ref.Limited[int32(r)] = lim
			}
		}
		out = append(out, b)
	}
	return out, ref
}

// knotMoves returns how many knots move and the largest move.
func knotMoves(ks []RefineKnot) (moved int, maxShift float64) {
	for _, k := range ks {
		if k.D != 0 {
			moved++
		}
		maxShift = max(maxShift, math.Abs(k.D))
	}
	return moved, maxShift
}

// cellRange is the range δ must lie in over cell i's facts, kept
// refineMarginNS inside its ends (a contradictory cell's range is its
// midpoint); ok is false for a cell without facts.
func cellRange(cs []hbCell, i int) (lo, hi float64, ok bool) {
	if i < 0 || i >= len(cs) || cs[i].n == 0 {
		return 0, 0, false
	}
	lo, hi = cs[i].lo, cs[i].hi
	if lo > hi {
		m := (lo + hi) / 2
		return m, m, true
	}
	m := min(refineMarginNS, (hi-lo)/2)
	return lo + m, hi - m, true
}

// refinePoints chooses the grid move at the points 0..len(cs): point j
// bounds cells j-1 and j; its value is the one closest to 0 inside both
// cells' ranges (cellRange), where they are disjoint the middle of the gap.
// Linear between the points, it is the move refineKnots prefers.
func refinePoints(cs []hbCell) []float64 {
	d := make([]float64, len(cs)+1)
	for j := range d {
		lo, hi := math.Inf(-1), math.Inf(1)
		for _, i := range []int{j - 1, j} {
			if l, h, ok := cellRange(cs, i); ok {
				lo, hi = max(lo, l), min(hi, h)
			}
		}
		if lo > hi { // the two cells disagree: the middle of the gap
			m := (lo + hi) / 2
			lo, hi = m, m
		}
		d[j] = max(lo, min(hi, 0))
	}
	return d
}

// refineStation is a time where δ must lie in [lo, hi]: the first entry
// and the last exit of a cell's calls (its range), or a grid point (free,
// cell -1).
type refineStation struct {
	t, lo, hi float64
	cell      int
}

// refineKnots computes δ's knots for one rank's cells over the grid
// start + j·step: a path through stations (refineStation) in time order
// whose slope never exceeds RefineMaxRate, each value the one closest to
// the grid move (refinePoints, linear between the points) that the
// stations' ranges and the slope allow. A forward pass keeps at each
// station the values reachable from the earlier ones, a backward pass
// picks the values. Where neighbouring cells' ranges overlap this is the
// grid move itself; within a cell δ is linear between its first and last
// call, inside its range at both, so inside at every call: every fact of a
// consistent cell holds. Neighbouring cells with disjoint ranges (a
// disagreement) each keep their own range and δ changes between their
// calls. A station that no value within the slope reaches takes the
// nearest reachable value: lim counts such stations and the facts of their
// cells, which may stay violated.
func refineKnots(cs []hbCell, start, step float64) (ks []RefineKnot, lim RefineLimits) {
	inf := math.Inf(1)
	d := refinePoints(cs)
	pref := func(g float64) float64 { // the grid move at g
		x := (g - start) / step
		if x <= 0 {
			return d[0]
		}
		i := int(x)
		if i >= len(d)-1 {
			return d[len(d)-1]
		}
		return d[i] + (x-float64(i))*(d[i+1]-d[i])
	}
	var st []refineStation
	for j := 0; j <= len(cs); j++ {
		// The grid point: free, its value only preferred (inside a call
		// that started earlier, the forward pass moves it to the call's
		// exit: the call's station holds it to its cell's range).
		st = append(st, refineStation{t: start + float64(j)*step, lo: -inf, hi: inf, cell: -1})
		l, h, ok := cellRange(cs, j)
		if !ok {
			continue
		}
		c := cs[j]
		st = append(st, refineStation{t: c.first, lo: l, hi: h, cell: j})
		if c.last > c.first {
			st = append(st, refineStation{t: c.last, lo: l, hi: h, cell: j})
		}
	}
	// Forward: f[s] is what δ can be at station s, given the earlier ones.
	f := make([][2]float64, len(st))
	bad := -1 // the last cell whose facts lim counts
	for s := range st {
		lo, hi := st[s].lo, st[s].hi
		if s > 0 {
			st[s].t = max(st[s].t, st[s-1].t) // a call across a grid point: at its exit
			w := RefineMaxRate * (st[s].t - st[s-1].t)
			rlo, rhi := f[s-1][0]-w, f[s-1][1]+w
			if lo > rhi || hi < rlo { // out of reach at RefineMaxRate
				x := rhi
				if hi < rlo {
					x = rlo
				}
				lo, hi = x, x
				lim.Points++
				if c := st[s].cell; c > bad {
					lim.Facts += int(cs[c].n)
					bad = c
				}
			} else {
				lo, hi = max(lo, rlo), min(hi, rhi)
			}
		}
		f[s] = [2]float64{lo, hi}
	}
	// Backward: the value closest to the grid move that reaches the next.
	v := make([]float64, len(st))
	for s := len(st) - 1; s >= 0; s-- {
		lo, hi := f[s][0], f[s][1]
		if s+1 < len(st) {
			w := RefineMaxRate * (st[s+1].t - st[s].t)
			lo, hi = max(lo, v[s+1]-w), min(hi, v[s+1]+w)
		}
		v[s] = max(lo, min(hi, pref(st[s].t)))
	}
	ks = make([]RefineKnot, 0, len(st))
	for s := range st {
		if n := len(ks); n > 0 && st[s].t <= ks[n-1].G {
			continue // same time as the previous knot (and the same value)
		}
		ks = append(ks, RefineKnot{G: st[s].t, D: v[s]})
	}
	return dropCollinear(ks), lim
}

// refineCollinearNS: a knot within this of the line through its two
// neighbours is dropped (far below refineMarginNS, so no fact breaks).
const refineCollinearNS = 1e-6

// dropCollinear removes the knots that lie on the line through their
// neighbours (where cells agree, a cell's stations lie on the grid move;
// free stretches are 0), so a rank keeps about one knot per grid point.
func dropCollinear(ks []RefineKnot) []RefineKnot {
	if len(ks) < 3 {
		return ks
	}
	keep := make([]bool, len(ks))
	n := 2
	keep[0], keep[len(ks)-1] = true, true
	for i := 1; i < len(ks)-1; i++ {
		a, k, b := ks[i-1], ks[i], ks[i+1]
		if line := a.D + (k.G-a.G)/(b.G-a.G)*(b.D-a.D); math.Abs(k.D-line) > refineCollinearNS {
			keep[i] = true
			n++
		}
	}
	out := make([]RefineKnot, 0, n)
	for i, k := range ks {
		if keep[i] {
			out = append(out, k)
		}
	}
	return out
}

// disagreements counts the grid points whose two cells both hold facts,
// are consistent each, and have disjoint ranges.
func disagreements(cs []hbCell) int {
	n := 0
	for j := 1; j < len(cs); j++ {
		a, b := cs[j-1], cs[j]
		if a.n == 0 || b.n == 0 || a.lo > a.hi || b.lo > b.hi {
			continue
		}
		if max(a.lo, b.lo) > min(a.hi, b.hi) {
			n++
		}
	}
	return n
}

// summariseBounds fills ClockQuality's totals from its Bounds.
func summariseBounds(q *datamodel.ClockQuality) {
	q.BoundNS, q.TypicalBoundNS = -1, -1
	for _, b := range q.Bounds {
		if b.Facts == 0 {
			continue
		}
		q.BoundRanks++
		q.BoundNS = max(q.BoundNS, b.BoundNS)
		q.TypicalBoundNS = max(q.TypicalBoundNS, b.TypicalNS)
		q.BoundOutside += b.Outside
		q.Contradictions += b.Contradictions
		q.Disagreements += b.Disagreements
		q.RefineLimited += b.Limited
		if b.Moved > 0 {
			q.RefineMoved++
			q.RefineMaxNS = max(q.RefineMaxNS, b.MaxShiftNS)
		}
	}
}

// applied fills the bounds' move figures from the refinement a pass applied.
func applied(bs []datamodel.RankBound, ref *Refinement) {
	for i := range bs {
		b := &bs[i]
		b.Moved, b.MaxShiftNS = knotMoves(ref.Points[b.Rank])
		l := ref.Limited[b.Rank]
		b.Limited, b.LimitedFacts = l.Points, l.Facts
	}
}

// RefinedOptions returns opt for a correct.ClockRefined pass over a run whose
// first pass (with correct.ClockInterp) gave first.
func RefinedOptions(opt Options, first *Result) Options {
	opt.Clock = correct.ClockRefined
	if first != nil {
		opt.Refine = first.Refinement
	}
	return opt
}

// flagOps marks the ops whose mean wait is within twice the run's typical
// bound: below what the clocks can resolve.
func flagOps(an *datamodel.Analysis) {
	q := &an.Clock
	bound := q.FlagBoundNS()
	if bound < 0 {
		return
	}
	for i := range an.Ops {
		o := &an.Ops[i]
		o.BelowClockBound = o.Wait.Count > 0 && o.Wait.Mean < 2*bound
	}
}

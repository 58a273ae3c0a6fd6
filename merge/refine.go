package merge

import (
	"math"
	"sort"
)

// Post-mortem refinement from the trace itself (issue 10 §4,
// docs/clocksync.md "Refinement and error bounds").
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
// Refinement (ClockRefined). Each rank's offset curve is moved by a
// piecewise-linear δ(g) through values at the grid points: at each point
// the value inside the ranges of both adjacent cells that is closest to 0
// (no move where the interpolation already satisfies the facts: the moves
// are as small as the facts allow). Between two points the move is linear,
// so it stays inside a cell's range when both ends do. Contradictory cells
// take their range's midpoint; their violation remains and is reported,
// never hidden. Rank 0 is never moved. Point-to-point messages are not
// used yet (docs/clocksync.md says what that leaves out).

// RefineCells is the target number of grid cells over a run; the cell is
// never shorter than RefineMinCellNS.
const (
	RefineCells     = 512
	RefineMinCellNS = 50e6 // 50 ms
)

// hbCell is one grid cell's intersection of facts for one rank.
type hbCell struct {
	lo, hi float64
	n      int32
}

// hbGrid accumulates the facts of every rank (merge's metrics goroutine).
type hbGrid struct {
	start, step float64 // global ns relative to the origin
	cells       [][]hbCell
}

func newHBGrid(start, end float64, ranks int) *hbGrid {
	step := RefineMinCellNS
	if !math.IsInf(end, 0) && !math.IsInf(start, 0) && end > start {
		step = math.Max(step, (end-start)/RefineCells)
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

// add records e_r ∈ [lo, hi] at global time g.
func (h *hbGrid) add(rank int32, g, lo, hi float64) {
	if int(rank) >= len(h.cells) || rank <= 0 {
		return
	}
	i := h.cell(g)
	if i > 1<<20 {
		return // far beyond the expected end: not a grid of this run
	}
	cs := h.cells[rank]
	for len(cs) <= i {
		cs = append(cs, hbCell{lo: math.Inf(-1), hi: math.Inf(1)})
	}
	c := &cs[i]
	c.lo = math.Max(c.lo, lo)
	c.hi = math.Min(c.hi, hi)
	c.n++
	h.cells[rank] = cs
}

// RankBound is what the happened-before facts say about one rank's
// corrected clock (relative to rank 0's), and what the refinement did.
type RankBound struct {
	Rank int32 `json:"rank"`
	// Cells with facts, of the grid's cells up to the rank's last fact.
	Cells, Bounded int `json:"-"`
	Facts          int `json:"facts"`
	// BoundNS: the largest max(hi, -lo) over the cells with facts: the
	// corrected clock's error is within ±BoundNS wherever facts exist
	// (when the facts are consistent). 0 facts: unknown (-1).
	BoundNS float64 `json:"bound_ns"`
	// MedianWidthNS: the median width hi - lo of its cells (how tight the
	// facts are: about the collectives' latency).
	MedianWidthNS float64 `json:"median_width_ns"`
	// TypicalNS: the median over its cells of max(hi, -lo): the bound
	// where facts are as dense as usual (BoundNS is the loosest cell).
	TypicalNS float64 `json:"typical_bound_ns"`
	// Outside: cells whose range excludes 0 (the corrected clock breaks a
	// fact there); Contradictions: cells with lo > hi.
	Outside        int `json:"outside"`
	Contradictions int `json:"contradictions"`
	// Disagreements: grid points between two cells whose ranges do not
	// overlap (each consistent on its own): one value there cannot meet
	// both, the refinement meets them halfway and facts near that point
	// may stay violated (reported, not hidden).
	Disagreements int `json:"disagreements"`
	// MaxShiftNS: the largest move of the refinement (ClockRefined), and
	// the grid points it moved.
	MaxShiftNS float64 `json:"max_shift_ns"`
	Moved      int     `json:"moved_points"`
}

// Refinement is ClockRefined's input: per world rank the moves δ at the
// grid points (global ns relative to Origin), computed by a first pass.
type Refinement struct {
	Origin      int64
	Start, Step float64
	Points      map[int32][]float64
}

// rankAdjust is one rank's δ(g), piecewise linear through the grid points
// and constant beyond them.
type rankAdjust struct {
	start, step float64
	d           []float64
}

func (r *rankAdjust) at(g float64) float64 {
	n := len(r.d)
	if n == 0 {
		return 0
	}
	x := (g - r.start) / r.step
	if x <= 0 {
		return r.d[0]
	}
	i := int(x)
	if i >= n-1 {
		return r.d[n-1]
	}
	f := x - float64(i)
	return r.d[i] + f*(r.d[i+1]-r.d[i])
}

// SetRefinement attaches rank's moves (ClockRefined): Offset and Global
// include them from then on. Call after SetOrigin.
func (c *Corrector) SetRefinement(ref *Refinement, rank int32) {
	if ref == nil || c.mode != ClockRefined {
		return
	}
	d := ref.Points[rank]
	if len(d) == 0 {
		return
	}
	c.adjust = &rankAdjust{start: ref.Start + float64(ref.Origin-c.origin), step: ref.Step, d: d}
}

// bounds turns the grid into per-rank bounds and, when refine, the moves.
func (h *hbGrid) bounds(origin int64, refine bool) ([]RankBound, *Refinement) {
	var out []RankBound
	var ref *Refinement
	if refine {
		ref = &Refinement{Origin: origin, Start: h.start, Step: h.step, Points: map[int32][]float64{}}
	}
	for r, cs := range h.cells {
		if len(cs) == 0 {
			continue
		}
		b := RankBound{Rank: int32(r), Cells: len(cs), BoundNS: -1}
		var widths, cellBounds []float64
		for _, c := range cs {
			if c.n == 0 {
				continue
			}
			b.Bounded++
			b.Facts += int(c.n)
			if c.lo > c.hi {
				b.Contradictions++
			}
			if c.lo > 0 || c.hi < 0 {
				b.Outside++
			}
			cb := math.Max(c.hi, -c.lo)
			b.BoundNS = math.Max(b.BoundNS, cb)
			widths = append(widths, c.hi-c.lo)
			cellBounds = append(cellBounds, cb)
		}
		if len(widths) > 0 {
			sort.Float64s(widths)
			sort.Float64s(cellBounds)
			b.MedianWidthNS = widths[len(widths)/2]
			b.TypicalNS = cellBounds[len(cellBounds)/2]
		}
		b.Disagreements = disagreements(cs)
		if refine {
			d := refinePoints(cs)
			for _, v := range d {
				if v != 0 {
					b.Moved++
				}
				b.MaxShiftNS = math.Max(b.MaxShiftNS, math.Abs(v))
			}
			if b.Moved > 0 {
				ref.Points[int32(r)] = d
			}
		}
		out = append(out, b)
	}
	return out, ref
}

// refinePoints chooses δ at the grid points 0..len(cs): point j bounds
// cells j-1 and j; its value is the one closest to 0 inside both cells'
// ranges (a contradictory cell's range is its midpoint).
func refinePoints(cs []hbCell) []float64 {
	rng := func(i int) (lo, hi float64, ok bool) {
		if i < 0 || i >= len(cs) || cs[i].n == 0 {
			return 0, 0, false
		}
		lo, hi = cs[i].lo, cs[i].hi
		if lo > hi {
			m := (lo + hi) / 2
			lo, hi = m, m
		}
		return lo, hi, true
	}
	d := make([]float64, len(cs)+1)
	for j := range d {
		lo, hi := math.Inf(-1), math.Inf(1)
		for _, i := range []int{j - 1, j} {
			if l, h, ok := rng(i); ok {
				lo, hi = math.Max(lo, l), math.Min(hi, h)
			}
		}
		if lo > hi { // the two cells disagree: meet halfway
			m := (lo + hi) / 2
			lo, hi = m, m
		}
		d[j] = math.Max(lo, math.Min(hi, 0))
	}
	return d
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
		if math.Max(a.lo, b.lo) > math.Min(a.hi, b.hi) {
			n++
		}
	}
	return n
}

// summariseBounds fills ClockQuality's totals from its Bounds.
func summariseBounds(q *ClockQuality) {
	q.BoundNS, q.TypicalBoundNS = -1, -1
	for _, b := range q.Bounds {
		if b.Facts == 0 {
			continue
		}
		q.BoundRanks++
		q.BoundNS = math.Max(q.BoundNS, b.BoundNS)
		q.TypicalBoundNS = math.Max(q.TypicalBoundNS, b.TypicalNS)
		q.BoundOutside += b.Outside
		q.Contradictions += b.Contradictions
		q.Disagreements += b.Disagreements
		if b.Moved > 0 {
			q.RefineMoved++
			q.RefineMaxNS = math.Max(q.RefineMaxNS, b.MaxShiftNS)
		}
	}
}

// applied fills the bounds' move figures from the refinement a pass applied.
func applied(bs []RankBound, ref *Refinement) {
	for i := range bs {
		b := &bs[i]
		b.Moved, b.MaxShiftNS = 0, 0
		for _, v := range ref.Points[b.Rank] {
			if v != 0 {
				b.Moved++
			}
			b.MaxShiftNS = math.Max(b.MaxShiftNS, math.Abs(v))
		}
	}
}

// RefinedOptions returns opt for a ClockRefined pass over a run whose
// first pass (with ClockInterp) gave first.
func RefinedOptions(opt Options, first *Result) Options {
	opt.Clock = ClockRefined
	if first != nil {
		opt.Refine = first.Refinement
	}
	return opt
}

// RankBoundNS is rank's typical bound (0 for rank 0, the reference): from
// the happened-before facts where the trace has some about it, else its
// sync-path bound at the knots; -1 when neither is known.
func (q *ClockQuality) RankBoundNS(rank int32) float64 {
	if rank == 0 {
		return 0
	}
	for _, b := range q.Bounds {
		if b.Rank == rank && b.Facts > 0 {
			return b.TypicalNS
		}
	}
	if rank > 0 && int(rank) < len(q.SyncBounds) {
		return q.SyncBounds[rank]
	}
	return -1
}

// BelowBound reports whether a time difference between two ranks' events
// (a wait, a skew) of size ns is within their clocks' typical bounds, i.e.
// not a finding. Unknown bounds never flag.
func (q *ClockQuality) BelowBound(ns float64, a, b int32) bool {
	ba, bb := q.RankBoundNS(a), q.RankBoundNS(b)
	if ba < 0 || bb < 0 {
		return false
	}
	return ns < ba+bb
}

// FlagBoundNS is the bound ops are flagged against: the typical bound of
// the happened-before facts, or without facts the largest sync-path bound
// (-1: neither known).
func (q *ClockQuality) FlagBoundNS() float64 {
	if q.TypicalBoundNS >= 0 {
		return q.TypicalBoundNS
	}
	return q.SyncBoundNS
}

// flagOps marks the ops whose mean wait is within twice the run's typical
// bound: below what the clocks can resolve.
func flagOps(an *Analysis) {
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

package datamodel

// The clock's error bounds the reports show (Analysis.Clock): the
// happened-before bounds per rank (merge's refine.go computes them), the
// error-bar summaries (merge's errorbars_summary.go) and how a wait is
// judged against them.

// RankBound is what the happened-before facts say about one rank's
// corrected clock (relative to rank 0's), and what the refinement did.
type RankBound struct {
	Rank int32 `json:"rank"` // world rank
	// Cells with facts, of the grid's cells up to the rank's last fact.
	Cells, Bounded int `json:"-"`
	Facts          int `json:"facts"` // happened-before facts with rank 0 (one per shared N×N instance)
	// BoundNS: the largest max(hi, -lo) over the cells with facts: the
	// corrected clock's error is within ±BoundNS wherever facts exist
	// (when the facts are consistent). 0 facts: unknown (-1).
	BoundNS float64 `json:"bound_ns"`
	// MedianWidthNS: the median width hi - lo of its cells (how tight the
	// facts are: about the collectives' latency); MaxWidthNS the widest.
	// Where a clock lies inside a cell's range, so does the truth (up to
	// what the clock wandered within the cell), so the refined clock is
	// off by at most the cell's width plus that wander.
	MedianWidthNS float64 `json:"median_width_ns"`
	MaxWidthNS    float64 `json:"max_width_ns"` // the widest hi − lo of its cells, ns
	// TypicalNS: the median over its cells of max(hi, -lo): the bound
	// where facts are as dense as usual (BoundNS is the loosest cell).
	TypicalNS float64 `json:"typical_bound_ns"`
	// Outside: cells whose range excludes 0 (the corrected clock breaks a
	// fact there); Contradictions: cells with lo > hi, holding
	// ContradictionFacts facts (the only facts the refinement may leave
	// violated, besides LimitedFacts).
	Outside            int `json:"outside"`
	Contradictions     int `json:"contradictions"`      // cells with lo > hi (their facts contradict each other)
	ContradictionFacts int `json:"contradiction_facts"` // facts in those cells
	// Disagreements: grid points between two cells whose ranges do not
	// overlap (each consistent on its own): one value there cannot meet
	// both; the refinement's move changes between the two cells' calls.
	Disagreements int `json:"disagreements"`
	// Limited: stations (a cell's first or last call) that the
	// refinement's move could not reach within RefineMaxRate of the
	// earlier ones: it takes the nearest value it reaches (the clock never
	// runs backwards) and the LimitedFacts facts of their cells may stay
	// violated.
	Limited      int `json:"limited"`
	LimitedFacts int `json:"limited_facts"` // facts in the cells of the Limited stations
	// MaxShiftNS: the largest move of the refinement (--clock refined), and
	// the knots it moved.
	MaxShiftNS float64 `json:"max_shift_ns"`
	Moved      int     `json:"moved_points"` // knots of the move that are not 0
}

// RankErrorBars is one rank's clock error bars over the run
// (imbalance.json clock.error_bars): the estimated error of its corrected
// timestamps against the reference clock (correct.Corrector.ErrorBar), probed
// over the span of its sync knots.
type RankErrorBars struct {
	Rank int32 `json:"rank"` // world rank
	// MedianNS and MaxNS over the rank's knot span (probed evenly in time).
	MedianNS float64 `json:"median_ns"`
	MaxNS    float64 `json:"max_ns"` // the largest error bar over the rank's knot span, ns
	// Series: up to 16 (merge.ErrorBarSlices) equal slices of the knot span, each
	// [global start ns relative to the run origin, largest bar ns].
	Series [][2]float64 `json:"series"`
}

// RankBoundNS is rank's typical bound (0 for rank 0, the reference): from
// the happened-before facts where the trace has some about it, else the
// median of its clock error bars (errorbars_summary.go), else its sync-path bound
// at the knots; -1 when none is known.
func (q *ClockQuality) RankBoundNS(rank int32) float64 {
	if rank == 0 {
		return 0
	}
	for _, b := range q.Bounds {
		if b.Rank == rank && b.Facts > 0 {
			return b.TypicalNS
		}
	}
	if rank > 0 && int(rank) < len(q.ErrBarsByRank) && q.ErrBarsByRank[rank] >= 0 {
		return q.ErrBarsByRank[rank]
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
// the happened-before facts, or without facts the largest rank's median
// clock error bar, or without those the largest sync-path bound (-1: none
// known).
func (q *ClockQuality) FlagBoundNS() float64 {
	if q.TypicalBoundNS >= 0 {
		return q.TypicalBoundNS
	}
	if len(q.ErrorBars) > 0 { // the largest rank's median error bar
		m := 0.0
		for _, b := range q.ErrorBars {
			m = max(m, b.MedianNS)
		}
		return m
	}
	return q.SyncBoundNS
}

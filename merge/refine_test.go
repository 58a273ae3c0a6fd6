package merge

import (
	"math"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
)

func TestRefinePoints(t *testing.T) {
	inf := math.Inf(1)
	c := func(lo, hi float64) hbCell { return hbCell{lo: lo, hi: hi, n: 1} }
	empty := hbCell{lo: -inf, hi: inf}
	for _, tc := range []struct {
		name  string
		cells []hbCell
		want  []float64
	}{
		{"interp already inside: no move", []hbCell{c(-2, 3), c(-1, 1)}, []float64{0, 0, 0}},
		{"clock too late: moved up to the nearest fact", []hbCell{c(5, 9), c(6, 8)}, []float64{5, 6, 6}},
		{"too early", []hbCell{c(-9, -4)}, []float64{-4, -4}},
		{"empty cell between: free, ramps back", []hbCell{c(5, 9), empty, c(-1, 1)}, []float64{5, 5, 0, 0}},
		{"contradictory cell: its midpoint", []hbCell{c(4, 2)}, []float64{3, 3}},
		{"neighbours disagree at a point: halfway", []hbCell{c(5, 6), c(1, 2)}, []float64{5, 3.5, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := refinePoints(tc.cells)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got { // values stay refineMarginNS inside the ranges
				if math.Abs(got[i]-tc.want[i]) > 2*refineMarginNS {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestRefineKnots_Values: the move is the grid move (refinePoints,
// linear between the points) wherever that lies inside the ranges of the
// cells whose calls are there; where neighbouring cells disagree each
// cell's calls get the value of its range nearest the grid move. Values
// stay refineMarginNS inside the ranges.
func TestRefineKnots_Values(t *testing.T) {
	const step = 1e6
	inf := math.Inf(1)
	empty := hbCell{lo: -inf, hi: inf}
	r := func(lo, hi float64) hbCell { return hbCell{lo: lo, hi: hi, n: 1} }
	type at struct{ g, want float64 }
	for _, tc := range []struct {
		name  string
		cells []hbCell
		want  []at
	}{
		{"interp already inside: no move", []hbCell{r(-2, 3), r(-1, 1)}, []at{{0, 0}, {0.5e6, 0}, {1.5e6, 0}, {3e6, 0}}},
		{"clock too late: the grid move, inside both", []hbCell{r(5, 9), r(6, 8)}, []at{{0.1e6, 5.1}, {0.9e6, 5.9}, {1.5e6, 6}}},
		{"too early", []hbCell{r(-9, -4)}, []at{{-1e6, -4}, {0.5e6, -4}, {2e6, -4}}},
		{"empty cells between: free, back to 0", []hbCell{r(5, 9), empty, empty, r(-1, 1)}, []at{{0.5e6, 5}, {2e6, 0}, {3.5e6, 0}}},
		{"contradictory cell: its midpoint", []hbCell{r(4, 2)}, []at{{0.5e6, 3}}},
		{"neighbours disagree: each its range's value nearest the grid move", []hbCell{r(5, 6), r(1, 2)}, []at{{0.1e6, 5}, {0.9e6, 5}, {1.1e6, 2}, {1.9e6, 1.25}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for j := range tc.cells { // calls from 0.1 to 0.9 of the cell
				tc.cells[j].first, tc.cells[j].last = (float64(j)+0.1)*step, (float64(j)+0.9)*step
			}
			ks, lim := refineKnots(tc.cells, 0, step)
			if lim.Points != 0 {
				t.Errorf("limited %+v", lim)
			}
			a := newRankAdjust(0, step, ks)
			for _, x := range tc.want {
				if v := a.At(x.g); math.Abs(v-x.want) > 2*refineMarginNS {
					t.Errorf("δ(%g) = %g, want %g (knots %v)", x.g, v, x.want, ks)
				}
			}
		})
	}
}

func TestHBGridBoundsAndAdjust(t *testing.T) {
	h := newHBGrid(0, 1e9, 3) // 1 s over RefineCells cells, at least 50 ms each
	if h.step != RefineMinCellNS {
		t.Fatalf("step %g, want %g", h.step, RefineMinCellNS)
	}
	// rank 1: error in [3, 5] µs around 0.1 s; rank 2: in [-1, 1] µs.
	h.add(1, 0.1e9, 0.1e9+1e3, 3e3, 6e3)
	h.add(1, 0.12e9, 0.12e9+1e3, 2e3, 5e3)
	h.add(2, 0.1e9, 0.1e9+1e3, -1e3, 1e3)
	h.add(0, 0.1e9, 0.1e9+1e3, -1, 1) // rank 0 is the reference: ignored
	bs, ref := h.bounds(0, true)
	if len(bs) != 2 || bs[0].Rank != 1 || bs[1].Rank != 2 {
		t.Fatalf("bounds %+v", bs)
	}
	if b := bs[0]; b.Facts != 2 || b.BoundNS != 5e3 || b.MedianWidthNS != 2e3 || b.MaxWidthNS != 2e3 || b.Outside != 1 || b.Moved != 2 || math.Abs(b.MaxShiftNS-3e3) > 2*refineMarginNS {
		t.Errorf("rank 1: %+v", b)
	}
	if b := bs[1]; b.BoundNS != 1e3 || b.Outside != 0 || b.Moved != 0 {
		t.Errorf("rank 2: %+v", b)
	}
	if _, ok := ref.Points[2]; ok {
		t.Errorf("rank 2 needs no move, got %v", ref.Points[2])
	}
	a := newRankAdjust(ref.Start, ref.Step, ref.Points[1])
	// Facts only in cell 2 ([0.1, 0.15) s): no move before cell 1, a ramp
	// across the empty cell 1, the fact's nearest value inside cell 2.
	for _, x := range []struct{ g, want float64 }{{0, 0}, {0.025e9, 0}, {0.075e9, 1.5e3}, {0.1e9, 3e3}, {0.14e9, 3e3}} {
		if v := a.At(x.g); math.Abs(v-x.want) > 2*refineMarginNS {
			t.Errorf("move at %g ns: %g, want %g", x.g, v, x.want)
		}
	}
	q := datamodel.ClockQuality{Bounds: bs}
	summariseBounds(&q)
	if q.BoundRanks != 2 || q.BoundNS != 5e3 || q.RefineMoved != 1 || !q.BelowBound(5e3, 1, 2) || q.BelowBound(7e3, 1, 2) || q.BelowBound(1, 1, 7) {
		t.Errorf("summary %+v", q)
	}
}

// TestRefineKnots_DisjointNeighboursMeetEveryFact: constructed cells on a
// 1 ms grid (facts between first and last); where neighbouring ranges are
// disjoint the move takes two knots, so δ lies inside every consistent
// cell's range over all its calls (each fact holds after the move), and
// the corrected clock g - δ(g) never runs backwards: every segment's slope
// is at most RefineMaxRate (and so below 1).
func TestRefineKnots_DisjointNeighboursMeetEveryFact(t *testing.T) {
	const step = 1e6
	c := func(lo, hi, first, last float64) hbCell {
		return hbCell{lo: lo, hi: hi, first: first, last: last, n: 3}
	}
	empty := hbCell{lo: math.Inf(-1), hi: math.Inf(1)}
	for _, tc := range []struct {
		name    string
		cells   []hbCell
		limited int
	}{
		{"agree: no split", []hbCell{c(-2, 3, 1e5, 9e5), c(1, 4, 1.1e6, 1.9e6)}, 0},
		{"disjoint, falling", []hbCell{c(5, 6, 1e5, 8e5), c(1, 2, 1.2e6, 1.9e6)}, 0},
		{"disjoint, rising across 0", []hbCell{c(-6, -5, 1e5, 8e5), c(3, 4, 1.2e6, 1.9e6)}, 0},
		{"disjoint both above 0, one fact each", []hbCell{c(9, 9.5, 5e5, 5e5), c(10, 12, 1.5e6, 1.5e6)}, 0},
		{"two disagreements in a row", []hbCell{c(1, 2, 1e5, 9e5), c(5, 6, 1.1e6, 1.9e6), c(-3, -2, 2.1e6, 2.9e6)}, 0},
		{"disjoint across an empty cell: a ramp, no split", []hbCell{c(5, 6, 1e5, 8e5), empty, c(-3, -2, 2.1e6, 2.9e6)}, 0},
		{"contradictory cell next to a disjoint one", []hbCell{c(4, 2, 1e5, 8e5), c(6, 7, 1.2e6, 1.9e6)}, 0},
		{"a call straddles an agreeing point: held", []hbCell{c(-9, -6, 1e5, 1.05e6), c(-7, -5, 1.2e6, 1.9e6), c(-3, -1, 2.1e6, 2.9e6)}, 0},
		{"a wide cell 20 ns before a tight one leans towards it", []hbCell{c(-100, 100, 1e5, step-10), c(50, 60, step+10, 1.9e6)}, 0},
		{"a cell far above, then a free stretch: the way back keeps the slope", []hbCell{c(30000, 40000, 1e5, 9e5), empty, c(-100, 100, 2.6e6, 2.9e6)}, 0},
		{"a call spans two grid points: held over both", []hbCell{c(-9, -6, 1e5, 2.5e6), empty, c(-3, -1, 2.6e6, 2.9e6)}, 0},
		{"a call straddles a disjoint point", []hbCell{c(5, 6, 1e5, 1.05e6), c(1, 2, 1.2e6, 1.9e6)}, 0},
		{"facts 20 ns apart across the point: limited", []hbCell{c(5, 6, 1e5, step-10), c(1, 2, step+10, 1.9e6)}, 1},
		{"calls overlapping across the point: limited", []hbCell{c(5, 6, 1e5, step+10), c(1, 2, step+5, 1.9e6)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, lim := refineKnots(tc.cells, 0, step)
			if lim.Points != tc.limited || lim.Facts != 3*tc.limited {
				t.Errorf("limited %+v, want %d points, %d facts (knots %v)", lim, tc.limited, 3*tc.limited, ks)
			}
			for i := 1; i < len(ks); i++ {
				a, b := ks[i-1], ks[i]
				if b.G <= a.G {
					t.Fatalf("knots not increasing: %v", ks)
				}
				s := (b.D - a.D) / (b.G - a.G)
				if s >= 1 || math.Abs(s) > RefineMaxRate*(1+1e-9) {
					t.Errorf("segment %v-%v: slope %g (corrected clock rate %g)", a, b, s, 1-s)
				}
			}
			adj := newRankAdjust(0, step, ks)
			lin := func(g float64) float64 { // plain interpolation through the knots
				if g <= ks[0].G {
					return ks[0].D
				}
				for i := 1; i < len(ks); i++ {
					if g <= ks[i].G {
						a, b := ks[i-1], ks[i]
						return a.D + (g-a.G)/(b.G-a.G)*(b.D-a.D)
					}
				}
				return ks[len(ks)-1].D
			}
			for g := -step / 2; g < float64(len(tc.cells)+1)*step; g += step / 64 {
				if v, w := adj.At(g), lin(g); math.Abs(v-w) > 1e-9 {
					t.Fatalf("at(%g) = %g, interpolation %g", g, v, w)
				}
			}
			if tc.limited > 0 {
				return // facts next to a limited point may stay violated
			}
			for i, cl := range tc.cells {
				if cl.n == 0 || cl.lo > cl.hi {
					continue
				}
				// δ is linear between knots: inside the range over
				// [first, last] iff at both ends and every knot between.
				gs := []float64{cl.first, cl.last}
				for _, k := range ks {
					if k.G > cl.first && k.G < cl.last {
						gs = append(gs, k.G)
					}
				}
				for _, g := range gs {
					// strictly inside: rounding cannot break the fact
					if v := adj.At(g); v <= cl.lo || v >= cl.hi {
						t.Errorf("cell %d [%g, %g]: δ(%g) = %g breaks its facts (knots %v)", i, cl.lo, cl.hi, g, v, ks)
					}
				}
			}
		})
	}
}

// TestRefineKnots_AboutOneKnotPerGridPoint: where cells agree, their
// stations lie on the grid move and are dropped, as are the zeros of free
// stretches: no more knots than grid points (memory per rank as before).
func TestRefineKnots_AboutOneKnotPerGridPoint(t *testing.T) {
	const step = 1e6
	var cs []hbCell
	for j := 0; j < 40; j++ {
		c := hbCell{lo: math.Inf(-1), hi: math.Inf(1)}
		if j%10 != 9 { // every tenth cell without facts
			lo := 1e3 * math.Sin(float64(j)/7)
			c = hbCell{lo: lo - 50, hi: lo + 50, first: (float64(j) + 0.2) * step, last: (float64(j) + 0.7) * step, n: 2}
		}
		cs = append(cs, c)
	}
	cs = append(cs, make([]hbCell, 20)...) // a long stretch without facts
	for j := 40; j < 60; j++ {
		cs[j] = hbCell{lo: math.Inf(-1), hi: math.Inf(1)}
	}
	cs = append(cs, hbCell{lo: 200, hi: 300, first: 60.5 * step, last: 60.6 * step, n: 1})
	ks, lim := refineKnots(cs, 0, step)
	if lim.Points != 0 || len(ks) > len(cs)+1 {
		t.Errorf("%d knots for %d grid points (limited %+v)", len(ks), len(cs)+1, lim)
	}
	a := newRankAdjust(0, step, ks)
	for j, c := range cs {
		if c.n == 0 {
			continue
		}
		for _, g := range []float64{c.first, c.last} {
			if v := a.At(g); v <= c.lo || v >= c.hi {
				t.Errorf("cell %d [%g, %g]: δ(%g) = %g", j, c.lo, c.hi, g, v)
			}
		}
	}
	t.Logf("%d knots for %d grid points", len(ks), len(cs)+1)
}

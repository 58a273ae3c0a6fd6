package merge

import (
	"math"
	"testing"
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
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Fatalf("got %v, want %v", got, tc.want)
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
	h.add(1, 0.1e9, 3e3, 6e3)
	h.add(1, 0.12e9, 2e3, 5e3)
	h.add(2, 0.1e9, -1e3, 1e3)
	h.add(0, 0.1e9, -1, 1) // rank 0 is the reference: ignored
	bs, ref := h.bounds(0, true)
	if len(bs) != 2 || bs[0].Rank != 1 || bs[1].Rank != 2 {
		t.Fatalf("bounds %+v", bs)
	}
	if b := bs[0]; b.Facts != 2 || b.BoundNS != 5e3 || b.MedianWidthNS != 2e3 || b.Outside != 1 || b.Moved != 2 || b.MaxShiftNS != 3e3 {
		t.Errorf("rank 1: %+v", b)
	}
	if b := bs[1]; b.BoundNS != 1e3 || b.Outside != 0 || b.Moved != 0 {
		t.Errorf("rank 2: %+v", b)
	}
	if _, ok := ref.Points[2]; ok {
		t.Errorf("rank 2 needs no move, got %v", ref.Points[2])
	}
	a := &rankAdjust{start: ref.Start, step: ref.Step, d: ref.Points[1]}
	// Facts only in cell 2 ([0.1, 0.15) s): no move before cell 1, a ramp
	// across the empty cell 1, the fact's nearest value inside cell 2.
	for _, x := range []struct{ g, want float64 }{{0, 0}, {0.025e9, 0}, {0.075e9, 1.5e3}, {0.1e9, 3e3}, {0.14e9, 3e3}} {
		if v := a.at(x.g); math.Abs(v-x.want) > 1e-6 {
			t.Errorf("move at %g ns: %g, want %g", x.g, v, x.want)
		}
	}
	q := ClockQuality{Bounds: bs}
	summariseBounds(&q)
	if q.BoundRanks != 2 || q.BoundNS != 5e3 || q.RefineMoved != 1 || !q.BelowBound(5e3, 1, 2) || q.BelowBound(7e3, 1, 2) || q.BelowBound(1, 1, 7) {
		t.Errorf("summary %+v", q)
	}
}

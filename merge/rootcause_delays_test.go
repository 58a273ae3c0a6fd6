package merge

import (
	"math"
	"math/rand/v2"
	"testing"
)

// delaysByTable is delays as the definition reads: the waiting rank's
// time per region over its interval, summed in a table from 0 in the
// segments' order, subtracted from the side's time in each region.
func delaysByTable(a *rcRank, sa, pa uint64, sd *rcSide) ([]float64, float64) {
	tA := map[int32]float64{}
	for p := sa; p < pa; p++ {
		g := a.seg(p)
		tA[g.region] += g.dur
	}
	dk := make([]float64, len(sd.tB))
	D := 0.0
	for i, x := range sd.tB {
		dk[i] = x.amt - tA[int32(x.cause)]
		if dk[i] > 0 {
			D += dk[i]
		}
	}
	return dk, D
}

// sideByTable is a side's regions as the table by region gives them:
// each region's time (its segments' time less their waits, summed from
// 0 in order) where not 0, in the order the regions were first met (met
// again once their sum went back to 0), and the first start and last
// end of its segments.
func sideByTable(b *rcRank, sb, pb uint64) ([]rcEnt, [][2]float64, float64) {
	t, from, to := map[int32]float64{}, map[int32]float64{}, map[int32]float64{}
	var order []int32
	W := 0.0
	for p := sb; p < pb; p++ {
		g := b.seg(p)
		if t[g.region] == 0 {
			order = append(order, g.region)
			from[g.region] = g.start
		}
		t[g.region] += g.dur - g.wait
		to[g.region] = g.start + g.dur
		if !(g.wait <= 0) {
			W += g.wait
		}
	}
	var tB []rcEnt
	var span [][2]float64
	for _, r := range order {
		if t[r] != 0 {
			tB = append(tB, rcEnt{int64(r), t[r]})
			span = append(span, [2]float64{from[r], to[r]})
		}
		t[r] = 0
	}
	return tB, span, W
}

// TestRootCause_WaitersDelaysReadInOrderAgreeWithTheTable builds
// intervals of a delaying rank and a waiting one (the same regions in
// the same order with other times, as an SPMD loop has them; other
// orders; repeated regions; times of 0, −0 and NaN; wait states that
// leave a region no time) and checks that delays, which reads the
// waiting rank's times position by position when both intervals run
// through the same distinct regions, gives every region's delay and
// their sum bit for bit as a table by region does; that the side, read
// in order when its regions are distinct, has the table's regions,
// times, spans and waits bit for bit; that a side marked
// as a sequence is one (region i is the delaying rank's segment i); and
// that most of the SPMD intervals took the positional read.
func TestRootCause_WaitersDelaysReadInOrderAgreeWithTheTable(t *testing.T) {
	type delaysCase struct {
		name                  string
		same, repeat, oddTime float64 // probabilities
	}
	cases := []delaysCase{
		{"SPMD: the same regions in the same order", 1, 0, 0},
		{"mostly the same regions, some other orders", 0.7, 0, 0},
		{"repeated regions", 0.5, 0.4, 0},
		{"times of 0, -0 and NaN and waits that leave no time", 0.8, 0.1, 0.15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const nregs = 7
			s := &RootCauseStream{hist: 1 << 12, regions: make([]rcRegionKey, nregs+1)}
			a, b := s.rank(0), s.rank(1)
			rng := rand.New(rand.NewPCG(3, uint64(len(tc.name))))
			dur := func() float64 {
				if rng.Float64() < tc.oddTime {
					return []float64{0, math.Copysign(0, -1), math.NaN()}[rng.IntN(3)]
				}
				return float64(1 + rng.IntN(1000))
			}
			positional, spmd := 0, 0
			for trial := 0; trial < 4000; trial++ {
				n := 1 + rng.IntN(5)
				regsB := rng.Perm(nregs)[:n]
				for i := range regsB {
					if rng.Float64() < tc.repeat {
						regsB[i] = regsB[rng.IntN(n)]
					}
				}
				regsA := append([]int(nil), regsB...)
				same := rng.Float64() < tc.same
				if !same {
					regsA = rng.Perm(nregs)[:1+rng.IntN(5)]
				}
				sb := b.n
				for _, r := range regsB {
					g := rcSeg{dur: dur(), region: int32(r)}
					if rng.Float64() < tc.oddTime {
						g.wait = g.dur // a wait state that leaves the region no time
					}
					s.push(b, g)
				}
				pb := s.push(b, rcSeg{dur: 1, region: nregs})
				sa := a.n
				for _, r := range regsA {
					s.push(a, rcSeg{dur: dur(), region: int32(r)})
				}
				pa := s.push(a, rcSeg{dur: 1, region: nregs})
				sd := s.newSide(b, sb, pb)
				wantTB, wantSpan, wantW := sideByTable(b, sb, pb)
				if len(sd.tB) != len(wantTB) || math.Float64bits(sd.W) != math.Float64bits(wantW) {
					t.Fatalf("trial %d: side of %d regions, W %v; the table's %d, %v", trial, len(sd.tB), sd.W, len(wantTB), wantW)
				}
				for i, x := range wantTB {
					g := sd.tB[i]
					if g.cause != x.cause || math.Float64bits(g.amt) != math.Float64bits(x.amt) ||
						math.Float64bits(sd.reg[i].span[0]) != math.Float64bits(wantSpan[i][0]) ||
						math.Float64bits(sd.reg[i].span[1]) != math.Float64bits(wantSpan[i][1]) {
						t.Fatalf("trial %d: side region %d: %v %v, the table's %v %v", trial, i, g, sd.reg[i].span, x, wantSpan[i])
					}
				}
				if sd.seq {
					for i, x := range sd.tB {
						if g := b.seg(sb + uint64(i)); int64(g.region) != x.cause {
							t.Fatalf("trial %d: a side marked as a sequence has region %d at %d, segment %d has %d",
								trial, x.cause, i, sb+uint64(i), g.region)
						}
					}
				}
				inOrder := sd.seq && pa-sa == uint64(len(sd.tB))
				for i := 0; inOrder && i < len(sd.tB); i++ {
					inOrder = int64(a.seg(sa+uint64(i)).region) == sd.tB[i].cause
				}
				if inOrder {
					positional++
				}
				if same && tc.repeat == 0 && tc.oddTime == 0 {
					spmd++
				}
				dk, D := s.delays(a, sa, pa, sd)
				wantDk, wantD := delaysByTable(a, sa, pa, sd)
				if len(dk) != len(wantDk) {
					t.Fatalf("trial %d: %d delays for %d regions", trial, len(dk), len(wantDk))
				}
				for i, w := range wantDk {
					if got := dk[i]; math.Float64bits(got) != math.Float64bits(w) {
						t.Fatalf("trial %d (in order %v): region %d's delay %v (%#x), the table's %v (%#x)",
							trial, inOrder, sd.tB[i].cause, got, math.Float64bits(got), w, math.Float64bits(w))
					}
				}
				if math.Float64bits(D) != math.Float64bits(wantD) {
					t.Fatalf("trial %d (in order %v): Σd %v, the table's %v", trial, inOrder, D, wantD)
				}
				for reg, x := range s.tA {
					if x != 0 {
						t.Fatalf("trial %d: the scratch table keeps %v in region %d", trial, x, reg)
					}
				}
			}
			if positional < spmd*9/10 {
				t.Errorf("%d of %d SPMD intervals read in order, want most", positional, spmd)
			}
			if positional == 0 && tc.same > 0.5 {
				t.Errorf("no interval read in order")
			}
			t.Logf("%d of 4000 intervals read in order", positional)
		})
	}
}

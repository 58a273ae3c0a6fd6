package merge

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gclock/gclock/trace"
)

// exactSum is the exact sum of vs, each first rounded to the nearest
// 2^-32 ns (ties to even), as a big.Rat: rcSum's truth.
func exactSum(vs []float64) *big.Rat {
	sum := new(big.Rat)
	for _, v := range vs {
		x := new(big.Float).SetFloat64(v)
		x.SetMantExp(x, 32) // v·2^32, exact
		i, acc := x.Int(nil)
		// round to nearest, ties to even: compare the fraction with 1/2
		frac := new(big.Float).Sub(x, new(big.Float).SetInt(i))
		if acc != big.Exact {
			if frac.Sign() < 0 {
				frac.Neg(frac)
			}
			switch frac.Cmp(big.NewFloat(0.5)) {
			case 1:
				i.Add(i, big.NewInt(int64(x.Sign())))
			case 0:
				if i.Bit(0) == 1 {
					i.Add(i, big.NewInt(int64(x.Sign())))
				}
			}
		}
		sum.Add(sum, new(big.Rat).SetFrac(i, new(big.Int).Lsh(big.NewInt(1), 32)))
	}
	return sum
}

// TestRcSum_OrderFreeAndCorrectlyRounded: whatever the order of the
// amounts and however they are split into partial sums merged later
// (the partitioned analysis' processes), an rcSum has the same bits, and
// its float is the exact sum of the amounts rounded to 2^-32 ns, rounded
// once to float64: amounts of every size, negative ones, sums crossing
// 2^64 units (and back), beyond 2^62 units (the wide path), and the
// largest within range.
func TestRcSum_OrderFreeAndCorrectlyRounded(t *testing.T) {
	cases := []struct {
		name string
		gen  func(r *rand.Rand) float64
	}{
		{"waits of ns to ms", func(r *rand.Rand) float64 { return r.Float64() * math.Pow(10, float64(r.IntN(7))) }},
		{"credits of a third and tiny ones", func(r *rand.Rand) float64 { return (1.0 / 3) * math.Pow(10, float64(r.IntN(20)-12)) }},
		{"negative and positive", func(r *rand.Rand) float64 { return (r.Float64() - 0.5) * 1e6 }},
		{"around 2^32 ns: sums cross 2^64 units", func(r *rand.Rand) float64 { return 0x1p32 * (0.5 + r.Float64()) }},
		{"wide amounts, both signs", func(r *rand.Rand) float64 { return (r.Float64() - 0.5) * 0x1p80 }},
		{"near the range's end", func(r *rand.Rand) float64 { return 0x1p82 * r.Float64() }},
		{"halves of the unit: ties", func(r *rand.Rand) float64 { return float64(r.IntN(9)-4) * 0x1p-33 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 5))
			vs := make([]float64, 3000)
			for i := range vs {
				vs[i] = c.gen(rng)
			}
			var ref rcSum
			for _, v := range vs {
				ref.add(v)
			}
			want, _ := new(big.Float).SetRat(exactSum(vs)).Float64()
			if got := ref.float(); got != want {
				t.Fatalf("sum %v (%x), want %v (%x)", got, math.Float64bits(got), want, math.Float64bits(want))
			}
			for trial := 0; trial < 20; trial++ {
				perm := rng.Perm(len(vs))
				parts := make([]rcSum, 1+rng.IntN(7))
				for _, i := range perm {
					parts[rng.IntN(len(parts))].add(vs[i])
				}
				var got rcSum
				for _, p := range rng.Perm(len(parts)) {
					got.merge(parts[p])
				}
				if got != ref || got.cmp(ref) != 0 {
					t.Fatalf("trial %d: %d partial sums in another order give %+v, want %+v", trial, len(parts), got, ref)
				}
			}
		})
	}
}

// TestRcSum_NonFiniteAsFloatSums: NaN and infinities (and amounts
// beyond the range) give what a float64 sum gave, whatever the order;
// −0 and subnormal amounts add nothing.
func TestRcSum_NonFiniteAsFloatSums(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		name string
		vs   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"negative zero", []float64{math.Copysign(0, -1)}, 0},
		{"subnormal", []float64{5e-324, 1}, 1},
		{"NaN", []float64{1, nan, 2}, nan},
		{"+Inf", []float64{1, inf, -1e300}, inf},
		{"-Inf", []float64{-inf, 7}, -inf},
		{"+Inf and -Inf", []float64{inf, 3, -inf}, nan},
		{"beyond range", []float64{1e30, 1}, 1e30 + 1},
		{"a third", []float64{1.0 / 3}, math.RoundToEven((1.0/3)*0x1p32) / 0x1p32},
		{"cancels", []float64{0.25, 1e9, -1e9, -0.25}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, rev := range []bool{false, true} {
				var s rcSum
				for i := range c.vs {
					if rev {
						i = len(c.vs) - 1 - i
					}
					s.add(c.vs[i])
				}
				got := s.float()
				if math.Float64bits(got) != math.Float64bits(c.want) && !(math.IsNaN(got) && math.IsNaN(c.want)) {
					t.Fatalf("reversed %v: %v, want %v", rev, got, c.want)
				}
			}
		})
	}
}

// TestRcSum_CmpOrdersLikeTheValues: cmp orders sums as their values,
// across the 2^64-unit boundary and through negative ones.
func TestRcSum_CmpOrdersLikeTheValues(t *testing.T) {
	vals := []float64{-0x1p70, -0x1p32 - 1, -0x1p32, -1, -0x1p-32, 0, 0x1p-32, 1, 0x1p31, 0x1p32, 0x1p32 + 0.5, 0x1p70}
	for i, a := range vals {
		for j, b := range vals {
			var x, y rcSum
			x.add(a)
			y.add(b)
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := x.cmp(y); got != want {
				t.Fatalf("cmp(%v, %v) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestRegionCmp_ByContentNotFirstSeenIndex: two streams that met the same
// regions in different orders (as a partitioned analysis' processes
// number them) order cause keys alike by causeCmp: by rank, then by
// the regions' sites' (object, offset) and op, whatever their indices.
func TestRegionCmp_ByContentNotFirstSeenIndex(t *testing.T) {
	sites := []rcSiteKey{{"/bin/app", 0x40}, {"/bin/app", 0x400}, {"/lib/libm.so", 0x10}, {"", 0x7f00}}
	type content struct {
		a, b rcSiteKey
		call bool
		op   trace.Op
	}
	regs := []content{
		{sites[0], sites[1], false, 0}, {sites[1], sites[0], false, 0}, {sites[0], rcSiteKey{}, true, 3},
		{sites[0], rcSiteKey{}, true, 5}, {sites[2], sites[3], false, 0}, {sites[3], sites[3], false, 0},
	}
	// the stream of one order of meeting: sites and regions numbered as met
	build := func(order []int) (*RootCauseStream, []int32) {
		s := &RootCauseStream{}
		siteID := map[rcSiteKey]int32{}
		id := func(k rcSiteKey) int32 {
			if v, ok := siteID[k]; ok {
				return v
			}
			siteID[k] = int32(len(s.siteKeys))
			s.siteKeys = append(s.siteKeys, k)
			return siteID[k]
		}
		regID := make([]int32, len(regs))
		for _, i := range order {
			k := rcRegionKey{a: id(regs[i].a), b: -1, op: regs[i].op}
			if !regs[i].call {
				k.b = id(regs[i].b)
			}
			regID[i] = int32(len(s.regions))
			s.regions = append(s.regions, k)
		}
		return s, regID
	}
	// content order, by (rank, region): the keys as the content they name
	sorted := func(order []int) [][2]int {
		s, regID := build(order)
		var keys []int64
		for rank := int32(0); rank < 3; rank++ {
			for i := range regs {
				keys = append(keys, rcCauseKey(rank, regID[i]))
			}
		}
		slices.SortFunc(keys, s.causeCmp)
		byID := map[int32]int{}
		for i, v := range regID {
			byID[v] = i
		}
		var out [][2]int
		for _, k := range keys {
			out = append(out, [2]int{int(k >> 32), byID[int32(uint32(k))]})
		}
		return out
	}
	want := sorted([]int{0, 1, 2, 3, 4, 5})
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		order := rng.Perm(len(regs))
		if got := sorted(order); !slices.Equal(got, want) {
			t.Fatalf("regions met in the order %v sort as %v, met in order: %v", order, got, want)
		}
	}
	// and the content order is the one documented: a call region (no
	// second site) before the compute regions of its first site; the
	// object-less site (path "") first
	if want[0] != [2]int{0, 5} {
		t.Fatalf("first: %v, want rank 0's region of the object-less sites", want[0])
	}
}

package merge

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEntSums_SumsLikeAMapInAddOrder: whatever the run's ranks (the
// direct table's width), entSums gives every key the sum a map built in
// the same order gives it, bit for bit, whether added a slice at a time
// (addAll) or a chain of nodes at a time (addChain, the flattens' loop), drops the zeros, sorts by key,
// and starts afresh after a reset: keys in the direct table, beyond its
// regions, of ranks outside the run, negative, with −0, NaN and sums
// that cancel to 0.
func TestEntSums_SumsLikeAMapInAddOrder(t *testing.T) {
	cases := []struct {
		name    string
		w       uint64 // ranks of the run
		ranks   int32  // keys' ranks drawn from [-2, ranks+2)
		regions int32  // keys' regions drawn from [-2, regions)
	}{
		{"no direct table", 0, 8, 50},
		{"8 ranks, all regions direct", 8, 8, 300},
		{"8 ranks, regions beyond the direct table", 8, 8, entDirectMax/8 + 500},
		{"3 ranks, a width that does not divide the bound", 3, 3, entDirectMax/3 + 40},
		{"16,384 ranks: the first 4 regions direct", 16384, 16384, 12},
		{"more ranks than the bound: none direct", entDirectMax + 1, 200, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.w), 7))
			tabs := []*entSums{{w: c.w}, {w: c.w}} // by addAll, by addChain
			for round := 0; round < 4; round++ {
				for _, tab := range tabs {
					tab.reset()
				}
				want := map[int64]float64{}
				var es []rcEnt
				for i := 0; i < 5000; i++ {
					var k int64
					if i > 0 && rng.IntN(3) == 0 { // a key seen before
						k = es[rng.IntN(len(es))].cause
					} else {
						k = rcCauseKey(rng.Int32N(c.ranks+4)-2, rng.Int32N(c.regions+2)-2)
					}
					v := float64(rng.IntN(2000)-1000) * 0.37
					switch rng.IntN(50) {
					case 0:
						v = math.Copysign(0, -1)
					case 1:
						v = math.NaN()
					case 2:
						v = -want[k] // cancels to 0
					}
					es = append(es, rcEnt{k, v})
				}
				a := cpArena{nodes: make([]cpNode, 1), ents: es}
				for lo := 0; lo < len(es); lo += 1 + lo%9 { // nodes of 1 to 9 entries
					part := es[lo:min(lo+1+lo%9, len(es))]
					tabs[0].addAll(part)
					a.nodes = append(a.nodes, cpNode{off: uint32(lo), n: uint32(len(part))})
					for _, e := range part {
						want[e.cause] += e.amt
					}
				}
				for x := len(a.nodes) - 1; x > 0; x-- { // the chain: newest first
					a.chain = append(a.chain, int32(x))
				}
				tabs[1].addChain(&a)
				var wl []rcEnt
				for k, v := range want {
					if v != 0 {
						wl = append(wl, rcEnt{k, v})
					}
				}
				slices.SortFunc(wl, func(a, b rcEnt) int { return cmp.Compare(a.cause, b.cause) })
				for ti, tab := range tabs {
					got := tab.appendTo(nil)
					if len(got) != len(wl) {
						t.Fatalf("round %d, table %d: %d sums, want %d", round, ti, len(got), len(wl))
					}
					for i := range got {
						if got[i].cause != wl[i].cause || math.Float64bits(got[i].amt) != math.Float64bits(wl[i].amt) {
							t.Fatalf("round %d, table %d: sum %d is %x: %v, want %x: %v", round, ti, i, got[i].cause, got[i].amt, wl[i].cause, wl[i].amt)
						}
					}
				}
			}
			for _, tab := range tabs {
				if uint64(len(tab.dval)) > entDirectMax || len(tab.dval) != len(tab.dfull) || len(tab.dused) != len(tab.dval) {
					t.Fatalf("direct table of %d sums (%d marks, %d slots), bound %d", len(tab.dval), len(tab.dfull), len(tab.dused), entDirectMax)
				}
			}
		})
	}
}

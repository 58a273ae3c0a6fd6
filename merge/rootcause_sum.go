package merge

import (
	"cmp"
	"slices"
)

// entSums sums amounts per cause key (rcCauseKey) like a
// map[int64]float64: the critical path's flattens add every (rank,
// region) amount of a chain of thousands of nodes, where a Go map cost
// about a fifth of the path's time. Keys of the first regions go to a
// table indexed by region·w + rank (w: the ranks of the run, set by the
// stream; 0: none), grown with the regions seen up to entDirectMax
// entries; the others to a flat open-addressing table. Each key's sum is
// built in the order of its adds, as with the map, so the sums are the
// same.
type entSums struct {
	w     uint64    // ranks of the direct table (0: no direct table)
	dval  []float64 // direct table: the sums (0 where not used)
	dfull []bool
	dused []int32 // direct slots taken, in the order they were taken

	keys []int64
	vals []float64
	full []bool
	used []int32 // occupied slots, in the order they were taken
}

// entDirectMax bounds entSums' direct table (8 + 1 bytes an entry): at
// 8 ranks it holds 8,192 regions, at 16,384 ranks the first 4.
const entDirectMax = 1 << 16

func (t *entSums) slot(k int64) uint64 {
	h := uint64(k) * 0x9e3779b97f4a7c15
	return (h ^ h>>32) & uint64(len(t.keys)-1)
}

// addAll adds each of es to its key's sum, in order.
func (t *entSums) addAll(es []rcEnt) {
	for _, e := range es {
		rk := uint64(e.cause >> 32)
		if i := uint64(uint32(e.cause))*t.w + rk; rk < t.w && i < uint64(len(t.dval)) {
			if !t.dfull[i] {
				t.dfull[i] = true
				t.dused = append(t.dused, int32(i))
			}
			t.dval[i] += e.amt
			continue
		}
		t.addSlow(e.cause, e.amt)
	}
}

// addChain adds the amounts of a's nodes a.chain, last to first (the
// path's oldest node first), as addAll of each would, in one loop.
func (t *entSums) addChain(a *cpArena) {
	w, dval, dfull, dused := t.w, t.dval, t.dfull, t.dused // (in registers)
	for c := len(a.chain) - 1; c >= 0; c-- {
		nd := &a.nodes[a.chain[c]]
		for _, e := range a.ents[nd.off : nd.off+nd.n] {
			rk := uint64(e.cause >> 32)
			if i := uint64(uint32(e.cause))*w + rk; rk < w && i < uint64(len(dval)) {
				if !dfull[i] {
					dfull[i] = true
					dused = append(dused, int32(i))
				}
				dval[i] += e.amt
				continue
			}
			t.dused = dused
			t.addSlow(e.cause, e.amt)
			dval, dfull, dused = t.dval, t.dfull, t.dused
		}
	}
	t.dused = dused
}

// addSlow adds v to k's sum when k is not in the direct table as it is:
// it grows the table to k's region when that stays within entDirectMax,
// else adds in the hash table.
func (t *entSums) addSlow(k int64, v float64) {
	rk, reg := uint64(k>>32), uint64(uint32(k))
	if maxR := entDirectMax / max(1, t.w); rk < t.w && reg < maxR {
		n := int(min(maxR, max(2*uint64(len(t.dval))/t.w, reg+1, 64)) * t.w)
		t.dval = append(t.dval, make([]float64, n-len(t.dval))...)
		t.dfull = append(t.dfull, make([]bool, n-len(t.dfull))...)
		i := reg*t.w + rk
		t.dfull[i] = true
		t.dval[i] += v
		t.dused = append(t.dused, int32(i))
		return
	}
	t.hashAdd(k, v)
}

// hashAdd adds v to k's sum in the hash table.
func (t *entSums) hashAdd(k int64, v float64) {
	if 4*(len(t.used)+1) > 3*len(t.keys) {
		t.grow()
	}
	m := uint64(len(t.keys) - 1)
	for i := t.slot(k); ; i = (i + 1) & m {
		if !t.full[i] {
			t.full[i], t.keys[i], t.vals[i] = true, k, 0
			t.vals[i] += v
			t.used = append(t.used, int32(i))
			return
		}
		if t.keys[i] == k {
			t.vals[i] += v
			return
		}
	}
}

// grow doubles the hash table, keeping the sums.
func (t *entSums) grow() {
	keys, vals, used := t.keys, t.vals, t.used
	n := max(64, 2*len(keys))
	t.keys, t.vals, t.full = make([]int64, n), make([]float64, n), make([]bool, n)
	t.used = make([]int32, 0, n)
	m := uint64(n - 1)
	for _, j := range used {
		i := t.slot(keys[j])
		for t.full[i] {
			i = (i + 1) & m
		}
		t.full[i], t.keys[i], t.vals[i] = true, keys[j], vals[j]
		t.used = append(t.used, int32(i))
	}
}

// reset empties the tables (their sizes kept).
func (t *entSums) reset() {
	for _, i := range t.dused {
		t.dfull[i], t.dval[i] = false, 0
	}
	t.dused = t.dused[:0]
	for _, i := range t.used {
		t.full[i] = false
	}
	t.used = t.used[:0]
}

// appendTo appends the non-zero sums, sorted by key, to dst.
func (t *entSums) appendTo(dst []rcEnt) []rcEnt {
	n := len(dst)
	for _, i := range t.dused {
		if v := t.dval[i]; v != 0 {
			u := uint64(i)
			dst = append(dst, rcEnt{rcCauseKey(int32(u%t.w), int32(u/t.w)), v})
		}
	}
	for _, i := range t.used {
		if v := t.vals[i]; v != 0 {
			dst = append(dst, rcEnt{t.keys[i], v})
		}
	}
	slices.SortFunc(dst[n:], func(a, b rcEnt) int { return cmp.Compare(a.cause, b.cause) })
	return dst
}

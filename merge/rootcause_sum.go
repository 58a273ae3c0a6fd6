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
	dused []int32 // direct slots taken, in the order they were taken: dused[:nu] (as long as dval)
	nu    int

	keys []int64
	vals []float64
	full []bool
	used []int32 // occupied slots, in the order they were taken
}

// entDirectMax bounds entSums' direct table (8 + 1 + 4 bytes an entry,
// 832 KB at most): at 8 ranks it holds 8,192 regions, at 16,384 ranks
// the first 4.
const entDirectMax = 1 << 16

func (t *entSums) slot(k int64) uint64 {
	h := uint64(k) * 0x9e3779b97f4a7c15
	return (h ^ h>>32) & uint64(len(t.keys)-1)
}

// addAll adds each of es to its key's sum, in order.
func (t *entSums) addAll(es []rcEnt) {
	for _, e := range es {
		t.add(e.cause, e.amt)
	}
}

// addChain adds the amounts of a's nodes a.chain, last to first (the
// path's oldest node first).
func (t *entSums) addChain(a *cpArena) {
	c, j := len(a.chain)-1, uint32(0)
	for {
		if c, j = t.addChainDirect(a, c, j); c < 0 {
			return
		}
		nd := &a.nodes[a.chain[c]]
		e := a.ents[nd.off+j]
		t.add(e.cause, e.amt)
		j++
	}
}

// addChainDirect adds the amounts of a's nodes a.chain[c], a.chain[c−1],
// …, a.chain[0], from entry j of the first, to their sums in the direct
// table up to the first key that is not in it, and returns its node and
// entry (c < 0: none; a loop without calls, its state in registers).
func (t *entSums) addChainDirect(a *cpArena, c int, j uint32) (int, uint32) {
	w, dval, nu := t.w, t.dval, t.nu
	dfull, dused := t.dfull[:len(dval)], t.dused[:len(dval)]
	nodes, ents, chain := a.nodes, a.ents, a.chain
	for ; c >= 0; c, j = c-1, 0 {
		nd := &nodes[chain[c]]
		for q, e := range ents[nd.off+j : nd.off+nd.n] {
			rk := uint64(e.cause >> 32)
			i := uint64(uint32(e.cause))*w + rk
			if rk >= w || i >= uint64(len(dval)) {
				t.nu = nu
				return c, j + uint32(q)
			}
			if !dfull[i] {
				dfull[i] = true
				dused[nu] = int32(i)
				nu++
			}
			dval[i] += e.amt
		}
	}
	t.nu = nu
	return -1, 0
}

// add adds v to k's sum: in the direct table when k's region is within
// entDirectMax (grown to it when needed), else in the hash table.
func (t *entSums) add(k int64, v float64) {
	rk, reg := uint64(k>>32), uint64(uint32(k))
	maxR := entDirectMax / max(1, t.w)
	if rk >= t.w || reg >= maxR {
		t.hashAdd(k, v)
		return
	}
	i := reg*t.w + rk
	if i >= uint64(len(t.dval)) {
		n := int(min(maxR, max(2*uint64(len(t.dval))/t.w, reg+1, 64)) * t.w)
		t.dval = append(t.dval, make([]float64, n-len(t.dval))...)
		t.dfull = append(t.dfull, make([]bool, n-len(t.dfull))...)
		t.dused = append(t.dused, make([]int32, n-len(t.dused))...)
	}
	if !t.dfull[i] {
		t.dfull[i] = true
		t.dused[t.nu] = int32(i)
		t.nu++
	}
	t.dval[i] += v
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
	for _, i := range t.dused[:t.nu] {
		t.dfull[i], t.dval[i] = false, 0
	}
	t.nu = 0
	for _, i := range t.used {
		t.full[i] = false
	}
	t.used = t.used[:0]
}

// appendTo appends the non-zero sums, sorted by key, to dst.
func (t *entSums) appendTo(dst []rcEnt) []rcEnt {
	n := len(dst)
	for _, i := range t.dused[:t.nu] {
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

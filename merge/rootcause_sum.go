package merge

import (
	"cmp"
	"slices"
)

// entSums sums amounts per cause key (rcCauseKey) like a
// map[int64]float64, in a flat open-addressing table: the critical
// path's flattens add every (rank, region) amount of a chain of
// thousands of nodes, where a Go map cost about a fifth of the path's
// time. Each key's sum is built in the order of its adds, as with the
// map, so the sums are the same.
type entSums struct {
	keys []int64
	vals []float64
	full []bool
	used []int32 // occupied slots, in the order they were taken
}

func (t *entSums) slot(k int64) uint64 {
	h := uint64(k) * 0x9e3779b97f4a7c15
	return (h ^ h>>32) & uint64(len(t.keys)-1)
}

// add adds v to k's sum.
func (t *entSums) add(k int64, v float64) {
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

// grow doubles the table, keeping the sums.
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

// reset empties the table (its size kept).
func (t *entSums) reset() {
	for _, i := range t.used {
		t.full[i] = false
	}
	t.used = t.used[:0]
}

// appendTo appends the non-zero sums, sorted by key, to dst.
func (t *entSums) appendTo(dst []rcEnt) []rcEnt {
	n := len(dst)
	for _, i := range t.used {
		if v := t.vals[i]; v != 0 {
			dst = append(dst, rcEnt{t.keys[i], v})
		}
	}
	slices.SortFunc(dst[n:], func(a, b rcEnt) int { return cmp.Compare(a.cause, b.cause) })
	return dst
}

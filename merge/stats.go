package merge

import (
	"math"
	"math/bits"
	"sort"

	"github.com/gclock/gclock/merge/datamodel"
	"gonum.org/v1/gonum/stat"
)

// ReservoirSize bounds the samples kept per metric for quantiles.
//
// Count, total, mean and max are exact over all samples. Median and p95 come
// from a uniform reservoir sample (Vitter's Algorithm R, deterministic
// seed) of at most ReservoirSize values: exact while a metric has fewer
// samples, otherwise an estimate whose rank error is about
// 1/sqrt(ReservoirSize) ≈ 1% of the distribution. Memory per metric is
// therefore bounded (64 KiB) however long the trace is.
const ReservoirSize = 8192

// accum accumulates one metric.
type accum struct {
	n     int
	sum   float64
	max   float64
	res   []float64
	state uint64 // xorshift state for reservoir replacement
}

func (a *accum) add(x float64) {
	a.n++
	a.sum += x
	if a.n == 1 || x > a.max {
		a.max = x
	}
	if len(a.res) < ReservoirSize {
		a.res = append(a.res, x)
		return
	}
	if a.state == 0 {
		a.state = 0x9E3779B97F4A7C15
	}
	a.state ^= a.state << 13
	a.state ^= a.state >> 7
	a.state ^= a.state << 17
	if j, _ := bits.Mul64(a.state, uint64(a.n)); j < ReservoirSize { // uniform in [0,n)
		a.res[j] = x
	}
}

// stats summarises the accumulated samples (gonum/stat for mean and
// quantiles of the reservoir).
func (a *accum) stats() datamodel.Stats {
	s := datamodel.Stats{Count: a.n, Total: a.sum, Max: a.max}
	if a.n == 0 {
		return s
	}
	s.Mean = a.sum / float64(a.n)
	x := append([]float64(nil), a.res...)
	sort.Float64s(x)
	// Empirical: the smallest sample with at least the fraction p of the
	// samples at or below it (an observed value, no interpolation).
	s.Median = stat.Quantile(0.5, stat.Empirical, x, nil)
	s.P95 = stat.Quantile(0.95, stat.Empirical, x, nil)
	if len(x) == a.n { // exact: use gonum's mean too (identical up to rounding)
		s.Mean = stat.Mean(x, nil)
	}
	return s
}

// Histogram edges: log-spaced from 10 ns to 100 s, HistPerDecade bins per
// decade. Values below 10 ns (including zero waits) land in bin 0.
const (
	HistMinNS     = 10.0
	HistDecades   = 10
	HistPerDecade = 5
)

var histEdges = func() []float64 {
	n := HistDecades*HistPerDecade + 1
	e := make([]float64, n)
	for i := range e {
		e[i] = HistMinNS * math.Pow(10, float64(i)/HistPerDecade)
	}
	return e
}()

// HistEdges returns a copy of the fixed histogram edges (ns).
func HistEdges() []float64 { return append([]float64(nil), histEdges...) }

type hist struct {
	counts [HistDecades * HistPerDecade]int
}

// histStart[e] is the bin of 2^(e-1023), the lowest value whose float64
// has the biased exponent e (-1 below the first edge): hist.add starts
// there and steps at most twice, since a binade spans log10(2) ≈ 0.3
// decade, 1.5 bins.
var histStart = func() (s [1024 + 64]int8) {
	for e := range s {
		x := math.Ldexp(1, e-1023)
		s[e] = int8(histBinSearch(x))
	}
	return s
}()

// histBinSearch is the bin of x: the last edge ≤ x (-1 below the first
// edge, NaN included), by binary search.
func histBinSearch(x float64) int {
	lo, hi := 0, len(histEdges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if histEdges[m] <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// add counts x in its bin: the last edge ≤ x, clamped into the bins
// (below 10 ns, zero, negative and NaN in bin 0; beyond 100 s in the
// last). The same bin as histBinSearch, found from x's binary exponent
// instead of a binary search's unpredictable branches (the search loop
// was ≈ 2 % of a default tracemerge run's CPU samples in perf, 2026-11-26).
func (h *hist) add(x float64) {
	b := 0
	if x >= histEdges[0] {
		b = len(h.counts) - 1
		if x < histEdges[len(h.counts)] {
			b = int(histStart[math.Float64bits(x)>>52&0x7ff])
			for histEdges[b+1] <= x {
				b++
			}
		}
	}
	h.counts[b]++
}

func (h *hist) export() datamodel.Histogram {
	return datamodel.Histogram{Edges: HistEdges(), Counts: append([]int(nil), h.counts[:]...)}
}

package merge

import (
	"math"
	"sort"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
)

// ErrorBarSlices is how many time slices RankErrorBars.Series has.
const ErrorBarSlices = 16

// errorBarProbes per rank over its knot span (the summary's median and
// slices; at 16,384 ranks 17 M bar evaluations).
const errorBarProbes = 1024

// errorBarSummaries summarises every rank's error bars (ranks whose bars
// are unknown are left out) and indexes their medians by world rank.
func (a *analyzer) errorBarSummaries() (out []datamodel.RankErrorBars, byRank []float64) {
	for r, rs := range a.ranks {
		if rs == nil || rs.corr == nil {
			continue
		}
		s, ok := summarizeErrorBars(rs.corr, int32(r))
		if !ok {
			continue
		}
		for len(byRank) <= r {
			byRank = append(byRank, -1)
		}
		byRank[r] = s.MedianNS
		out = append(out, s)
	}
	return out, byRank
}

// summarizeErrorBars probes c's error bars over its knots' span.
func summarizeErrorBars(c *correct.Corrector, rank int32) (datamodel.RankErrorBars, bool) {
	s := datamodel.RankErrorBars{Rank: rank}
	t0, t1, n := c.KnotSpan()
	if n < 3 || c.ErrorBar(t0) < 0 {
		return s, false
	}
	span := float64(t1 - t0)
	vals := make([]float64, 0, errorBarProbes+1)
	s.Series = make([][2]float64, 0, ErrorBarSlices)
	for k := 0; k <= errorBarProbes; k++ {
		t := t0 + int64(math.Round(span*float64(k)/errorBarProbes))
		v := c.ErrorBar(t)
		vals = append(vals, v)
		sl := min(k*ErrorBarSlices/errorBarProbes, ErrorBarSlices-1)
		if len(s.Series) <= sl {
			s.Series = append(s.Series, [2]float64{c.Global(t), v})
		} else {
			s.Series[sl][1] = math.Max(s.Series[sl][1], v)
		}
	}
	sort.Float64s(vals)
	s.MedianNS, s.MaxNS = vals[len(vals)/2], vals[len(vals)-1]
	return s, true
}

package clocksync

import (
	"fmt"
	"math"
	"sort"
)

// Residual is the offset (global clock of Rank minus the reference's global
// clock, in seconds) measured by CheckClockAccuracy.
type Residual struct {
	Rank   int
	Offset float64
}

// CheckRanks returns the ranks (never 0) that CheckClockAccuracy measures on
// a communicator of size p: all of them if n <= 0 and p-1 <= 64, otherwise
// n (default 64) ranks spread evenly over 1..p-1, always including p-1.
// Every process computes the same list.
func CheckRanks(p, n int) []int {
	if p <= 1 {
		return nil
	}
	if n <= 0 {
		n = 64
	}
	if n >= p-1 {
		out := make([]int, 0, p-1)
		for r := 1; r < p; r++ {
			out = append(out, r)
		}
		return out
	}
	out := make([]int, 0, n)
	for k := 1; k <= n; k++ {
		r := 1 + (k*(p-1)-1)/n // 1 <= r <= p-1, strictly increasing
		out = append(out, r)
	}
	return out
}

// CheckRepeats is how often CheckClockAccuracy measures each rank's offset.
// The residual is the mean of the measurements weighted by 1/Uncertainty²
// (the same weighting as the model fit, see LearnClockModel), or their
// median when the offset algorithm gives no uncertainty. One SKaMPI
// measurement alone is at the mercy of the scheduler when ranks outnumber
// cores: its fastest forward and backward exchanges need not be equally
// fast, and a descheduled window leaves a wide, biased interval.
const CheckRepeats = 10

// CheckClockAccuracy is Check-Global-Clock (Algorithm 6 of the H2HCA paper)
// without the sync and the wait: the reference (rank 0) measures the offset
// of the global clock g of every sampled rank (CheckRanks(p,
// cfg.CheckRanks)) with the configured offset algorithm, CheckRepeats times
// combined as described at CheckRepeats. The client sends its
// measured offset back, so only rank 0 gets the residuals (others get
// nil). Collective over t.
func CheckClockAccuracy(t Transport, g Clock, cfg Config) ([]Residual, error) {
	cfg = cfg.withDefaults()
	o, err := cfg.newOffsetAlg()
	if err != nil {
		return nil, fmt.Errorf("check clock accuracy: %w", err)
	}
	const pRef = 0
	me := t.Rank()
	ranks := CheckRanks(t.Size(), cfg.CheckRanks)
	buf := make([]float64, 1)
	var out []Residual
	for _, p := range ranks {
		switch me {
		case pRef:
			for k := 0; k < CheckRepeats; k++ {
				if _, err := o.MeasureOffset(t, g, pRef, p); err != nil {
					return nil, fmt.Errorf("check clock accuracy: rank %d: %w", p, err)
				}
			}
			if err := t.Recv(p, buf); err != nil {
				return nil, fmt.Errorf("check clock accuracy: recv residual of %d: %w", p, err)
			}
			out = append(out, Residual{Rank: p, Offset: buf[0]})
		case p:
			obs := make([]ClockOffset, CheckRepeats)
			for k := range obs {
				ob, err := o.MeasureOffset(t, g, pRef, p)
				if err != nil {
					return nil, fmt.Errorf("check clock accuracy: rank %d: %w", p, err)
				}
				obs[k] = ob
			}
			buf[0] = bestOffset(obs)
			if err := t.Send(pRef, buf); err != nil {
				return nil, fmt.Errorf("check clock accuracy: send residual: %w", err)
			}
		}
	}
	return out, nil
}

// bestOffset combines repeated measurements of one offset: the mean
// weighted by 1/Uncertainty² when every uncertainty is known (> 0),
// otherwise the median.
func bestOffset(obs []ClockOffset) float64 {
	var sw, swx float64
	for _, ob := range obs {
		if !(ob.Uncertainty > 0) {
			sw = 0
			break
		}
		w := 1 / (ob.Uncertainty * ob.Uncertainty)
		sw += w
		swx += w * ob.Offset
	}
	if sw > 0 && !math.IsInf(sw, 0) {
		return swx / sw
	}
	v := make([]float64, len(obs))
	for i, ob := range obs {
		v[i] = ob.Offset
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

package clocksync

import "fmt"

// JK is the clock synchronisation algorithm of Jones and Koenig (Algorithm
// 15 of the HCA paper): the root serves every client in turn for each fit
// point, so each client learns its model directly against the root's clock
// in O(p) rounds. The offset algorithm is a parameter (the H2HCA paper found
// SKaMPI-Offset better than the original Mean-RTT-Offset inside JK);
// with MeanRTTOffset the RTT of each pair is computed once (Compute_Rtt).
type JK struct {
	FitPoints          int
	Offset             OffsetAlg
	RecomputeIntercept bool
	// FitSpan spreads each client's fit points over at least FitSpan
	// seconds (0: back to back, as in the paper).
	FitSpan float64
}

// Name returns "jk/<offset>".
func (a *JK) Name() string { return "jk/" + a.Offset.Name() }

// SyncClocks implements Sync_Clocks / Learn_Model of Algorithm 15.
func (a *JK) SyncClocks(t Transport, clk Clock) (Clock, error) {
	const root = 0
	p, r := t.Size(), t.Rank()
	n := a.FitPoints
	if n < 1 {
		n = 1
	}
	if r == root {
		for idx := 0; idx < n; idx++ {
			for c := 0; c < p; c++ {
				if c == root {
					continue
				}
				if _, err := a.Offset.MeasureOffset(t, clk, root, c); err != nil {
					return nil, fmt.Errorf("jk: fit point %d with %d: %w", idx, c, err)
				}
			}
		}
		if a.RecomputeIntercept {
			if _, err := ComputeAndSetAllIntercepts(t, LinearModel{}, clk, a.Offset); err != nil {
				return nil, fmt.Errorf("jk: %w", err)
			}
		}
		return NewGlobalClockLM(clk, LinearModel{}), nil
	}
	xfit, yfit := make([]float64, n), make([]float64, n)
	for idx := 0; idx < n; idx++ {
		if a.FitSpan > 0 && idx > 0 {
			WaitUntil(t, clk, xfit[0]+a.FitSpan*float64(idx)/float64(n-1))
		}
		ob, err := a.Offset.MeasureOffset(t, clk, root, r)
		if err != nil {
			return nil, fmt.Errorf("jk: fit point %d: %w", idx, err)
		}
		xfit[idx], yfit[idx] = ob.Timestamp, ob.Offset
	}
	lm := FitLinearModel(xfit, yfit)
	if a.RecomputeIntercept {
		var err error
		if lm, err = ComputeAndSetAllIntercepts(t, lm, clk, a.Offset); err != nil {
			return nil, fmt.Errorf("jk: %w", err)
		}
	}
	return NewGlobalClockLM(clk, lm), nil
}

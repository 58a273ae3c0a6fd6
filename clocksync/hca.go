package clocksync

import "fmt"

// HCA is the HCA clock synchronisation algorithm (Algorithm 2 of the HCA
// paper, without hierarchical_intercepts): the slopes are learned and merged
// as in HCA2 in O(log p) rounds, then Compute_And_Set_All_Intercepts
// re-measures every rank's intercept directly against the root, one rank
// after the other: O(p) offset measurements at the root.
type HCA struct {
	FitPoints int
	Offset    OffsetAlg
	// FitSpan: see HCA3.FitSpan.
	FitSpan float64
}

// Name returns "hca/<offset>".
func (a *HCA) Name() string { return "hca/" + a.Offset.Name() }

// SyncClocks runs HCA and returns GlobalClockLM(clk, model relative to rank 0).
func (a *HCA) SyncClocks(t Transport, clk Clock) (Clock, error) {
	lm, err := hcaModels(t, clk, a.FitPoints, a.Offset, false, a.FitSpan)
	if err != nil {
		return nil, fmt.Errorf("hca: %w", err)
	}
	if lm, err = ComputeAndSetAllIntercepts(t, lm, clk, a.Offset); err != nil {
		return nil, fmt.Errorf("hca: %w", err)
	}
	return NewGlobalClockLM(clk, lm), nil
}

// ComputeAndSetAllIntercepts is Compute_And_Set_All_Intercepts (Algorithm 3
// of the HCA paper): the root measures the offset to every other rank in
// turn and each rank sets its intercept from it, keeping its slope.
func ComputeAndSetAllIntercepts(t Transport, lm LinearModel, clk Clock, o OffsetAlg) (LinearModel, error) {
	const root = 0
	r := t.Rank()
	if r != root {
		out, err := ComputeAndSetIntercept(t, lm, clk, o, root, r)
		if err != nil {
			return lm, fmt.Errorf("all intercepts: %w", err)
		}
		return out, nil
	}
	for i := 0; i < t.Size(); i++ {
		if i == root {
			continue
		}
		if _, err := ComputeAndSetIntercept(t, lm, clk, o, root, i); err != nil {
			return lm, fmt.Errorf("all intercepts: %w", err)
		}
	}
	return lm, nil
}

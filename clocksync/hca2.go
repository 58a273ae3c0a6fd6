package clocksync

import "fmt"

// HCA2 is the HCA2 clock synchronisation algorithm (HCA paper, Algorithms 2
// and 3 without Compute_And_Set_All_Intercepts): pairwise models between
// local clocks are learned up an inverted binomial tree (Sync_Clocks_Pow2),
// the ranks beyond the largest power of two learn against r - maxpower
// (Sync_Clocks_Remaining), the root merges all models with MergeLMs
// (Equation 1) and scatters them. O(log p) rounds.
//
// RecomputeIntercept selects the hierarchical_intercepts variant: each
// pairwise intercept is re-measured right after its fit
// (Compute_And_Set_Intercept) and merged like the slopes.
type HCA2 struct {
	FitPoints          int
	Offset             OffsetAlg
	RecomputeIntercept bool
	// FitSpan spreads each client's fit points over at least FitSpan
	// seconds (0: back to back, as in the paper).
	FitSpan float64
}

// Name returns "hca2/<offset>".
func (a *HCA2) Name() string { return "hca2/" + a.Offset.Name() }

// SyncClocks runs HCA2 and returns GlobalClockLM(clk, model relative to rank 0).
func (a *HCA2) SyncClocks(t Transport, clk Clock) (Clock, error) {
	lm, err := hcaModels(t, clk, a.FitPoints, a.Offset, a.RecomputeIntercept, a.FitSpan)
	if err != nil {
		return nil, fmt.Errorf("hca2: %w", err)
	}
	return NewGlobalClockLM(clk, lm), nil
}

// hcaModels runs Sync_Clocks_Pow2, Sync_Clocks_Remaining and the scatter of
// Algorithm 2/3 (HCA paper) and returns this rank's model relative to rank 0.
func hcaModels(t Transport, clk Clock, fitpoints int, o OffsetAlg, hierarchicalIntercepts bool, fitSpan float64) (LinearModel, error) {
	p, r := t.Size(), t.Rank()
	if p == 1 {
		return LinearModel{}, nil
	}
	maxPower := 1 << floorLog2(p)
	// lmodel[i] is the model of rank r+i relative to r (lmodel[0] of a
	// client is its own model relative to its reference); the root ends
	// up with all p models relative to itself.
	lmodel := []LinearModel{{}}
	// Sync_Clocks_Pow2
	if r < maxPower {
		for round := 1; 1<<round <= maxPower; round++ {
			half := 1 << (round - 1)
			if r%(1<<round) == 0 { // process with reference clock
				client := r + half
				if _, _, err := learnClockModel(t, r, client, clk, o, fitpoints, hierarchicalIntercepts, fitSpan); err != nil {
					return LinearModel{}, fmt.Errorf("pow2 round %d: %w", round, err)
				}
				// receive the linear models collected by the client
				buf := make([]float64, 2*half)
				if err := t.Recv(client, buf); err != nil {
					return LinearModel{}, fmt.Errorf("pow2 round %d: recv models from %d: %w", round, client, err)
				}
				recv := decodeModels(buf)
				lmodel = append(lmodel, recv[0]) // save client model
				for i := 1; i < half; i++ {      // compute resulting models
					lmodel = append(lmodel, MergeLMs(recv[0], recv[i]))
				}
			} else if r%(1<<round) == half { // client
				pRef := r - half
				lm, _, err := learnClockModel(t, pRef, r, clk, o, fitpoints, hierarchicalIntercepts, fitSpan)
				if err != nil {
					return LinearModel{}, fmt.Errorf("pow2 round %d: %w", round, err)
				}
				lmodel[0] = lm
				// send all new linear models to the reference process
				if err := t.Send(pRef, encodeModels(lmodel)); err != nil {
					return LinearModel{}, fmt.Errorf("pow2 round %d: send models to %d: %w", round, pRef, err)
				}
				break
			}
		}
	}
	// Sync_Clocks_Remaining
	if maxPower != p {
		if r < p-maxPower { // process with reference clock
			if _, _, err := learnClockModel(t, r, r+maxPower, clk, o, fitpoints, hierarchicalIntercepts, fitSpan); err != nil {
				return LinearModel{}, fmt.Errorf("remaining ranks: %w", err)
			}
		} else if r >= maxPower { // client
			lm, _, err := learnClockModel(t, r-maxPower, r, clk, o, fitpoints, hierarchicalIntercepts, fitSpan)
			if err != nil {
				return LinearModel{}, fmt.Errorf("remaining ranks: %w", err)
			}
			// MPI_Gather of the remaining models at the root
			if err := t.Send(0, encodeModels([]LinearModel{lm})); err != nil {
				return LinearModel{}, fmt.Errorf("remaining ranks: send model to root: %w", err)
			}
		}
		if r == 0 {
			buf := make([]float64, 2)
			for q := maxPower; q < p; q++ {
				if err := t.Recv(q, buf); err != nil {
					return LinearModel{}, fmt.Errorf("remaining ranks: recv model of %d: %w", q, err)
				}
				lmodel = append(lmodel, MergeLMs(lmodel[q-maxPower], decodeModels(buf)[0]))
			}
		}
	}
	// MPI_Scatter of the final models from the root.
	if r == 0 {
		for q := 1; q < p; q++ {
			if err := t.Send(q, encodeModels(lmodel[q:q+1])); err != nil {
				return LinearModel{}, fmt.Errorf("scatter model to %d: %w", q, err)
			}
		}
		return LinearModel{}, nil
	}
	buf := make([]float64, 2)
	if err := t.Recv(0, buf); err != nil {
		return LinearModel{}, fmt.Errorf("scatter: recv model from root: %w", err)
	}
	return decodeModels(buf)[0], nil
}

func encodeModels(m []LinearModel) []float64 {
	v := make([]float64, 0, 2*len(m))
	for _, lm := range m {
		v = append(v, lm.Slope, lm.Intercept)
	}
	return v
}

func decodeModels(v []float64) []LinearModel {
	m := make([]LinearModel, len(v)/2)
	for i := range m {
		m[i] = LinearModel{Slope: v[2*i], Intercept: v[2*i+1]}
	}
	return m
}

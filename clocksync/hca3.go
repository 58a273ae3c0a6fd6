package clocksync

import (
	"fmt"
	"math/bits"
)

// SyncAlg is a clock synchronisation algorithm (SYNC_CLOCKS): a collective
// over t that turns clk into a global clock of the reference (rank 0 of t).
type SyncAlg interface {
	SyncClocks(t Transport, clk Clock) (Clock, error)
	// Name describes the algorithm and its offset algorithm, e.g. "hca3/skampi".
	Name() string
}

// HCA3 is the HCA3 clock synchronisation algorithm (Algorithm 1 of the H2HCA
// paper): the reference time is pushed down an inverted binomial tree; in
// each of floor(log2 p) rounds a client learns its model against its
// partner's already corrected global clock, then the ranks beyond the
// largest power of two learn against rank r - max_power.
type HCA3 struct {
	FitPoints          int
	Offset             OffsetAlg
	RecomputeIntercept bool
	// FitSpan spreads each client's fit points over at least FitSpan
	// seconds (0: back to back, as in the paper).
	FitSpan float64
}

// Name returns "hca3/<offset>".
func (a *HCA3) Name() string { return "hca3/" + a.Offset.Name() }

// floorLog2 returns floor(log2 n) for n >= 1.
func floorLog2(n int) int { return bits.Len(uint(n)) - 1 }

// SyncClocks implements SYNC_CLOCKS of Algorithm 1.
func (a *HCA3) SyncClocks(t Transport, clk Clock) (Clock, error) {
	nprocs, r := t.Size(), t.Rank()
	nrounds := floorLog2(nprocs)
	maxPower := 1 << nrounds
	var myClk Clock = NewGlobalClockLM(clk, LinearModel{}) // default dummy clock
	// Step 1: processes with indices between 0 and max_power-1.
	for i := nrounds; i >= 1; i-- {
		runningPower := 1 << i
		nextPower := 1 << (i - 1)
		if r >= maxPower {
			break
		}
		if r%runningPower == 0 { // process with reference clock
			other := r + nextPower
			if _, err := learnClockModel(t, r, other, myClk, a.Offset, a.FitPoints, a.RecomputeIntercept, a.FitSpan); err != nil {
				return nil, fmt.Errorf("hca3 round %d: %w", nrounds-i+1, err)
			}
		} else if r%runningPower == nextPower { // client process
			other := r - nextPower
			lm, err := learnClockModel(t, other, r, myClk, a.Offset, a.FitPoints, a.RecomputeIntercept, a.FitSpan)
			if err != nil {
				return nil, fmt.Errorf("hca3 round %d: %w", nrounds-i+1, err)
			}
			myClk = NewGlobalClockLM(clk, lm)
		}
	}
	// Step 2: processes with indices between max_power and nprocs-1.
	if r >= maxPower { // client process
		other := r - maxPower
		lm, err := learnClockModel(t, other, r, myClk, a.Offset, a.FitPoints, a.RecomputeIntercept, a.FitSpan)
		if err != nil {
			return nil, fmt.Errorf("hca3 remaining ranks: %w", err)
		}
		myClk = NewGlobalClockLM(clk, lm)
	} else if r < nprocs-maxPower { // process with reference clock
		other := r + maxPower
		if _, err := learnClockModel(t, r, other, myClk, a.Offset, a.FitPoints, a.RecomputeIntercept, a.FitSpan); err != nil {
			return nil, fmt.Errorf("hca3 remaining ranks: %w", err)
		}
	}
	return myClk, nil
}

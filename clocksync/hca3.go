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

// SyncClocks implements SYNC_CLOCKS of Algorithm 1. Each client's clock
// also carries its error bound (GlobalClockLM.Bound, KnotAt, SlopeBound):
// at the client's last fit point, its partner's bound (which the partner
// sends after the fit points) widened by the partner's slope bound since
// the partner's own knot, plus the client's own (ModelBound); its slope
// bound is the partner's plus its own fit's (SlopeBound).
func (a *HCA3) SyncClocks(t Transport, clk Clock) (Clock, error) {
	nprocs, r := t.Size(), t.Rank()
	nrounds := floorLog2(nprocs)
	maxPower := 1 << nrounds
	// default dummy clock; on rank 0 it is the reference: bound 0
	dummy := NewGlobalClockLM(clk, LinearModel{})
	if r == 0 {
		withBound(dummy, 0)
	}
	var myClk Clock = dummy
	learn := func(ref, client int) error {
		if r == ref {
			if _, _, err := learnClockModel(t, ref, client, myClk, a.Offset, a.FitPoints, a.RecomputeIntercept, a.FitSpan); err != nil {
				return err
			}
			return sendBound(t, client, ref, myClk)
		}
		lm, own, err := learnClockModel(t, ref, client, myClk, a.Offset, a.FitPoints, a.RecomputeIntercept, a.FitSpan)
		if err != nil {
			return err
		}
		refBound, known, err := recvBound(t, ref)
		if err != nil {
			return err
		}
		g := NewGlobalClockLM(clk, lm)
		if own.Bound > 0 && known {
			// At the client's last measurement the partner's clock was
			// off by its bound widened since its own knot; the fitted
			// slope is relative to the partner's clock, so both slope
			// errors add up along the path.
			at := lm.Global(own.X)
			withKnotBound(g, KnotBound{Bound: refBound.Within(at) + own.Bound, At: at, Slope: refBound.Slope + own.Slope})
		}
		myClk = g
		return nil
	}
	// Step 1: processes with indices between 0 and max_power-1.
	for i := nrounds; i >= 1; i-- {
		runningPower := 1 << i
		nextPower := 1 << (i - 1)
		if r >= maxPower {
			break
		}
		var err error
		if r%runningPower == 0 { // process with reference clock
			err = learn(r, r+nextPower)
		} else if r%runningPower == nextPower { // client process
			err = learn(r-nextPower, r)
		}
		if err != nil {
			return nil, fmt.Errorf("hca3 round %d: %w", nrounds-i+1, err)
		}
	}
	// Step 2: processes with indices between max_power and nprocs-1.
	var err error
	if r >= maxPower { // client process
		err = learn(r-maxPower, r)
	} else if r < nprocs-maxPower { // process with reference clock
		err = learn(r, r+maxPower)
	}
	if err != nil {
		return nil, fmt.Errorf("hca3 remaining ranks: %w", err)
	}
	return myClk, nil
}

// sendBound sends the reference side's error bound to client after a
// measurement: ClockKnotBound(clk) as three doubles (bound, the global time
// it holds at, its slope bound), the bound -1 when it is not known.
func sendBound(t Transport, client, ref int, clk Clock) error {
	k, ok := ClockKnotBound(clk)
	if !ok {
		k = KnotBound{Bound: -1}
	}
	if err := t.Send(client, []float64{k.Bound, k.At, k.Slope}); err != nil {
		return fmt.Errorf("bound %d->%d: %w", ref, client, err)
	}
	return nil
}

// recvBound receives the partner's bound (sendBound); known is false when
// the partner does not know its own.
func recvBound(t Transport, ref int) (k KnotBound, known bool, err error) {
	buf := []float64{0, 0, 0}
	if err := t.Recv(ref, buf); err != nil {
		return KnotBound{}, false, fmt.Errorf("bound from %d: %w", ref, err)
	}
	k = KnotBound{Bound: buf[0], At: buf[1], Slope: buf[2]}
	return k, k.Bound >= 0, nil
}

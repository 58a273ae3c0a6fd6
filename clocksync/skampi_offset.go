package clocksync

import (
	"fmt"
	"math"
)

// OffsetAlg is a clock offset algorithm (o_alg of Algorithm 2): the building
// block that measures the current offset of client's clock to p_ref's clock.
type OffsetAlg interface {
	// MeasureOffset is called by both pRef and client with their own clock
	// clk (MEASURE_OFFSET of Algorithms 7 and 8). The client's result holds
	// the offset (local - reference) and the client's clock time it refers
	// to; the reference's result is the zero ClockOffset.
	MeasureOffset(t Transport, clk Clock, pRef, client int) (ClockOffset, error)
	// Name is the algorithm's short name, e.g. "skampi".
	Name() string
}

// PingPongTransport is an optional fast path a Transport may implement (e.g.
// in C over PMPI) to run the timed ping-pong loop of SKaMPI-Offset without
// calling back into Go for every message. Timestamps are taken with
// TimerClock and mapped through the flattened model m (global = x -
// m.Offset(x)). SKaMPIOffset uses the fast path only when the clock being
// measured flattens onto TimerClock() (BaseClock(clk) == TimerClock()) and
// early exit is off.
type PingPongTransport interface {
	Transport
	// TimerClock is the local clock the fast path reads.
	TimerClock() Clock
	// PingPongServe is the reference side of n ping-pongs with client:
	// receive one double, reply with m.Global(timer()).
	PingPongServe(client, n int, m LinearModel) error
	// PingPongClient is the client side of n ping-pongs with ref: for each
	// i it records sLast[i] = m.Global(timer()) before sending, tLast[i] the
	// reference time received and sNow[i] = m.Global(timer()) after receiving.
	PingPongClient(ref, n int, m LinearModel, sLast, tLast, sNow []float64) error
}

// DetrendingOffsetAlg is an OffsetAlg that can take a known rate
// difference between the client's clock and the reference's out of each
// ping-pong before its minimum filter (SKaMPIOffset.MeasureOffsetDetrended).
type DetrendingOffsetAlg interface {
	OffsetAlg
	// MeasureOffsetDetrended is MeasureOffset where the client's offset
	// (local − reference) is known to change by slope per unit of its
	// clock during the measurement (a resync's prior slope).
	MeasureOffsetDetrended(t Transport, clk Clock, pRef, client int, slope float64) (ClockOffset, error)
}

// MeasureOffsetDetrended is o.MeasureOffsetDetrended where o can take the
// drift out, and o.MeasureOffset otherwise (the slope then ignored).
func MeasureOffsetDetrended(o OffsetAlg, t Transport, clk Clock, pRef, client int, slope float64) (ClockOffset, error) {
	if d, ok := o.(DetrendingOffsetAlg); ok {
		return d.MeasureOffsetDetrended(t, clk, pRef, client, slope)
	}
	return o.MeasureOffset(t, clk, pRef, client)
}

// SKaMPIOffset is SKaMPI-Offset (Algorithm 7 of the H2HCA paper; Algorithm 7
// SKaMPI_PingPong of the HCA paper): it bounds the offset by the minimum
// one-way delays seen in PingPongs ping-pongs and takes the midpoint.
//
// The midpoint is the offset halfway between the send of the ping-pong
// that gave td_max and the receive of the one that gave td_min, and that
// is the Timestamp it is returned with (Algorithm 7 reads the clock after
// the loop). Where the clocks' rates differ (a client measured on its
// local clock: ±100 ppm on two nodes is 200 ns of offset per ms) the
// loop's end lies half a window or more after those ping-pongs, which
// biased every offset by the rate difference times that time, with one
// sign: −0.12 to −0.38 µs mean per knot over TCP between namespace hosts,
// more when a preemption stretched the window (decisions.md D80).
//
// Sign: Algorithm 7 computes diff = (td_min + td_max)/2 = reference - local;
// MeasureOffset returns Offset = -diff (local - reference).
type SKaMPIOffset struct {
	// PingPongs is nexchanges, the number of ping-pongs per offset.
	PingPongs int
	// EarlyExit, if > 0, lets the client stop once the bounds td_min and
	// td_max have not improved for EarlyExit consecutive ping-pongs (and at
	// least 2*EarlyExit were done). The client tells the reference by
	// sending NaN instead of a timestamp, so both sides leave the loop
	// together.
	EarlyExit int
}

// Name returns "skampi".
func (o *SKaMPIOffset) Name() string { return "skampi" }

// MeasureOffset implements Algorithm 7.
func (o *SKaMPIOffset) MeasureOffset(t Transport, clk Clock, pRef, client int) (ClockOffset, error) {
	return o.measure(t, clk, pRef, client, 0)
}

// MeasureOffsetDetrended is Algorithm 7 with each ping-pong's bounds
// moved to the loop's first send along slope (the offset's known change
// per unit of the client's clock) before the minimum filter: where the
// clocks' rates differ the filter otherwise prefers ping-pongs near the
// loop's ends (the offset moves across the window by the rate difference
// times its length, more than the delays' jitter at ±100 ppm over a
// millisecond: decisions.md D80, D88). The offset is returned for the
// same timestamp as MeasureOffset's, moved there along slope. With slope
// 0 it is MeasureOffset.
func (o *SKaMPIOffset) MeasureOffsetDetrended(t Transport, clk Clock, pRef, client int, slope float64) (ClockOffset, error) {
	return o.measure(t, clk, pRef, client, slope)
}

// measure is Algorithm 7, detrended along slope (0: as published).
func (o *SKaMPIOffset) measure(t Transport, clk Clock, pRef, client int, slope float64) (ClockOffset, error) {
	n := o.PingPongs
	if n < 1 {
		n = 1
	}
	me := t.Rank()
	if pp, ok := t.(PingPongTransport); ok && o.EarlyExit <= 0 && BaseClock(clk) == pp.TimerClock() {
		return o.fastPath(pp, clk, pRef, client, n, slope)
	}
	buf := make([]float64, 1)
	switch me {
	case pRef: // process with reference clock
		for i := 0; i < n; i++ {
			if err := t.Recv(client, buf); err != nil {
				return ClockOffset{}, fmt.Errorf("skampi offset: ref %d recv from %d: %w", pRef, client, err)
			}
			if math.IsNaN(buf[0]) { // client exited early
				break
			}
			buf[0] = clk.GetTime() // t_last
			if err := t.Send(client, buf); err != nil {
				return ClockOffset{}, fmt.Errorf("skampi offset: ref %d send to %d: %w", pRef, client, err)
			}
		}
		return ClockOffset{}, nil
	case client:
		tdMin, tdMax := math.Inf(-1), math.Inf(1)
		stale := 0
		first, last := math.NaN(), 0.0
		atMax, atMin := 0.0, 0.0 // the send of td_max's ping-pong, the receive of td_min's
		for i := 0; i < n; i++ {
			sLast := clk.GetTime()
			if i == 0 {
				first = sLast
			}
			buf[0] = sLast
			if err := t.Send(pRef, buf); err != nil {
				return ClockOffset{}, fmt.Errorf("skampi offset: client %d send to %d: %w", client, pRef, err)
			}
			if err := t.Recv(pRef, buf); err != nil {
				return ClockOffset{}, fmt.Errorf("skampi offset: client %d recv from %d: %w", client, pRef, err)
			}
			sNow := clk.GetTime()
			last = sNow
			tLast := buf[0]
			improved := false
			if d := tLast - sNow + slope*(sNow-first); d > tdMin {
				tdMin, atMin, improved = d, sNow, true
			}
			if d := tLast - sLast + slope*(sLast-first); d < tdMax {
				tdMax, atMax, improved = d, sLast, true
			}
			if o.EarlyExit > 0 {
				if improved {
					stale = 0
				} else {
					stale++
				}
				if stale >= o.EarlyExit && i+1 >= 2*o.EarlyExit && i+1 < n {
					buf[0] = math.NaN()
					if err := t.Send(pRef, buf); err != nil {
						return ClockOffset{}, fmt.Errorf("skampi offset: client %d early-exit send to %d: %w", client, pRef, err)
					}
					break
				}
			}
		}
		return skampiResult(tdMin, tdMax, atMin, atMax, first, last, slope), nil
	}
	return ClockOffset{}, nil
}

// skampiResult is the client's offset from the filtered bounds tdMin and
// tdMax (detrended to first along slope), dated halfway between the
// ping-pongs that gave them (D80).
func skampiResult(tdMin, tdMax, atMin, atMax, first, last, slope float64) ClockOffset {
	at := (atMax + atMin) / 2
	return ClockOffset{Timestamp: at, Offset: -(tdMin+tdMax)/2 + slope*(at-first), Uncertainty: (tdMax - tdMin) / 2, Window: last - first}
}

func (o *SKaMPIOffset) fastPath(pp PingPongTransport, clk Clock, pRef, client, n int, slope float64) (ClockOffset, error) {
	m, _ := Flatten(clk)
	if pp.Rank() == pRef {
		if err := pp.PingPongServe(client, n, m); err != nil {
			return ClockOffset{}, fmt.Errorf("skampi offset (fast path): ref %d with %d: %w", pRef, client, err)
		}
		return ClockOffset{}, nil
	}
	if pp.Rank() != client {
		return ClockOffset{}, nil
	}
	sLast, tLast, sNow := make([]float64, n), make([]float64, n), make([]float64, n)
	if err := pp.PingPongClient(pRef, n, m, sLast, tLast, sNow); err != nil {
		return ClockOffset{}, fmt.Errorf("skampi offset (fast path): client %d with %d: %w", client, pRef, err)
	}
	tdMin, tdMax := math.Inf(-1), math.Inf(1)
	atMax, atMin := 0.0, 0.0
	first := sLast[0]
	for i := 0; i < n; i++ {
		if d := tLast[i] - sNow[i] + slope*(sNow[i]-first); d > tdMin {
			tdMin, atMin = d, sNow[i]
		}
		if d := tLast[i] - sLast[i] + slope*(sLast[i]-first); d < tdMax {
			tdMax, atMax = d, sLast[i]
		}
	}
	return skampiResult(tdMin, tdMax, atMin, atMax, first, sNow[n-1], slope), nil
}

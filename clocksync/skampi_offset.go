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
	n := o.PingPongs
	if n < 1 {
		n = 1
	}
	me := t.Rank()
	if pp, ok := t.(PingPongTransport); ok && o.EarlyExit <= 0 && BaseClock(clk) == pp.TimerClock() {
		return o.fastPath(pp, clk, pRef, client, n)
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
			if d := tLast - sNow; d > tdMin {
				tdMin, atMin, improved = d, sNow, true
			}
			if d := tLast - sLast; d < tdMax {
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
		diff := (tdMin + tdMax) / 2
		return ClockOffset{Timestamp: (atMax + atMin) / 2, Offset: -diff, Uncertainty: (tdMax - tdMin) / 2, Window: last - first}, nil
	}
	return ClockOffset{}, nil
}

func (o *SKaMPIOffset) fastPath(pp PingPongTransport, clk Clock, pRef, client, n int) (ClockOffset, error) {
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
	for i := 0; i < n; i++ {
		if d := tLast[i] - sNow[i]; d > tdMin {
			tdMin, atMin = d, sNow[i]
		}
		if d := tLast[i] - sLast[i]; d < tdMax {
			tdMax, atMax = d, sLast[i]
		}
	}
	return ClockOffset{Timestamp: (atMax + atMin) / 2, Offset: -(tdMin + tdMax) / 2, Uncertainty: (tdMax - tdMin) / 2, Window: sNow[n-1] - sLast[0]}, nil
}

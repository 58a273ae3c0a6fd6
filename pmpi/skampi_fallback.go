package main

import (
	"fmt"
	"math"
	"time"

	"github.com/gclock/gclock/clocksync"
)

// fallbackAlgorithm names the recorder's built-in sync, used until (or
// unless) clocksync.Sync is wired in: SKaMPI-Offset (Algorithm 7 of the
// H2HCA paper), offset only, every rank against rank 0, sequentially.
const fallbackAlgorithm = "pmpi-skampi-offset"

const fallbackPingPongs = 100

// syncOutcome is what an epoch learned on this rank.
type syncOutcome struct {
	Algorithm string
	Params    map[string]string
	SlopeS    float64 // offset(x) = SlopeS*x + InterceptS, seconds
	Intercept float64
	FitPoints int
	PingPongs int
	Duration  time.Duration
	Check     []residual   // reference rank only
	Chain     [][2]float64 // per-level {slope, intercept}, innermost first
	Global    clocksync.Clock
	// Anchor is the sync's end anchor (nil without one): the resync
	// epochs reuse it and its communicators.
	Anchor *clocksync.ResyncAlg
	res    *clocksync.Result // clocksync's result (nil: the fallback)
}

type residual struct {
	Rank   int
	Offset float64 // seconds
}

// shiftedClock is a clock corrected by a constant offset: global = x - off.
type shiftedClock struct {
	base clocksync.Clock
	off  float64
}

func (c shiftedClock) GetTime() float64 { return c.base.GetTime() - c.off }

// skampiMeasure is the reference side of SKaMPI-Offset with client p: n
// ping-pongs, the one with the smallest round trip wins. It returns
// client-minus-reference in seconds (docs/explanation/decisions.md D1).
func skampiMeasure(t clocksync.Transport, clk clocksync.Clock, p, n int) (float64, error) {
	best, off := math.Inf(1), 0.0
	buf := []float64{0}
	for i := 0; i < n; i++ {
		t1 := clk.GetTime()
		if err := t.Send(p, []float64{t1}); err != nil {
			return 0, err
		}
		if err := t.Recv(p, buf); err != nil {
			return 0, err
		}
		t3 := clk.GetTime()
		if rtt := t3 - t1; rtt < best {
			best, off = rtt, buf[0]-(t1+t3)/2
		}
	}
	return off, nil
}

// skampiAnswer is the client side: answer n pings with the local time.
func skampiAnswer(t clocksync.Transport, clk clocksync.Clock, n int) error {
	buf := []float64{0}
	for i := 0; i < n; i++ {
		if err := t.Recv(0, buf); err != nil {
			return err
		}
		if err := t.Send(0, []float64{clk.GetTime()}); err != nil {
			return err
		}
	}
	return nil
}

// fallbackSync runs SKaMPI-Offset for every rank against rank 0, then the
// accuracy check (Algorithm 6 in spirit: the reference measures each
// rank's residual offset between the corrected clocks).
func fallbackSync(t clocksync.Transport, clk clocksync.Clock) (*syncOutcome, error) {
	start := time.Now()
	out := &syncOutcome{
		Algorithm: fallbackAlgorithm,
		Params:    map[string]string{"pingpongs": fmt.Sprint(fallbackPingPongs), "reference": "0"},
		PingPongs: fallbackPingPongs,
	}
	res := []float64{0}
	if t.Rank() == 0 {
		for p := 1; p < t.Size(); p++ {
			off, err := skampiMeasure(t, clk, p, fallbackPingPongs)
			if err != nil {
				return nil, fmt.Errorf("skampi-offset with rank %d: %w", p, err)
			}
			if err := t.Send(p, []float64{off}); err != nil {
				return nil, fmt.Errorf("skampi-offset result to rank %d: %w", p, err)
			}
		}
	} else {
		if err := skampiAnswer(t, clk, fallbackPingPongs); err != nil {
			return nil, fmt.Errorf("skampi-offset answering rank 0: %w", err)
		}
		if err := t.Recv(0, res); err != nil {
			return nil, fmt.Errorf("skampi-offset result from rank 0: %w", err)
		}
	}
	out.Intercept = res[0]
	out.Global = shiftedClock{base: clk, off: res[0]}
	out.Duration = time.Since(start)

	// Accuracy check on the corrected clocks.
	const checkPP = 20
	if t.Rank() == 0 {
		for p := 1; p < t.Size(); p++ {
			off, err := skampiMeasure(t, out.Global, p, checkPP)
			if err != nil {
				return nil, fmt.Errorf("accuracy check with rank %d: %w", p, err)
			}
			out.Check = append(out.Check, residual{Rank: p, Offset: off})
		}
	} else if err := skampiAnswer(t, out.Global, checkPP); err != nil {
		return nil, fmt.Errorf("accuracy check: %w", err)
	}
	return out, nil
}

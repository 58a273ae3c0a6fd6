package clocksync

import (
	"fmt"
	"reflect"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// MeanRTTOffset is Mean-RTT-Offset (Algorithm 8 of the H2HCA paper; the
// offset step of Jones and Koenig, Algorithm 15 of the HCA paper): the
// reference answers PingPongs synchronous pings with its time, the client
// computes local - ref_time - rtt/2 for each and keeps the median.
//
// The RTT of a pair is measured once with ComputeRTT (Algorithm 17) on first
// use and cached: later calls for the same (pRef, client) pair on the same
// transport reuse it (have_rtt of Algorithm 8). Both processes of a pair
// keep their own cache and see the same call history, so they agree on
// whether the RTT step runs.
type MeanRTTOffset struct {
	// PingPongs is nexchanges, the number of ping-pongs per offset.
	PingPongs int
	// RTTPingPongs is n_pingpongs of Compute_Rtt (default 100).
	RTTPingPongs int
	// Warmup is the number of dummy ping-pongs before the RTT is measured
	// (Warmup_Rounds; default 10).
	Warmup int

	comm Transport
	rtt  map[[2]int]float64
}

// Name returns "meanrtt".
func (o *MeanRTTOffset) Name() string { return "meanrtt" }

// cachedRTT returns the cached RTT of the pair, resetting the cache when the
// transport changed (ranks are per communicator).
func (o *MeanRTTOffset) cachedRTT(t Transport, pRef, client int) (float64, bool) {
	if o.rtt == nil || !sameTransport(o.comm, t) {
		o.rtt = map[[2]int]float64{}
		o.comm = t
		return 0, false
	}
	v, ok := o.rtt[[2]int{pRef, client}]
	return v, ok
}

func sameTransport(a, b Transport) bool {
	if a == nil || b == nil {
		return false
	}
	if !reflect.TypeOf(a).Comparable() || !reflect.TypeOf(b).Comparable() {
		return false
	}
	return a == b
}

// MeasureOffset implements Algorithm 8.
func (o *MeanRTTOffset) MeasureOffset(t Transport, clk Clock, pRef, client int) (ClockOffset, error) {
	me := t.Rank()
	if me != pRef && me != client {
		return ClockOffset{}, nil
	}
	rtt, have := o.cachedRTT(t, pRef, client)
	if !have { // RTT between these two processes is not yet measured
		var err error
		rtt, err = ComputeRTT(t, clk, pRef, client, o.RTTPingPongs, o.Warmup)
		if err != nil {
			return ClockOffset{}, fmt.Errorf("mean-rtt offset: %w", err)
		}
		o.rtt[[2]int{pRef, client}] = rtt
	}
	n := o.PingPongs
	if n < 1 {
		n = 1
	}
	buf := make([]float64, 1)
	if me == pRef {
		for i := 0; i < n; i++ {
			if err := t.Recv(client, buf); err != nil {
				return ClockOffset{}, fmt.Errorf("mean-rtt offset: ref %d recv from %d: %w", pRef, client, err)
			}
			buf[0] = clk.GetTime() // tlocal
			if err := t.Ssend(client, buf); err != nil {
				return ClockOffset{}, fmt.Errorf("mean-rtt offset: ref %d ssend to %d: %w", pRef, client, err)
			}
		}
		return ClockOffset{}, nil
	}
	localTime := make([]float64, n)
	timeVar := make([]float64, n)
	for i := 0; i < n; i++ {
		buf[0] = 0 // dummy_time
		if err := t.Ssend(pRef, buf); err != nil {
			return ClockOffset{}, fmt.Errorf("mean-rtt offset: client %d ssend to %d: %w", client, pRef, err)
		}
		if err := t.Recv(pRef, buf); err != nil {
			return ClockOffset{}, fmt.Errorf("mean-rtt offset: client %d recv from %d: %w", client, pRef, err)
		}
		localTime[i] = clk.GetTime()
		timeVar[i] = localTime[i] - buf[0] - rtt/2 // current offset
	}
	med := medianIndex(timeVar)
	return ClockOffset{Timestamp: localTime[med], Offset: timeVar[med]}, nil
}

// medianIndex returns the index of the (lower) median element of v, so that
// the returned fit point is an actual measurement as in Algorithm 8 line 17.
func medianIndex(v []float64) int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	return idx[(len(v)-1)/2]
}

// ComputeRTT is Compute_Rtt (Algorithm 17 of the HCA paper): after warmup
// dummy ping-pongs, p2 times n ping-pongs with p1, removes outliers with
// RemoveOutliers and returns the mean RTT. Both p1 and p2 call it; only p2's
// result is meaningful (p1 gets 0). Defaults: n = 100, warmup = 10.
func ComputeRTT(t Transport, clk Clock, p1, p2, n, warmup int) (float64, error) {
	if n < 1 {
		n = 100
	}
	if warmup < 0 {
		warmup = 0
	} else if warmup == 0 {
		warmup = 10
	}
	me := t.Rank()
	buf := make([]float64, 1)
	if me == p1 {
		for i := 0; i < warmup+n; i++ {
			if err := t.Recv(p2, buf); err != nil {
				return 0, fmt.Errorf("compute rtt: %d recv from %d: %w", p1, p2, err)
			}
			buf[0] = clk.GetTime()
			if err := t.Send(p2, buf); err != nil {
				return 0, fmt.Errorf("compute rtt: %d send to %d: %w", p1, p2, err)
			}
		}
		return 0, nil
	}
	if me != p2 {
		return 0, nil
	}
	lrtt := make([]float64, 0, n)
	for i := 0; i < warmup+n; i++ {
		s := clk.GetTime()
		buf[0] = s
		if err := t.Send(p1, buf); err != nil {
			return 0, fmt.Errorf("compute rtt: %d send to %d: %w", p2, p1, err)
		}
		if err := t.Recv(p1, buf); err != nil {
			return 0, fmt.Errorf("compute rtt: %d recv from %d: %w", p2, p1, err)
		}
		e := clk.GetTime()
		if i >= warmup {
			lrtt = append(lrtt, e-s)
		}
	}
	lrtt = RemoveOutliers(lrtt)
	return stat.Mean(lrtt, nil), nil
}

// RemoveOutliers is Remove_Outliers (Section 3.5 of the HCA paper): Tukey's
// filter, dropping values below Q1 - 1.5*IQR or above Q3 + 1.5*IQR. The
// input is not modified.
func RemoveOutliers(v []float64) []float64 {
	if len(v) < 4 {
		return slices.Clone(v)
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	q1 := stat.Quantile(0.25, stat.LinInterp, s, nil)
	q3 := stat.Quantile(0.75, stat.LinInterp, s, nil)
	iqr := q3 - q1
	lo, hi := q1-1.5*iqr, q3+1.5*iqr
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if x >= lo && x <= hi {
			out = append(out, x)
		}
	}
	return out
}

package main

import (
	"math"
	"testing"

	"github.com/gclock/gclock/trace"
)

// exactModel is the model that maps rank-local recorded time to rank 0's
// recorded time exactly, derived independently of trueError from
// recorded = raw + off + ppm*1e-6*raw.
func exactModel(in, ref *trace.Injection, t0 int64) trace.Model {
	dR, d0 := in.DriftPPM*1e-6, ref.DriftPPM*1e-6
	k := (1 + d0) / (1 + dR)
	return trace.Model{T0: t0, Slope: 1 - k, Intercept: float64(t0)*(1-k) + in.OffsetNS*k - ref.OffsetNS}
}

func TestTrueError_ZeroForExactModelAndSeesInterceptError(t *testing.T) {
	ref := &trace.Injection{OffsetNS: 5e6, DriftPPM: 100}
	for _, tc := range []struct {
		name  string
		in    *trace.Injection
		shift float64 // ns added to the model's offset: the model is late by this
	}{
		{"same node", &trace.Injection{OffsetNS: 5e6, DriftPPM: 100}, 0},
		{"other node", &trace.Injection{OffsetNS: -5e6, DriftPPM: -100}, 0},
		{"other node, model off by 250 ns", &trace.Injection{OffsetNS: -5e6, DriftPPM: -100}, 250},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const t0 = int64(1_000_000_000_000)
			m := exactModel(tc.in, ref, t0)
			m.Intercept += tc.shift
			f := &rankFile{Header: trace.Header{Rank: 1, Inject: tc.in}}
			r0 := &rankFile{Header: trace.Header{Rank: 0, Inject: ref}}
			for _, r := range []int64{t0, t0 + 10_000_000_000} { // at sync and 10 s later
				// global = t - offset: a model offset too large by shift
				// puts global time early by shift.
				if got := trueError(f, r0, trace.Epoch{Model: m}, r); math.Abs(got+tc.shift) > 1e-3 {
					t.Errorf("at %d: true error %.6f ns, want %.1f", r, got, -tc.shift)
				}
			}
		})
	}
}

func TestSummariseEpoch_TakesWorstRank(t *testing.T) {
	ref := &trace.Injection{OffsetNS: 1e6, DriftPPM: 10}
	other := &trace.Injection{OffsetNS: -1e6, DriftPPM: -10}
	const t0 = int64(5e11)
	good := exactModel(other, ref, t0)
	bad := good
	bad.Intercept += 1200
	ep := func(m trace.Model, start, end int64, check ...trace.CheckResult) []trace.Epoch {
		return []trace.Epoch{{Index: 0, Algorithm: "hca3", Model: m, StartNS: start, EndNS: end, Check: check}}
	}
	files := []rankFile{
		{Header: trace.Header{Rank: 0, Inject: ref}, Epochs: ep(exactModel(ref, ref, t0), t0, t0+3e6,
			trace.CheckResult{Rank: 1, OffsetNS: -40}, trace.CheckResult{Rank: 2, OffsetNS: 900})},
		{Header: trace.Header{Rank: 1, Inject: other}, Epochs: ep(good, t0, t0+5e6)},
		{Header: trace.Header{Rank: 2, Inject: other}, Epochs: ep(bad, t0, t0+4e6)},
	}
	s, ok := summariseEpoch(files, 0)
	if !ok {
		t.Fatal("epoch 0 not found")
	}
	if s.DurationNS != 5e6 || s.CheckMaxNS != 900 || s.Checks != 2 || s.Ranks != 3 || math.Abs(s.TrueMaxNS-1200) > 1e-3 {
		t.Errorf("summary = %+v, want duration 5e6, check 900 of 2, 3 ranks, true 1200", s)
	}
	if _, ok := summariseEpoch(files, 1); ok {
		t.Error("epoch 1 reported present")
	}
}

func TestExtrapolatedError_GrowsWithSlopeErrorOverTheRun(t *testing.T) {
	ref := &trace.Injection{OffsetNS: 5e6, DriftPPM: 100}
	other := &trace.Injection{OffsetNS: -5e6, DriftPPM: -100}
	const t0 = int64(1e12)
	m := exactModel(other, ref, t0)
	m.Slope += 1e-7 // offset grows 100 ns per second too fast
	e0 := trace.Epoch{Index: 0, Model: m, StartNS: t0, EndNS: t0}
	e1 := trace.Epoch{Index: 1, Model: exactModel(other, ref, t0), StartNS: t0 + 2e9, EndNS: t0 + 2e9}
	files := []rankFile{
		{Header: trace.Header{Rank: 0, Inject: ref}, Epochs: []trace.Epoch{{Index: 0, Model: exactModel(ref, ref, t0)}, {Index: 1, Model: exactModel(ref, ref, t0)}}},
		{Header: trace.Header{Rank: 1, Inject: other}, Epochs: []trace.Epoch{e0, e1}},
	}
	errNS, after, ok := extrapolatedError(files)
	if !ok || after != 2e9 || math.Abs(errNS-200) > 1e-3 {
		t.Errorf("extrapolatedError = %v ns after %v ns (ok %v), want 200 ns after 2e9", errNS, after, ok)
	}
	for i := range files {
		files[i].Epochs = files[i].Epochs[:1]
	}
	if _, _, ok := extrapolatedError(files); ok {
		t.Error("reported without epoch 1")
	}
}

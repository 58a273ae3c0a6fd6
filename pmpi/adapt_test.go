package main

import (
	"math"
	"testing"
)

// TestJudgeKnot_DisagreesWhenTheClockBends: a knot on the line through
// the two before it is calm, one that misses it by more than resyncTolNS
// disagrees, in between keeps; without two earlier knots it keeps.
func TestJudgeKnot_DisagreesWhenTheClockBends(t *testing.T) {
	a, b := knotPoint{0, 100}, knotPoint{2e9, 300}
	for _, tc := range []struct {
		name string
		a, b knotPoint
		k    knotPoint
		want knotVerdict
	}{
		{"on the line", a, b, knotPoint{4e9, 500}, knotCalm},
		{"a little off", a, b, knotPoint{4e9, 500 + resyncTolNS/2}, knotKeep},
		{"bent", a, b, knotPoint{4e9, 500 - 2*resyncTolNS}, knotDisagree},
		{"one earlier knot only", b, b, knotPoint{4e9, 1e6}, knotKeep},
	} {
		if got, _ := judgeKnot(tc.a, tc.b, tc.k); got != tc.want {
			t.Errorf("%s: verdict %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestAgreeEncoding_RoundTrips: ok, verdict and cost survive the one int
// of the closing allgather; a failed rank is 0; costs are capped.
func TestAgreeEncoding_RoundTrips(t *testing.T) {
	for _, tc := range []struct {
		ok   bool
		v    knotVerdict
		cost int64
	}{{true, knotKeep, 0}, {true, knotDisagree, 1234}, {true, knotCalm, 99_999_999}, {false, knotCalm, 5}} {
		ok, v, cost := decodeAgree(encodeAgree(tc.ok, tc.v, tc.cost))
		wantCost := min(tc.cost, 1<<27)
		if !tc.ok {
			if ok || encodeAgree(tc.ok, tc.v, tc.cost) != 0 {
				t.Errorf("failed rank encodes as %d", encodeAgree(tc.ok, tc.v, tc.cost))
			}
			continue
		}
		if !ok || v != tc.v || cost != wantCost {
			t.Errorf("%+v decoded as %v %v %v", tc, ok, v, cost)
		}
	}
}

// TestNextInterval_HalvesOnDisagreementAndKeepsTheBudget: disagreement
// halves the interval down to GCLOCK_RESYNC/8, calm lengthens it by half
// up to 2·GCLOCK_RESYNC, and the interval never gets shorter than
// GCLOCK_RESYNC where the resyncs would then take more than resyncBudget of
// the run.
func TestNextInterval_HalvesOnDisagreementAndKeepsTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cur            float64
		disagree, calm bool
		cost, want     float64
	}{
		{"disagree", 2, true, false, 1e-4, 1},
		{"disagree at the floor", 0.25, true, false, 1e-4, 0.25},
		{"calm", 2, false, true, 1e-4, 3},
		{"calm at the ceiling", 4, false, true, 1e-4, 4},
		{"keep", 2, false, false, 1e-4, 2},
		{"costly resync: the budget sets the floor", 2, true, false, 1.5e-3, 1.5},
		{"very costly: GCLOCK_RESYNC wins", 2, false, false, 0.02, 2},
	} {
		got := nextInterval(tc.cur, 2, tc.disagree, tc.calm, tc.cost)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: next interval %g s, want %g s", tc.name, got, tc.want)
		}
		if got < 2 && tc.cost/got > resyncBudget*(1+1e-9) {
			t.Errorf("%s: cost %g s per %g s is over the budget", tc.name, tc.cost, got)
		}
	}
}

// TestResyncAdaptOn_ParsesTheSetting: default on, 0/off turn it off, junk
// is an error that keeps it on.
func TestResyncAdaptOn_ParsesTheSetting(t *testing.T) {
	for v, want := range map[string]bool{"": true, "1": true, "on": true, "0": false, "off": false, "false": false} {
		got, err := resyncAdaptOn(func(string) string { return v })
		if err != nil || got != want {
			t.Errorf("GCLOCK_RESYNC_ADAPT=%q: %v, %v; want %v", v, got, err, want)
		}
	}
	if got, err := resyncAdaptOn(func(string) string { return "maybe" }); err == nil || !got {
		t.Errorf("GCLOCK_RESYNC_ADAPT=maybe: %v, %v; want on and an error", got, err)
	}
}

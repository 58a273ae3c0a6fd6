package main

import (
	"testing"

	"github.com/gclock/gclock/clocksync"
)

// TestAgreeEncoding_RoundTrips: ok, verdict and cost survive the one int
// of the closing allgather; a failed rank is 0; costs are capped.
func TestAgreeEncoding_RoundTrips(t *testing.T) {
	for _, tc := range []struct {
		ok   bool
		v    clocksync.KnotVerdict
		cost int64
	}{{true, clocksync.KnotKeep, 0}, {true, clocksync.KnotDisagree, 1234}, {true, clocksync.KnotCalm, 99_999_999}, {false, clocksync.KnotCalm, 5}} {
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

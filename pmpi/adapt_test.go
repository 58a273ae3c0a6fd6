package main

import (
	"testing"

	"github.com/gclock/gclock/clocksync"
)

// TestAgreeEncoding_RoundTrips: ok, verdict and both times survive the one
// int of the closing allgather, the times rounded up by at most 0.2 %
// (exact below 512 µs); a failed rank is 0.
func TestAgreeEncoding_RoundTrips(t *testing.T) {
	for _, tc := range []struct {
		ok         bool
		v          clocksync.KnotVerdict
		cost, prev int64
	}{
		{true, clocksync.KnotKeep, 0, 0},
		{true, clocksync.KnotDisagree, 1234, 511},
		{true, clocksync.KnotCalm, 99_999_999, 57_800},
		{true, clocksync.KnotCalm, 1 << 40, 3},
		{false, clocksync.KnotCalm, 5, 6},
	} {
		x := encodeAgree(tc.ok, tc.v, tc.cost, tc.prev)
		ok, v, cost, prev := decodeAgree(x)
		if !tc.ok {
			if ok || x != 0 {
				t.Errorf("failed rank encodes as %d", x)
			}
			continue
		}
		if !ok || v != tc.v {
			t.Errorf("%+v decoded as %v %v", tc, ok, v)
		}
		for _, p := range [][2]int64{{tc.cost, cost}, {tc.prev, prev}} {
			want := min(p[0], usMax)
			if p[1] < want || float64(p[1]) > float64(want)*1.002+1e-9 || (want < 512 && p[1] != want) {
				t.Errorf("%+v: %d µs decoded as %d", tc, p[0], p[1])
			}
		}
	}
}

// TestEncodeUS_NeverBelowAndWithinAFifthOfAPercent: every duration from 0
// to beyond 10^9 µs decodes to at least itself and at most 0.2 % more, and
// the code fits 14 bits.
func TestEncodeUS_NeverBelowAndWithinAFifthOfAPercent(t *testing.T) {
	for us := int64(0); us < 1e10; us = us + 1 + us/997 {
		x := encodeUS(us)
		got := decodeUS(x)
		if x >= 1<<usBits || got < us || float64(got) > float64(us)*1.002 && got != us {
			t.Fatalf("%d µs: code %d decodes as %d", us, x, got)
		}
	}
}

// TestArmEncoding_RoundTrips: whether a rank records and its end anchor's
// time survive the arming agreement's int.
func TestArmEncoding_RoundTrips(t *testing.T) {
	for _, tc := range []struct {
		on   bool
		us   int64
		want int64
	}{{true, 0, 0}, {true, 350, 350}, {true, 1 << 40, 1<<30 - 1}, {false, 350, 0}} {
		on, us := decodeArm(encodeArm(tc.on, tc.us))
		if on != tc.on || us != tc.want {
			t.Errorf("%+v decoded as %v %d", tc, on, us)
		}
	}
}

// TestResyncBudget_ParsesTheSetting: default 0.1 %, a share in [0, 1),
// junk or out of range is an error that keeps the default.
func TestResyncBudget_ParsesTheSetting(t *testing.T) {
	for _, tc := range []struct {
		v       string
		want    float64
		wantErr bool
	}{{"", 0.001, false}, {"0", 0, false}, {"0.01", 0.01, false}, {"1", 0.001, true}, {"-0.1", 0.001, true}, {"NaN", 0.001, true}, {"lots", 0.001, true}} {
		got, err := resyncBudget(func(string) string { return tc.v })
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("GCLOCK_RESYNC_BUDGET=%q: %v, %v; want %v (error %v)", tc.v, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestResyncPingPongs_ParsesTheSetting: default clocksync.ResyncPingPongs,
// a count from 1 up; junk, 0 or negative is an error that keeps the
// default.
func TestResyncPingPongs_ParsesTheSetting(t *testing.T) {
	def := clocksync.ResyncPingPongs
	for _, tc := range []struct {
		v       string
		want    int
		wantErr bool
	}{{"", def, false}, {"50", 50, false}, {" 1 ", 1, false}, {"0", def, true}, {"-3", def, true}, {"1e3", def, true}, {"many", def, true}} {
		got, err := resyncPingPongs(func(string) string { return tc.v })
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("GCLOCK_RESYNC_PINGPONGS=%q: %v, %v; want %v (error %v)", tc.v, got, err, tc.want, tc.wantErr)
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

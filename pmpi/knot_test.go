package main

import (
	"math"
	"strconv"
	"testing"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/trace"
)

// TestSetKnotNS_LocalTimeWhereTheModelReadsTheKnotsGlobalTime: knot_ns
// is the local timer ns at which the epoch's model reads knot_at_s (the
// global time its bound was proven at); nothing without a positive
// bound (unknown, or the reference's 0) or with a malformed time.
func TestSetKnotNS_LocalTimeWhereTheModelReadsTheKnotsGlobalTime(t *testing.T) {
	const base0 = int64(1_000_000_000_000)
	m := clocksync.LinearModel{Slope: 100e-6, Intercept: 5e-3} // offset = local - global
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   bool
	}{
		{"bound and time", map[string]string{"bound_ns": "250.0", "knot_at_s": "12.345678901"}, true},
		{"reference (bound 0)", map[string]string{"bound_ns": "0.0", "knot_at_s": "12.3"}, false},
		{"no bound", map[string]string{"knot_at_s": "12.3"}, false},
		{"malformed time", map[string]string{"bound_ns": "250.0", "knot_at_s": "x"}, false},
		{"stale knot_ns removed", map[string]string{"bound_ns": "", "knot_at_s": "1", "knot_ns": "5"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setKnotNS(tc.params, m, base0)
			v, ok := tc.params["knot_ns"]
			if ok != tc.want {
				t.Fatalf("knot_ns %q present %v, want %v", v, ok, tc.want)
			}
			if !ok {
				return
			}
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			at, _ := strconv.ParseFloat(tc.params["knot_at_s"], 64)
			// the recorded epoch model, read at knot_ns, gives the knot's
			// global time (ns since base0, in global ns as trace.Model does)
			tm := trace.Model{T0: base0, Slope: m.Slope, Intercept: m.Intercept * 1e9}
			if got, want := tm.Global(ns), float64(base0)+at*1e9; math.Abs(got-want) > 1 {
				t.Errorf("model at knot_ns %d reads %.1f, want %.1f", ns, got, want)
			}
		})
	}
}

// TestMarkCopiedKnot_OnlyAKnotBeforeTheEpochsStart: a node member's knot
// (its leader's measurement) is marked copied exactly when it lies before
// the member's epoch start; within the epoch, or without knot_ns, the
// params stay as they were.
func TestMarkCopiedKnot_OnlyAKnotBeforeTheEpochsStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		knotNS string
		want   bool
	}{
		{"before the start", "999", true},
		{"at the start", "1000", false},
		{"inside", "1500", false},
		{"none", "", false},
		{"malformed", "9x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := map[string]string{}
			if tc.knotNS != "" {
				p["knot_ns"] = tc.knotNS
			}
			markCopiedKnot(p, 1000)
			if got := p["knot_copied"] == "1"; got != tc.want {
				t.Errorf("knot_copied %q, want marked %v", p["knot_copied"], tc.want)
			}
		})
	}
}

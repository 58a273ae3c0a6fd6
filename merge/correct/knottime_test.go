package correct

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace"
)

// TestKnotTime_AtTheMeasurementWithinTheEpoch: an epoch's knot lies at its
// recorded knot_ns (where its sync-path bound was proven) when that lies
// within the epoch, else at the epoch's end; the corrector's curve passes
// through the model's value there.
func TestKnotTime_AtTheMeasurementWithinTheEpoch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		knotNS string
		want   int64
	}{
		{"recorded inside", "1500", 1500},
		{"at the start", "1000", 1000},
		{"none recorded (older files)", "", 2000},
		{"before the epoch", "999", 2000},
		{"after the epoch", "2001", 2000},
		{"malformed", "12x", 2000},
		{"copied from the node leader, before the epoch", "600 copied", 600},
		{"copied from the node leader, inside", "1500 copied", 1500},
		{"copied from the node leader, after the epoch", "2001 copied", 2000},
		{"copied from the node leader, negative", "-5 copied", 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := trace.Epoch{StartNS: 1000, EndNS: 2000, Params: map[string]string{}}
			if v, ok := strings.CutSuffix(tc.knotNS, " copied"); ok {
				e.Params["knot_ns"], e.Params["knot_copied"] = v, "1"
			} else if tc.knotNS != "" {
				e.Params["knot_ns"] = tc.knotNS
			}
			if got := KnotTime(e); got != tc.want {
				t.Errorf("KnotTime %d, want %d", got, tc.want)
			}
		})
	}
	// Two epochs whose models differ in slope: the interpolation passes
	// through each model's value at its knot.
	mk := func(i int, start, end, knot int64, slope, icept float64) trace.Epoch {
		return trace.Epoch{Index: i, StartNS: start, EndNS: end, Model: trace.Model{Slope: slope, Intercept: icept},
			Params: map[string]string{"knot_ns": strconv.FormatInt(knot, 10), "bound_ns": "100"}}
	}
	eps := []trace.Epoch{mk(0, 0, 400e6, 100e6, 1e-6, 5000), mk(1, 10e9, 10.3e9, 10.1e9, 2e-6, 9000)}
	c, _ := NewCorrector(ClockLinear, eps, 0)
	for _, e := range eps {
		k := KnotTime(e)
		if got, want := c.Global(k), e.Model.Global(k); got-want > 1e-6 || want-got > 1e-6 {
			t.Errorf("epoch %d: corrected %f at its knot %d, want the model's %f", e.Index, got, k, want)
		}
	}
}

// TestKnotTime_CopiedKnotBeforeTheEpochIsTheLeadersMeasurement: a node
// member entered a resync 100 ms after its leader measured; its epoch's
// model (the leader's, copied) is right at the measurement and off by
// its slope error later. The corrected curve must pass through the model
// at the measurement, not at the epoch's end; a copied knot that would
// not follow the previous knot falls back to the epoch's end.
func TestKnotTime_CopiedKnotBeforeTheEpochIsTheLeadersMeasurement(t *testing.T) {
	mk := func(i int, start, end, knot int64, copied bool, slope, icept float64) trace.Epoch {
		p := map[string]string{"knot_ns": strconv.FormatInt(knot, 10), "bound_ns": "100"}
		if copied {
			p["knot_copied"] = "1"
		}
		return trace.Epoch{Index: i, StartNS: start, EndNS: end, Model: trace.Model{Slope: slope, Intercept: icept}, Params: p}
	}
	for _, tc := range []struct {
		name     string
		mid      trace.Epoch
		wantKnot int64
	}{
		{"copied, 100 ms before the member's start", mk(1, 2.1e9, 2.101e9, 2.0e9, true, 11e-6, 3000), 2.0e9},
		{"copied, but before the previous knot", mk(1, 2.1e9, 2.101e9, 0.2e9, true, 11e-6, 3000), 2.101e9},
		{"not copied, before the start", mk(1, 2.1e9, 2.101e9, 2.0e9, false, 11e-6, 3000), 2.101e9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps := []trace.Epoch{mk(0, 0, 0.4e9, 0.3e9, false, 10e-6, 5000), tc.mid, mk(2, 4e9, 4.2e9, 4.1e9, false, 12e-6, 1000)}
			c, note := NewCorrector(ClockLinear, eps, 0)
			if c.Mode() != ClockLinear {
				t.Fatalf("mode %v (%s), want linear", c.Mode(), note)
			}
			k := tc.wantKnot
			if got, want := c.Global(k), tc.mid.Model.Global(k); math.Abs(got-want) > 1e-3 {
				t.Errorf("corrected %.3f at %d, want the model's %.3f there", got, k, want)
			}
			// 50 ms on the other side the curve is not the model (slopes differ by 1-2 ppm)
			other := tc.mid.EndNS
			if k == tc.mid.EndNS {
				other = 2.0e9
			}
			if got, m := c.Global(other), tc.mid.Model.Global(other); math.Abs(got-m) < 1e-3 {
				t.Errorf("corrected equals the model at %d too: the test cannot tell the knots apart", other)
			}
		})
	}
}

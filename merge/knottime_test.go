package merge

import (
	"strconv"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := trace.Epoch{StartNS: 1000, EndNS: 2000, Params: map[string]string{}}
			if tc.knotNS != "" {
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

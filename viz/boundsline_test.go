package viz

import (
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
)

// TestBoundsLine_SyncPaths: the sync-path part of the clock-bounds line
// says what a bound of zero means (every rank on rank 0's clock) instead
// of printing "±0 at most", gives a measured bound as one, and is absent
// where no epoch recorded a bound.
func TestBoundsLine_SyncPaths(t *testing.T) {
	for _, tc := range []struct {
		name      string
		q         datamodel.ClockQuality
		want, not string
	}{
		{"one clock", datamodel.ClockQuality{SyncBoundNS: 0}, "every rank reads rank 0's clock", "±0"},
		{"measured", datamodel.ClockQuality{SyncBoundNS: 2130}, "at the knots) ±2.13 µs at most", "rank 0's clock"},
		{"none known", datamodel.ClockQuality{SyncBoundNS: -1}, "", "sync paths"},
		{"with facts", datamodel.ClockQuality{SyncBoundNS: 0, BoundRanks: 3, TypicalBoundNS: 50, BoundNS: 90}, "; sync paths: none", "±0 at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := BoundsLine(tc.q)
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("BoundsLine = %q, want it to contain %q", got, tc.want)
			}
			if tc.want == "" && got != "" {
				t.Errorf("BoundsLine = %q, want no line", got)
			}
			if strings.Contains(got, tc.not) {
				t.Errorf("BoundsLine = %q, must not contain %q", got, tc.not)
			}
		})
	}
}

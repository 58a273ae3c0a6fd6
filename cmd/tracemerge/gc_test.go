package main

import (
	"runtime/debug"
	"testing"
)

// TestGCForRanks_OnlyManyRanksAndNeverOverGOGC: the collector's target is
// lowered for runs of more than manyRanksGC ranks only, and never when
// the user set GOGC.
func TestGCForRanks_OnlyManyRanksAndNeverOverGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		ranks int
		gogc  string
		want  int
	}{
		{8, "", 100},
		{manyRanksGC, "", 100},
		{manyRanksGC + 1, "", 25},
		{16384, "", 25},
		{16384, "100", 100},
	} {
		t.Setenv("GOGC", tc.gogc)
		debug.SetGCPercent(100)
		gcForRanks(tc.ranks)
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("%d ranks, GOGC=%q: GC percent %d, want %d", tc.ranks, tc.gogc, got, tc.want)
		}
	}
}

package datamodel

import (
	"encoding/json"
	"strings"
	"testing"
	"unsafe"
)

// TestEngineFields_AreNotInTheJSONOutputs: the fields the engine sets for
// its own use (exported only so that the engine, a package above, can set
// them) never appear in imbalance.json or p2p.json, whatever their value.
func TestEngineFields_AreNotInTheJSONOutputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      any
		absent []string
	}{
		{"Instance", Instance{LastSiteIdx: 7, WaitSiteIdx: 8, CauseSiteIdx: 9},
			[]string{"LastSiteIdx", "WaitSiteIdx", "CauseSiteIdx", ":7", ":8", ":9"}},
		{"ClockQuality", ClockQuality{ErrBarsByRank: []float64{123.5}},
			[]string{"ErrBarsByRank", "123.5"}},
		{"Analysis", Analysis{Worst: []Instance{{LastSiteIdx: 7}}, Clock: ClockQuality{ErrBarsByRank: []float64{123.5}}},
			[]string{"SiteIdx", "ErrBarsByRank", "123.5"}},
		{"P2PResult", P2PResult{Repairs: []Repair{{Rank: 3, G: 4.5, D: 6.5}}, List: []Message{{Src: 1}}},
			[]string{"Repairs", "List", "4.5", "6.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.absent {
				if strings.Contains(string(b), s) {
					t.Errorf("%s's JSON holds %q, an engine field: %s", tc.name, s, b)
				}
			}
		})
	}
}

// TestGEvent_EngineFieldsKeepTwoCacheLines: exporting the matching fields
// kept GEvent at two cache lines with the engine's fields last (the
// engine's own check is merge's TestGEvent_IsTwoCacheLines).
func TestGEvent_EngineFieldsKeepTwoCacheLines(t *testing.T) {
	var e GEvent
	if got := unsafe.Sizeof(e); got != 128 {
		t.Errorf("unsafe.Sizeof(GEvent{}) = %d, want 128", got)
	}
	if unsafe.Offsetof(e.CommIdx) < unsafe.Offsetof(e.Req) || unsafe.Offsetof(e.Ord) != 120 {
		t.Errorf("the engine's fields moved: CommIdx at %d (Req at %d), Ord at %d (want 120)",
			unsafe.Offsetof(e.CommIdx), unsafe.Offsetof(e.Req), unsafe.Offsetof(e.Ord))
	}
}

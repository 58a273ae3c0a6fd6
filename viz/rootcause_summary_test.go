package viz

import (
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
)

// TestRootCauseSummary_NamesEveryKindOfWaitThatOccurred: the sentence
// above the root-cause table (text and HTML) names the one-sided kinds,
// Wait at Fence, Late Post and Early Wait, when they occurred, and not
// when they did not (runs without one-sided calls keep their sentence).
func TestRootCauseSummary_NamesEveryKindOfWaitThatOccurred(t *testing.T) {
	base := datamodel.RootCauseResult{TotalWaitNS: 6e6, WaitStates: 3, CollectiveWaitNS: 1e6, LateSenderNS: 1e6,
		LateReceiverNS: 1e6, AttributedNS: 6e6, RankTimeNS: 1e9}
	tests := []struct {
		name          string
		fence, lp, ew float64
		want, wantNot []string
	}{
		{"none", 0, 0, 0, nil, []string{"Wait at Fence", "Late Post", "Early Wait"}},
		{"all", 1e6, 1e6, 1e6, []string{"Wait at Fence 1", "Late Post 1", "Early Wait 1"}, nil},
		{"late post only", 0, 3e6, 0, []string{"Late Post 3"}, []string{"Wait at Fence", "Early Wait"}},
		{"early wait only", 0, 0, 3e6, []string{"Early Wait 3"}, []string{"Wait at Fence", "Late Post"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := base
			rc.WaitAtFenceNS, rc.LatePostNS, rc.EarlyWaitNS = tc.fence, tc.lp, tc.ew
			s := RootCauseSummary(&rc)
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("%q lacks %q", s, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(s, w) {
					t.Errorf("%q names %q, which did not occur", s, w)
				}
			}
		})
	}
}

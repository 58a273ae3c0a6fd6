package clocksync

import "testing"

// TestAnchorLoose: the end anchor replaces the fitted knot unless its
// bound is both above 1 µs and above 4 times the fit's (a disturbed
// anchor); unknown bounds and the reference keep the anchor.
func TestAnchorLoose(t *testing.T) {
	for _, tc := range []struct {
		anchor, fit float64
		loose       bool
	}{
		{0.3e-6, 0.3e-6, false}, // shared memory: alike
		{40e-6, 41e-6, false},   // TCP: alike, both wide
		{80e-6, 41e-6, false},   // TCP, one more hop in the tree
		{24e-6, 0.3e-6, true},   // disturbed anchor on shared memory
		{0.9e-6, 0.1e-6, false}, // 9× but under 1 µs
		{1.2e-6, 0.1e-6, true},  // 12× and over 1 µs
		{24e-6, -1, false},      // fit bound unknown
		{24e-6, 0, false},       // reference
		{-1, 0.3e-6, false},     // anchor bound unknown
	} {
		if got := anchorLoose(tc.anchor, tc.fit); got != tc.loose {
			t.Errorf("anchorLoose(%g, %g) = %v, want %v", tc.anchor, tc.fit, got, tc.loose)
		}
	}
}

package merge

import (
	"math/rand/v2"
	"testing"
)

// TestRootCause_PushSlowWheneverTheRingIsFull pushes segments to two
// ranks whose paths jump to each other at random older calls (a jump
// sets a rank's first unsummed segment back) and checks, before every
// push, that the stream's one comparison (n ≥ slowAt) calls pushSlow
// whenever full holds: else a segment not yet summed into the rank's
// critical path would be overwritten. It checks the rings' lengths and
// the paths too: every segment pushed, in the path or still in the ring.
func TestRootCause_PushSlowWheneverTheRingIsFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		hist int
		back uint64 // how far back a jump's call may be
	}{{"short jumps", 64, 4}, {"jumps across the ring", 64, 60}, {"longer ring", 256, 200}} {
		t.Run(tc.name, func(t *testing.T) {
			s := &RootCauseStream{hist: tc.hist, cpDepth: cpDepthFor(2), cpFrozen: cpMaxFrozen, cpScratch: entSums{w: 2}}
			rs := [2]*rcRank{s.rank(0), s.rank(1)}
			rng := rand.New(rand.NewPCG(7, uint64(tc.hist)))
			checked := 0
			for step := 0; step < 20000; step++ {
				for _, r := range rs {
					if r.full(s.hist) {
						checked++
						if r.n < r.slowAt {
							t.Fatalf("step %d rank %d: ring full at n=%d (length %d, path from %d) but slowAt %d: pushSlow skipped",
								step, r.rank, r.n, len(r.segs), r.cp.from, r.slowAt)
						}
					}
					s.push(r, rcSeg{start: float64(step), dur: 1 + float64(step%3), region: int32(step % 2)})
				}
				if rng.Float64() < 0.3 {
					a, b := rs[step%2], rs[1-step%2]
					pa := a.n - 1 - rng.Uint64N(min(tc.back, a.n-a.oldest()))
					pb := b.n - 1 - rng.Uint64N(min(tc.back, b.n-b.oldest()))
					s.jump(a, pa, b, pb, 0.5, float64(step))
				}
			}
			if checked == 0 {
				t.Fatal("the rings were never full: the test checks nothing")
			}
			for _, r := range rs {
				if len(r.segs) != tc.hist {
					t.Errorf("rank %d: ring of %d segments, want the history %d", r.rank, len(r.segs), tc.hist)
				}
				if r.cp.from < r.oldest() {
					t.Errorf("rank %d: path's first unsummed segment %d left the ring (oldest %d)", r.rank, r.cp.from, r.oldest())
				}
			}
		})
	}
}

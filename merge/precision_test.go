package merge

import (
	"math"
	"math/big"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// bigGlobalRel is the exact global time of local t relative to origin
// under model m, in 256-bit arithmetic: (t − origin) − (Slope·(t − T0) +
// Intercept), with the model's float64 parameters taken as exact.
func bigGlobalRel(m trace.Model, t, origin int64) float64 {
	prec := uint(256)
	f := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	i := func(x int64) *big.Float { return new(big.Float).SetPrec(prec).SetInt64(x) }
	off := new(big.Float).SetPrec(prec).Mul(f(m.Slope), i(t-m.T0))
	off.Add(off, f(m.Intercept))
	g := new(big.Float).SetPrec(prec).Sub(i(t-origin), off)
	v, _ := g.Float64()
	return v
}

// With a CLOCK_REALTIME-like timebase (≈1.8e18 ns) an absolute float64
// resolves only 256 ns; times relative to the run origin must still match
// the exact correction to ≤ 2 ns, for both correction modes, and the
// absolute value origin + round(t) must be the exact integer.
func TestCorrection_RealtimeTimebaseKeepsNanoseconds(t *testing.T) {
	const base = 1_800_000_000_000_000_000
	for _, mode := range []correct.ClockMode{correct.ClockInit, correct.ClockInterp} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := synth.Config{Ranks: 4, NodeSize: 2, Steps: 1500, Seed: 91, BaseNS: base,
				Nodes: []synth.NodeClock{{OffsetNS: 3e6, DriftPPM: 25}, {OffsetNS: -1.5e6, DriftPPM: -40}}}
			dir, tr := genRun(t, cfg)
			res, c := analyzeDir(t, dir, Options{Clock: mode})
			origin := res.Analysis.OriginNS
			if origin < base/2 {
				t.Fatalf("origin %d is not in the realtime-like timebase", origin)
			}
			maxRel, maxAbsOld, maxInt := 0.0, 0.0, 0.0
			for i := range c.ev {
				e := &c.ev[i]
				m := tr.Models[e.Rank][0]
				for _, p := range [][2]float64{{float64(e.LocalEnter), e.Enter}, {float64(e.LocalExit), e.Exit}} {
					local := int64(p[0])
					want := bigGlobalRel(m, local, origin)
					maxRel = math.Max(maxRel, math.Abs(p[1]-want))
					// The old absolute float64 path, for the record.
					old := float64(local) - m.Offset(local)
					maxAbsOld = math.Max(maxAbsOld, math.Abs(old-float64(origin)-want))
					// Absolute integer: origin + round(relative) within 1 ns of the exact value.
					abs := origin + int64(math.Round(p[1]))
					maxInt = math.Max(maxInt, math.Abs(float64(abs-origin)-want))
				}
			}
			t.Logf("%d events: max |relative - exact| = %.3f ns; absolute float64 (before) would be off by up to %.0f ns; integer absolute within %.2f ns",
				len(c.ev), maxRel, maxAbsOld, maxInt)
			if maxRel > 2 {
				t.Errorf("max |corrected - exact| = %.3f ns, want <= 2", maxRel)
			}
			if maxInt > 2.5 {
				t.Errorf("absolute integer times off by %.2f ns", maxInt)
			}
		})
	}
}

package correct

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gclock/gclock/trace"
)

// TestOffsetModel_KinkRulesJudgeABendAtItsOwnSpacing: the kink rules
// (a frequency step inside an interval or at a knot) compare a candidate's
// change of secant with the run's typical bend, scaled to the candidate's
// spacing (smoothCurve's typicalBend). Three knot spacings, 40 seeds each,
// the worst max |model − truth|:
//   - the knots of a 40 s run at 4 ranks whose sixth resync cost 15 ms
//     (1.5 s apart, then 3.8 s shrinking back: the budget's even repayment,
//     clocksync/sim/longrun's replay): on a 20 µs / 20 s sine the bend
//     scaled as knot noise's read the trough in a 3.6 s interval as a
//     frequency step, 6.5 µs off with exact knots;
//   - 0.5 s intervals, then 8 s ones, on a 1 ppm step at 15-25 s with
//     10 ns knot noise: the bend scaled as a smooth clock's alone, inflated
//     by the short intervals' noise, missed the step (1.36 µs);
//   - even 2 s spacing, where nothing changes (the figures of
//     TestOffsetModel_SchemesOnInjectedShapes).
func TestOffsetModel_KinkRulesJudgeABendAtItsOwnSpacing(t *testing.T) {
	replay := []float64{0, 0.7}
	x := 0.7
	for _, g := range []float64{1.8, 1.1, 1.5, 1.5, 1.5, 1.5, 3.8, 3.6, 3.5, 2.8, 2.3, 2.1, 2.0, 1.9, 1.8, 1.8, 1.7} {
		x += g
		replay = append(replay, x)
	}
	replay = append(replay, x+0.05)
	shortLong := []float64{0.1, 0.6, 1.1, 1.6, 2.1, 2.6, 3.1, 3.6, 4.1, 12.1, 20.1, 28.1, 36.1, 40, 40.2}
	even := []float64{0.1}
	for x := 2.1; x < 40; x += 2 {
		even = append(even, x)
	}
	even = append(even, 40, 40.2)
	sine, step := studyShapes[2], studyShapes[1]
	for _, tc := range []struct {
		name    string
		at      []float64
		shape   shapeCase
		sigma   float64
		boundNS float64
	}{
		{"costly sixth resync, sine, exact knots", replay, sine, 0, 300},
		{"costly sixth resync, sine, 10 ns knots", replay, sine, 10, 300},
		{"costly sixth resync, step, 10 ns knots", replay, step, 10, 150},
		{"0.5 s then 8 s, step, 10 ns knots", shortLong, step, 10, 300},
		{"even 2 s, sine, 10 ns knots", even, sine, 10, 120},
		{"even 2 s, step, 10 ns knots", even, step, 10, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			worst := 0.0
			for seed := uint64(1); seed <= 40; seed++ {
				ts, o, off := jitteredKnots(t, tc.shape, seed, tc.at, tc.sigma)
				worst = math.Max(worst, modelMaxError(ts, o, DefaultScheme, off))
			}
			t.Logf("%s: worst max error %.3f µs over 40 seeds", tc.name, worst/1e3)
			if worst > tc.boundNS {
				t.Errorf("worst max |model − truth| %.3f µs, bound %.3f µs", worst/1e3, tc.boundNS/1e3)
			}
		})
	}
}

// jitteredKnots places knots at the times at (s), each up to 10 ms late,
// on shape's clock of seed, with Gaussian errors of sigma ns: their local
// times, measured offsets and the true offset function.
func jitteredKnots(t *testing.T, shape shapeCase, seed uint64, at []float64, sigma float64) ([]int64, []float64, func(float64) float64) {
	t.Helper()
	off := shapeOffset(t, shape, seed)
	rng := rand.New(rand.NewPCG(seed, 39))
	ts := make([]int64, len(at))
	o := make([]float64, len(at))
	for i, s := range at {
		ts[i] = int64(s*1e9) + int64(rng.IntN(1e7))
		o[i] = off(float64(ts[i])) + sigma*rng.NormFloat64()
	}
	return ts, o, off
}

// shapeOffset is the injected offset (ns) of shape's clock of seed at
// raw time tt (ns).
func shapeOffset(t *testing.T, shape shapeCase, seed uint64) func(float64) float64 {
	t.Helper()
	ins, err := trace.ParseFakeClock(shape.spec(seed))
	if err != nil {
		t.Fatal(err)
	}
	in := ins[0]
	return func(tt float64) float64 { return in.Recorded(tt) - tt }
}

// TestOffsetModel_IntervalsNextToACloseKnotFollowTheCurve: a knot 0.25 s
// after the one before it among knots 2-3 s apart (the adaptation
// halves the interval to GCLOCK_RESYNC/8 when a knot disagrees) does not
// shape the curve (CloseKnot), and the intervals next to it used to be
// straight: on a 20 µs / 20 s sine a 2.7 s straight interval was 0.88 µs
// off in `make bench` at load 3. They now follow the curve through the
// kept knots (its slope at the close knot), 40 seeds, 10 ns knot noise:
// the sine 1.36 → 0.245 µs; a 1 ppm step and a linear clock unchanged.
func TestOffsetModel_IntervalsNextToACloseKnotFollowTheCurve(t *testing.T) {
	at := []float64{0.1}
	for x := 2.6; x < 40; x += 2.6 {
		at = append(at, x)
		if x > 15 && x < 18 {
			at = append(at, x+0.25) // the close knot
		}
	}
	at = append(at, 40, 40.05)
	for _, tc := range []struct {
		name    string
		shape   shapeCase
		boundNS float64
	}{
		{"sine", studyShapes[2], 250},
		{"step", studyShapes[1], 650}, // 0.593 µs before and after: a step next to the close knot
		{"linear", studyShapes[0], 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			worst := 0.0
			for seed := uint64(1); seed <= 40; seed++ {
				ts, o, off := jitteredKnots(t, tc.shape, seed, at, 10)
				worst = math.Max(worst, modelMaxError(ts, o, DefaultScheme, off))
			}
			t.Logf("%s: worst max error %.3f µs over 40 seeds", tc.name, worst/1e3)
			if worst > tc.boundNS {
				t.Errorf("worst max |model − truth| %.3f µs, bound %.3f µs", worst/1e3, tc.boundNS/1e3)
			}
		})
	}
}

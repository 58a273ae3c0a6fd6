package correct

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace"
)

// TestNewCorrector_LooseKnotsLeanOnSteadyNeighbours: a knot whose
// sync-path bound is far wider than its neighbours' is moved toward their
// line, never beyond its own bound; files without bounds and runs whose
// knots are all loose alike are left as they were.
func TestNewCorrector_LooseKnotsLeanOnSteadyNeighbours(t *testing.T) {
	const sec = int64(1e9)
	truth := func(t int64) float64 { return 50e-6*float64(t) + 1000 } // offset, ns
	type k struct {
		errNS, boundNS float64 // knot's error against the truth, its bound (<0: none)
	}
	for _, tc := range []struct {
		name    string
		knots   []k // at 0, 2, 4, ... s
		probe   int64
		wantErr float64 // |corrected offset - truth| at probe
		moved   bool
	}{
		{"loose first knot", []k{{10e3, 20e3}, {0, 300}, {0, 300}, {0, 300}}, sec / 2, 0, true},
		{"loose first knot, bound too small to reach", []k{{10e3, 5e3}, {0, 300}, {0, 300}, {0, 300}}, 0, 5e3, true},
		{"loose middle knot", []k{{0, 300}, {0, 250}, {-8e3, 15e3}, {0, 300}, {0, 280}}, 4 * sec, 0, true},
		{"loose last knot", []k{{0, 300}, {0, 300}, {0, 300}, {6e3, 9e3}}, 6 * sec, 0, true},
		{"no bounds recorded", []k{{10e3, -1}, {0, -1}, {0, -1}, {0, -1}}, 0, 10e3, false},
		{"all loose alike (TCP)", []k{{3e3, 20e3}, {0, 25e3}, {0, 18e3}, {0, 22e3}}, 0, 3e3, false},
		{"wide but under 1 µs", []k{{500, 900}, {0, 100}, {0, 100}, {0, 100}}, 0, 500, false},
		// A run of loose knots measured right (a bending clock would make
		// the line through the steady ends miss them): each keeps its value.
		{"run of loose knots kept", []k{{0, 300}, {0, 300}, {100, 6e3}, {-100, 6e3}, {200, 6e3}, {0, 6e3}, {0, 300}, {0, 300}}, 6 * sec, 100, false},
		{"two loose knots in a row lean on neighbours", []k{{0, 300}, {0, 300}, {3e3, 6e3}, {-3e3, 6e3}, {0, 300}, {0, 300}}, 4 * sec, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var eps []trace.Epoch
			for i, x := range tc.knots {
				at := int64(i) * 2 * sec
				e := trace.Epoch{Index: i, StartNS: at - 1e6, EndNS: at, Params: map[string]string{},
					Model: trace.Model{T0: at, Slope: 50e-6, Intercept: truth(at) + x.errNS}}
				if x.boundNS >= 0 {
					e.Params["bound_ns"] = strconv.FormatFloat(x.boundNS, 'f', 1, 64)
				}
				eps = append(eps, e)
			}
			c, note := NewCorrector(ClockInterp, eps, 0)
			if c.Mode() != ClockInterp {
				t.Fatalf("mode %v: %s", c.Mode(), note)
			}
			got := math.Abs(c.Offset(tc.probe) - truth(tc.probe))
			if math.Abs(got-tc.wantErr) > 1 {
				t.Errorf("corrected offset off the truth by %.1f ns at %d s, want %.1f ns (note %q)", got, tc.probe/sec, tc.wantErr, note)
			}
			if note != "" {
				t.Errorf("fallback note %q, want none", note)
			}
			if strings.Contains(c.LooseKnots(), "loose sync knot") != tc.moved {
				t.Errorf("loose knots %q: want a description %v", c.LooseKnots(), tc.moved)
			}
			// never outside any knot's own bound
			for i, x := range tc.knots {
				if x.boundNS < 0 {
					continue
				}
				at := int64(i) * 2 * sec
				if d := math.Abs(c.Offset(at) - (truth(at) + x.errNS)); d > x.boundNS+1e-6 {
					t.Errorf("knot %d moved by %.1f ns, beyond its bound %.1f ns", i, d, x.boundNS)
				}
			}
		})
	}
}

// TestNewCorrector_LooseKnotOnABendingClockFollowsTheCurve: a loose knot
// that measured right on a bending clock (20 µs / 20 s sine, knots 2 s
// apart) stays within 0.4 µs of the truth: the line between its
// neighbours misses there by 2.2 µs, the parabola through three steady
// knots by 0.93 µs, the cubic through four by 0.29 µs, and since the
// steady knots miss each other's predictions by as much, the knot is not
// moved at all (LooseKnotEvidence); nor are three loose knots at the
// run's start, which only a line from the first steady knots could judge.
func TestNewCorrector_LooseKnotOnABendingClockFollowsTheCurve(t *testing.T) {
	const sec = int64(1e9)
	truth := func(t int64) float64 { return 1e6 + 20e3*math.Sin(2*math.Pi*float64(t)/20e9) }
	for _, tc := range []struct {
		name  string
		loose []int   // indices of the loose knots (knots every 2 s)
		limit float64 // ns
	}{
		{"two steady knots each side", []int{4}, 400},
		{"one steady knot before, two after", []int{1}, 400},
		{"three loose knots at the start", []int{0, 1, 2}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var eps []trace.Epoch
			for i := range 9 {
				at := int64(i) * 2 * sec
				bound := 300.0
				if slices.Contains(tc.loose, i) {
					bound = 3000 // loose; measured right
				}
				eps = append(eps, trace.Epoch{Index: i, EndNS: at, Params: map[string]string{"bound_ns": strconv.FormatFloat(bound, 'f', 1, 64)},
					Model: trace.Model{T0: at, Intercept: truth(at)}})
			}
			c, _ := NewCorrector(ClockInterp, eps, 0)
			for _, i := range tc.loose {
				at := int64(i) * 2 * sec
				if d := math.Abs(c.Offset(at) - truth(at)); d > tc.limit {
					t.Errorf("loose knot %d was moved %.0f ns off the truth (%s)", i, d, c.LooseKnots())
				}
			}
		})
	}
}

// TestNewCorrector_LooseKnotsNextToLooseOnesStayOnABendingClock is the
// knot pattern of a real run (TestAccuracy_ResyncHoldsNonLinearClocks,
// 2 ranks, 20 µs / 20 s sine, load 6.7): adapted intervals of 0.7-2 s,
// three loose knots measured within 0.03 µs of the truth, two of them
// next to each other before the full sync closing MPI_Finalize. The
// parabola through two steady knots on one side and one on the other
// missed the bending clock by microseconds, and the knot was moved about
// 4 µs off the truth; judged against how far that kind of parabola misses
// the steady knots, it stays.
func TestNewCorrector_LooseKnotsNextToLooseOnesStayOnABendingClock(t *testing.T) {
	for ph := range 16 {
		truth := func(t int64) float64 { return 1e6 + 20e3*math.Sin(2*math.Pi*float64(t)/20e9+float64(ph)*math.Pi/8) }
		at := []float64{0, 2, 3.18, 4.09, 4.83, 6.83, 8.83, 10.83, 12.83, 14.27, 14.6}
		bounds := []float64{420, 351, 363, 160, 155, 2451, 151, 150, 5706, 1547, 140}
		errs := []float64{148, 37, 38, 29, 14, 13, 30, 29, 20, 25, 31}
		var eps []trace.Epoch
		for i, s := range at {
			ns := int64(s * 1e9)
			eps = append(eps, trace.Epoch{Index: i, EndNS: ns, Params: map[string]string{"bound_ns": strconv.FormatFloat(bounds[i], 'f', 1, 64)},
				Model: trace.Model{T0: ns, Intercept: truth(ns) + errs[i]}})
		}
		c, _ := NewCorrector(ClockInterp, eps, 0)
		for i, s := range at {
			ns := int64(s * 1e9)
			if d := math.Abs(c.Offset(ns) - truth(ns)); d > 400 {
				t.Errorf("phase %d: knot %d at %g s (bound %g ns, measured %g ns off) is %.0f ns off the truth after correction (%s)", ph, i, s, bounds[i], errs[i], d, c.LooseKnots())
			}
		}
	}
}

// TestNewCorrector_LooseKnotOffOnAdaptedIntervalsIsStillMoved: the same
// knot pattern on a linear clock, with the loose knot at 12.83 s measured
// 3 µs off (its bound 5.7 µs): it is still moved onto its neighbours'
// curve, to within 0.2 µs of the truth.
func TestNewCorrector_LooseKnotOffOnAdaptedIntervalsIsStillMoved(t *testing.T) {
	truth := func(t int64) float64 { return 1e6 + 10e-6*float64(t) }
	at := []float64{0, 2, 3.18, 4.09, 4.83, 6.83, 8.83, 10.83, 12.83, 14.27, 14.6}
	bounds := []float64{420, 351, 363, 160, 155, 2451, 151, 150, 5706, 1547, 140}
	errs := []float64{148, 37, 38, 29, 14, 13, 30, 29, 3000, 25, 31}
	var eps []trace.Epoch
	for i, s := range at {
		ns := int64(s * 1e9)
		eps = append(eps, trace.Epoch{Index: i, EndNS: ns, Params: map[string]string{"bound_ns": strconv.FormatFloat(bounds[i], 'f', 1, 64)},
			Model: trace.Model{T0: ns, Slope: 10e-6, Intercept: truth(ns) + errs[i]}})
	}
	c, _ := NewCorrector(ClockInterp, eps, 0)
	ns := int64(12.83e9)
	if d := math.Abs(c.Offset(ns) - truth(ns)); d > 200 {
		t.Errorf("the loose knot measured 3 µs off is %.0f ns off the truth after correction (%s)", d, c.LooseKnots())
	}
}

// unevenKnotsAt is a knot pattern the resync budget gives a 37 s run of 8
// oversubscribed ranks on 2 cores (s): the init knot, two resyncs about
// 2 s apart, then one costly epoch held the next ones off for 12 s, and
// MPI_Finalize's resync and full sync.
var unevenKnotsAt = []float64{0.1, 2.2, 4.3, 6.2, 18.5, 31, 36.8, 37}

// TestNewCorrector_DisturbedKnotOnUnevenSpacingIsRepaired: on the uneven
// knots the resync budget gives under load (unevenKnotsAt: gaps of 0.2 to
// 12.5 s), a knot measured 7.5 µs off with a 21 µs bound (what a full
// make test saw at 8 ranks) is moved onto its neighbours' curve wherever
// it lies, on a linear clock (to within 0.5 µs of the truth: the other
// knots are ±20 ns off, and the cubic through the two end knots 0.2 s
// apart carries that 0.33 µs to the knot at 31 s) and on a
// random-walk frequency of 0.05 ppm/√s (the truth from GCLOCK_FAKE_CLOCK's
// own terms; within 1.5 µs: across the 25 s gap around the knot at 18.5 s
// the walk wanders 1.3 µs off its neighbours' cubic): its steady
// neighbours are the next knots, however far apart they are in time
// (LooseKnotReachKnots). The other knots keep what they measured.
func TestNewCorrector_DisturbedKnotOnUnevenSpacingIsRepaired(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		limit float64 // ns
	}{{"5e6:100", 500}, {"1e6:10+rw(1s,0.05ppm,7)", 1500}, {"1e6:10+rw(1s,0.05ppm,11)", 1500}, {"1e6:10+rw(1s,0.05ppm,12)", 1500}} {
		spec := tc.spec
		ins, err := trace.ParseFakeClock(spec)
		if err != nil {
			t.Fatal(err)
		}
		truth := func(ns int64) float64 { return ins[0].Recorded(float64(ns)) - float64(ns) }
		for bad := range unevenKnotsAt {
			t.Run(spec+"/knot "+strconv.Itoa(bad), func(t *testing.T) {
				var eps []trace.Epoch
				for i, s := range unevenKnotsAt {
					ns := int64(s * 1e9)
					errNS, bound := 20.0*float64(i%3-1), 300.0
					if i == bad {
						errNS, bound = 7500, 21e3
					}
					eps = append(eps, trace.Epoch{Index: i, EndNS: ns, Params: map[string]string{"bound_ns": strconv.FormatFloat(bound, 'f', 1, 64)},
						Model: trace.Model{T0: ns, Intercept: truth(ns) + errNS}})
				}
				c, _ := NewCorrector(ClockInterp, eps, 0)
				ns := int64(unevenKnotsAt[bad] * 1e9)
				if d := math.Abs(c.Offset(ns) - truth(ns)); d > tc.limit {
					t.Errorf("the knot measured 7.5 µs off is %.0f ns off the truth after correction, want ≤ %.0f ns (%q)", d, tc.limit, c.LooseKnots())
				}
				for i, s := range unevenKnotsAt {
					if i == bad {
						continue
					}
					ns := int64(s * 1e9)
					if d := math.Abs(c.Offset(ns) - truth(ns)); d > 21 {
						t.Errorf("steady knot %d moved: %.0f ns off the truth", i, d)
					}
				}
			})
		}
	}
}

// TestNewCorrector_LooseKnotOnUnevenSpacingStaysOnABendingClock: on the
// same uneven knots on a 20 µs / 20 s sine (16 phases), a loose knot
// (bound 21 µs) that measured right is not pulled onto a line or cubic
// reaching 12 s across the bend: the steady knots miss each other's
// predictions by as much, scaled to the loose knot's span
// (LooseKnotEvidence), so it stays within 0.5 µs of the truth.
func TestNewCorrector_LooseKnotOnUnevenSpacingStaysOnABendingClock(t *testing.T) {
	for ph := range 16 {
		truth := func(t int64) float64 { return 1e6 + 20e3*math.Sin(2*math.Pi*float64(t)/20e9+float64(ph)*math.Pi/8) }
		for loose := range unevenKnotsAt {
			var eps []trace.Epoch
			for i, s := range unevenKnotsAt {
				ns := int64(s * 1e9)
				bound := 300.0
				if i == loose {
					bound = 21e3
				}
				eps = append(eps, trace.Epoch{Index: i, EndNS: ns, Params: map[string]string{"bound_ns": strconv.FormatFloat(bound, 'f', 1, 64)},
					Model: trace.Model{T0: ns, Intercept: truth(ns) + 20}})
			}
			c, _ := NewCorrector(ClockInterp, eps, 0)
			ns := int64(unevenKnotsAt[loose] * 1e9)
			if d := math.Abs(c.Offset(ns) - truth(ns)); d > 500 {
				t.Errorf("phase %d: loose knot %d, measured 20 ns off, is %.0f ns off the truth after correction (%s)", ph, loose, d, c.LooseKnots())
			}
		}
	}
}

// TestErrorBars_CoverTheKnotsAsMeasuredWhereLooseOnesWereMoved: in 8 s
// runs of few knots (fewKnotRun, knot noise 10 ns, bounds 10-30σ) with a
// 1 ppm frequency step at 1-7 s, one resync knot measured right but with
// a bound 8-28 times the others' (an epoch under load) is moved by the
// loose-knot repair whenever the step bends its neighbours' prediction:
// 0.2-0.7 µs off. The bars must cover the truth at ≥ 99 % of each such
// run's probes in ≥ 99 % of those runs: either the repair or the
// measurement is right, so the bar spans the model through the knots as
// measured with its own bar. Before, 254 of 374 such runs (of 2000) were
// under 99 % (a real 2-rank run: 88.3 %, all knots within 31 ns of the
// truth, 0.55 µs off between them). The median bar over the median error
// of those runs is logged.
func TestErrorBars_CoverTheKnotsAsMeasuredWhereLooseOnesWereMoved(t *testing.T) {
	moved, low := 0, 0
	var errs, bars []float64
	for seed := uint64(1); seed <= 2000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		off := injectedOffset(t, fmt.Sprintf("1e6:10+step(%.3fs,1ppm)", 1+6*rng.Float64()))
		ts, o, bounds := fewKnotRun(off, 10, 10, 30, rng)
		bounds[1+rng.IntN(len(ts)-3)] *= 8 + 20*rng.Float64()
		var eps []trace.Epoch
		for i, x := range ts {
			eps = append(eps, trace.Epoch{Index: i, StartNS: x, EndNS: x, Params: map[string]string{"bound_ns": strconv.Itoa(int(bounds[i]))},
				Model: trace.Model{T0: x, Slope: 10e-6, Intercept: o[i]}})
		}
		c, _ := NewCorrector(ClockInterp, eps, 0)
		if c.LooseKnots() == "" {
			continue
		}
		moved++
		n, in := 0, 0
		for x := ts[0]; x <= ts[len(ts)-1]; x += 1e7 {
			e, b := math.Abs(c.Offset(x)-off(float64(x))), c.ErrorBar(x)
			errs, bars = append(errs, e), append(bars, b)
			n++
			if e <= b {
				in++
			}
		}
		if float64(in)/float64(n) < 0.99 {
			low++
		}
	}
	t.Logf("%d of 2000 runs had their wide-bound knot moved; %d of them under 99 %% coverage; median bar %.0f ns, median error %.0f ns (%.1f×)", moved, low, median(bars), median(errs), median(bars)/median(errs))
	if moved < 100 {
		t.Fatalf("only %d runs had a knot moved: the test does not exercise the repair", moved)
	}
	if low > moved/100 {
		t.Errorf("%d of %d runs with a moved knot have their true error within the bar at under 99 %% of their probes, want at most %d", low, moved, moved/100)
	}
}

// TestNewCorrector_SplitKnotLeansOnAgreeingNeighbours: a resync knot whose
// pair's offsets did not agree (no clear majority of knot_offsets within
// clocksync.KnotAgree: splitKnot) is loose whatever its bound, as over TCP
// between namespace hosts, where every knot's bound is 10-30 µs alike and
// a split knot missed the truth by 2.1 µs among neighbours within 0.3 µs
// (decisions.md D87). It moves to its neighbours' curve when it stands
// out of what they miss each other by; a split knot that measured right,
// and an agreeing knot, keep their values.
func TestNewCorrector_SplitKnotLeansOnAgreeingNeighbours(t *testing.T) {
	const ms = int64(1e6)
	truth := func(t int64) float64 { return 20e-6*float64(t) + 1000 } // offset, ns
	for _, tc := range []struct {
		name            string
		errNS           float64 // knot 6's error against the truth
		offsets, agree  string  // knot 6's knot_offsets, knot_agree
		wantErr, margin float64 // |corrected − truth| at knot 6 and how close
		moved           bool
	}{
		{"split knot 2 µs off", 2e3, "9", "4", 0, 60, true},
		{"split knot -1.2 µs off", -1.2e3, "9", "3", 0, 60, true},
		{"split knot measured right", 30, "9", "4", 30, 1, false},
		{"agreeing knot 2 µs off (4 of 5)", 2e3, "5", "4", 2e3, 1, false},
		{"agreeing knot 2 µs off (5 of 7)", 2e3, "7", "5", 2e3, 1, false},
		{"split knot 2 µs off (4 of 7)", 2e3, "7", "4", 0, 60, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var eps []trace.Epoch
			for i := range 13 {
				at := int64(i) * 100 * ms
				e := 40.0 * float64(i%3-1) // the neighbours' own noise: -40, 0, 40 ns
				p := map[string]string{"bound_ns": "20000.0", "knot_offsets": "5", "knot_agree": "5"}
				if i == 6 {
					e = tc.errNS
					p["knot_offsets"], p["knot_agree"] = tc.offsets, tc.agree
				}
				eps = append(eps, trace.Epoch{Index: i, StartNS: at - ms, EndNS: at, Params: p,
					Model: trace.Model{T0: at, Slope: 20e-6, Intercept: truth(at) + e}})
			}
			c, _ := NewCorrector(ClockInterp, eps, 0)
			at := 600 * ms
			if got := math.Abs(c.Offset(at) - truth(at)); math.Abs(got-tc.wantErr) > tc.margin {
				t.Errorf("knot 6 corrected %.1f ns off the truth, want %.1f ± %.0f ns (%q)", got, tc.wantErr, tc.margin, c.LooseKnots())
			}
			if strings.Contains(c.LooseKnots(), "epoch 6") != tc.moved {
				t.Errorf("loose knots %q: want epoch 6 moved %v", c.LooseKnots(), tc.moved)
			}
		})
	}
}

// TestNewCorrector_CutKnotLeansOnItsNeighbours: a resync knot whose pair
// deadline cut its ping-pongs short and left it one or two offsets
// (pingpongs_cut > 0, knot_offsets < 3) is loose whatever its bound, and
// leans on its steady neighbours; with three offsets or without a cut it
// stays as measured. The 3-knot rows are make test's failing run (8
// oversubscribed ranks at load 15: init, one cut resync, finalize; the
// resync 14.5 µs off with a 22 µs bound, its rank's median 6.9 µs).
func TestNewCorrector_CutKnotLeansOnItsNeighbours(t *testing.T) {
	const ms = int64(1e6)
	truth := func(t int64) float64 { return 100e-6*float64(t) - 5e6 } // offset, ns
	type k struct {
		atMS                int64
		errNS, boundNS      float64
		cut, offsets, agree string
	}
	for _, tc := range []struct {
		name    string
		knots   []k
		check   int     // the knot whose corrected offset is checked
		wantErr float64 // |corrected − truth| there, within 1 %+100 ns
	}{
		{"cut, one offset, 14.5 µs off", []k{{0, -13, 6934, "", "", ""}, {1663, 14478, 22099, "2", "1", "1"}, {2316, 4, 6724, "", "", ""}}, 1, 0},
		{"cut, two offsets, 15.3 µs off", []k{{0, 12, 5029, "", "", ""}, {1667, 15252, 18823, "1", "2", "2"}, {2316, -20, 2209, "", "", ""}}, 1, 0},
		{"not cut, one offset", []k{{0, -13, 6934, "", "", ""}, {1663, 14478, 22099, "", "1", "1"}, {2316, 4, 6724, "", "", ""}}, 1, 14478},
		{"cut, three offsets agreeing", []k{{0, -13, 6934, "", "", ""}, {1663, 14478, 22099, "2", "3", "3"}, {2316, 4, 6724, "", "", ""}}, 1, 14478},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var eps []trace.Epoch
			for i, kn := range tc.knots {
				at := kn.atMS * ms
				p := map[string]string{"bound_ns": strconv.FormatFloat(kn.boundNS, 'f', 1, 64)}
				for key, v := range map[string]string{"pingpongs_cut": kn.cut, "knot_offsets": kn.offsets, "knot_agree": kn.agree} {
					if v != "" {
						p[key] = v
					}
				}
				eps = append(eps, trace.Epoch{Index: i, StartNS: at - ms, EndNS: at, Params: p,
					Model: trace.Model{T0: at, Slope: 100e-6, Intercept: truth(at) + kn.errNS}})
			}
			c, _ := NewCorrector(ClockInterp, eps, 0)
			at := tc.knots[tc.check].atMS * ms
			got := math.Abs(c.Offset(at) - truth(at))
			if math.Abs(got-tc.wantErr) > 0.01*tc.wantErr+100 {
				t.Errorf("knot %d corrected %.1f ns off the truth, want %.1f ns (%q)", tc.check, got, tc.wantErr, c.LooseKnots())
			}
		})
	}
}

package clocksync

import (
	"errors"
	"math"
	"testing"
)

type fixedClock struct{ t float64 }

func (c *fixedClock) GetTime() float64 { return c.t }

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestLinearModel_GlobalIsLocalMinusOffset(t *testing.T) {
	cases := []struct {
		name string
		lm   LinearModel
		x    float64
		want float64
	}{
		{"identity", LinearModel{}, 12.5, 12.5},
		{"offset only", LinearModel{Intercept: 1e-3}, 2, 2 - 1e-3},
		{"slope only", LinearModel{Slope: 1e-5}, 100, 100 - 1e-3},
		{"both", LinearModel{Slope: -2e-6, Intercept: -5e-4}, 10, 10 - (-2e-5 - 5e-4)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.lm.Global(c.x); !near(got, c.want, 1e-15) {
				t.Fatalf("Global(%g) = %.17g, want %.17g", c.x, got, c.want)
			}
			if got := c.lm.Local(c.lm.Global(c.x)); !near(got, c.x, 1e-15) {
				t.Fatalf("Local(Global(%g)) = %.17g", c.x, got)
			}
			if got := c.x - c.lm.Global(c.x); !near(got, c.lm.Offset(c.x), 1e-12) {
				t.Fatalf("x - Global(x) = %g, Offset = %g", got, c.lm.Offset(c.x))
			}
		})
	}
}

// TestMergeLMs_IsExactComposition checks Merge_LMs against composing the
// two corrections: p3's local time -> p2's time -> p1's time.
func TestMergeLMs_IsExactComposition(t *testing.T) {
	cases := []struct {
		name     string
		lm1, lm2 LinearModel
	}{
		{"identities", LinearModel{}, LinearModel{}},
		{"offsets add", LinearModel{Intercept: 3e-3}, LinearModel{Intercept: -1e-3}},
		{"slopes", LinearModel{Slope: 1e-5}, LinearModel{Slope: -3e-6}},
		{"large slopes show cross terms", LinearModel{Slope: 0.1, Intercept: 2}, LinearModel{Slope: 0.2, Intercept: 5}},
		{"mixed", LinearModel{Slope: 4e-6, Intercept: -7e-4}, LinearModel{Slope: -9e-6, Intercept: 2.5e-4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MergeLMs(c.lm1, c.lm2)
			// Equation 1 / Merge_LMs written out.
			wantS := c.lm1.Slope + c.lm2.Slope - c.lm1.Slope*c.lm2.Slope
			wantI := c.lm1.Intercept + c.lm2.Intercept - c.lm2.Intercept*c.lm1.Slope
			if m.Slope != wantS || m.Intercept != wantI {
				t.Fatalf("MergeLMs = %+v, want {%g %g}", m, wantS, wantI)
			}
			for _, x3 := range []float64{-3, 0, 1, 17.25, 1e4} {
				x2 := c.lm2.Global(x3)
				x1 := c.lm1.Global(x2)
				if got := m.Global(x3); !near(got, x1, 1e-14) {
					t.Fatalf("merged Global(%g) = %.17g, composed = %.17g", x3, got, x1)
				}
			}
		})
	}
}

// TestMergeLMs_Equation1ConventionDiffers documents the sign normalisation:
// Equation 1 (models of reference time giving reference-local) composes
// with -s2*i1, and converting our models to that form reproduces it.
func TestMergeLMs_Equation1ConventionDiffers(t *testing.T) {
	lm1 := LinearModel{Slope: 0.1, Intercept: 2} // p2 rel. p1
	lm2 := LinearModel{Slope: 0.2, Intercept: 5} // p3 rel. p2
	toEq1 := func(m LinearModel) LinearModel {   // t_ref - t_loc as a function of t_ref
		// x - g = s x + i, g = (1-s) x - i  =>  x = (g + i)/(1-s)
		// g - x = -(s x + i) = -(s (g+i)/(1-s) + i) = -s/(1-s) g - i/(1-s)
		return LinearModel{Slope: -m.Slope / (1 - m.Slope), Intercept: -m.Intercept / (1 - m.Slope)}
	}
	e1, e2 := toEq1(lm1), toEq1(lm2)
	eq1 := LinearModel{ // Equation 1
		Slope:     e1.Slope + e2.Slope - e1.Slope*e2.Slope,
		Intercept: e1.Intercept - e2.Slope*e1.Intercept + e2.Intercept,
	}
	got := toEq1(MergeLMs(lm1, lm2))
	if !near(got.Slope, eq1.Slope, 1e-12) || !near(got.Intercept, eq1.Intercept, 1e-12) {
		t.Fatalf("MergeLMs in Equation 1 form = %+v, Equation 1 = %+v", got, eq1)
	}
}

func chainClock(base Clock, levels []LinearModel, offsetOnly []bool) Clock {
	c := base
	for i, lm := range levels {
		if offsetOnly != nil && offsetOnly[i] {
			c = &GlobalClockOffset{Base: c, Offset: lm.Intercept}
		} else {
			c = NewGlobalClockLM(c, lm)
		}
	}
	return c
}

func TestFlatten_MatchesNestedClock(t *testing.T) {
	levels := []LinearModel{
		{Slope: 1e-5, Intercept: 3e-4},
		{Slope: -4e-6, Intercept: -1e-4},
		{Intercept: 2e-6},
		{Slope: 2e-7, Intercept: 5e-8},
		{},
	}
	for depth := 0; depth <= len(levels); depth++ {
		for _, mixed := range []bool{false, true} {
			var kinds []bool
			if mixed {
				kinds = []bool{false, true, true, false, true}
			}
			base := &fixedClock{}
			c := chainClock(base, levels[:depth], kinds)
			flat, chain := Flatten(c)
			if len(chain) != depth {
				t.Fatalf("depth %d: chain has %d levels", depth, len(chain))
			}
			if BaseClock(c) != Clock(base) {
				t.Fatalf("depth %d: BaseClock is not the innermost clock", depth)
			}
			for _, x := range []float64{0, 1.5, 100, -7} {
				base.t = x
				if got, want := flat.Global(x), c.GetTime(); !near(got, want, 1e-14) {
					t.Fatalf("depth %d mixed %v x=%g: flattened %.17g, nested %.17g", depth, mixed, x, got, want)
				}
			}
		}
	}
}

func TestFlattenTo_StopsAtGivenBase(t *testing.T) {
	base := &fixedClock{t: 5}
	mid := NewGlobalClockLM(base, LinearModel{Slope: 1e-3, Intercept: 1})
	top := NewGlobalClockLM(mid, LinearModel{Intercept: 0.5})
	m, chain := FlattenTo(top, mid)
	if len(chain) != 1 || m != (LinearModel{Intercept: 0.5}) {
		t.Fatalf("FlattenTo(top, mid) = %+v %v", m, chain)
	}
}

func TestFlattenClock_RoundTripsAllDepths(t *testing.T) {
	levels := []LinearModel{
		{Slope: 1e-5, Intercept: 3e-4},
		{Intercept: -1e-4},
		{Slope: 3.25e-9, Intercept: math.SmallestNonzeroFloat64},
		{Slope: -1e-6, Intercept: 1e-9},
	}
	kinds := []bool{false, true, false, false}
	for depth := 0; depth <= len(levels); depth++ {
		src := &fixedClock{t: 42.125}
		c := chainClock(src, levels[:depth], kinds)
		b := FlattenClock(c)
		dst := &fixedClock{t: 42.125}
		u, err := UnflattenClock(b, dst)
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if BaseClock(u) != Clock(dst) {
			t.Fatalf("depth %d: unflattened clock not built on the receiver's clock", depth)
		}
		if got, want := u.GetTime(), c.GetTime(); got != want {
			t.Fatalf("depth %d: unflattened reads %.17g, original %.17g", depth, got, want)
		}
		_, c1 := Flatten(c)
		_, c2 := Flatten(u)
		for i := range c1 {
			if c1[i] != c2[i] {
				t.Fatalf("depth %d level %d: %+v != %+v", depth, i, c1[i], c2[i])
			}
		}
		if got := FlattenClock(u); string(got) != string(b) {
			t.Fatalf("depth %d: re-flattened bytes differ", depth)
		}
	}
}

func TestUnflattenClock_RejectsMalformed(t *testing.T) {
	good := FlattenClock(NewGlobalClockLM(&GlobalClockOffset{Base: &fixedClock{}, Offset: 1}, LinearModel{Slope: 1, Intercept: 2}))
	cases := map[string][]byte{
		"empty":     nil,
		"bad magic": append([]byte("XXXX"), good[4:]...),
		"truncated": good[:len(good)-3],
		"trailing":  append(append([]byte(nil), good...), 0),
		"bad kind":  func() []byte { b := append([]byte(nil), good...); b[8] = 'Z'; return b }(),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := UnflattenClock(b, &fixedClock{}); !errors.Is(err, ErrBadClockBuffer) {
				t.Fatalf("err = %v, want ErrBadClockBuffer", err)
			}
		})
	}
}

func TestFitLinearModel_ExactLine(t *testing.T) {
	x := []float64{0.1, 0.2, 0.35, 0.5, 0.9}
	y := make([]float64, len(x))
	for i := range x {
		y[i] = 3e-6*x[i] - 2e-4
	}
	m := FitLinearModel(x, y)
	if !near(m.Slope, 3e-6, 1e-9) || !near(m.Intercept, -2e-4, 1e-12) {
		t.Fatalf("fit = %+v", m)
	}
	if m := FitLinearModel([]float64{1}, []float64{5}); m != (LinearModel{Intercept: 5}) {
		t.Fatalf("one point: %+v", m)
	}
}

func TestRemoveOutliers_TukeyFences(t *testing.T) {
	v := []float64{10, 11, 12, 11, 10, 12, 11, 100, 0}
	got := RemoveOutliers(v)
	for _, x := range got {
		if x == 100 || x == 0 {
			t.Fatalf("outlier %g kept: %v", x, got)
		}
	}
	if len(got) != 7 {
		t.Fatalf("kept %d of %d: %v", len(got), len(v), got)
	}
}

func BenchmarkLinearModel_Global(b *testing.B) {
	m := LinearModel{Slope: 1e-6, Intercept: 3e-4}
	x := 1.0
	for i := 0; i < b.N; i++ {
		x = m.Global(x) + 1e-9
	}
	sinkF = x
}

var sinkF float64

type countClock struct{ t float64 }

func (c *countClock) GetTime() float64 { c.t += 1e-9; return c.t }

func BenchmarkGlobalClock_GetTime(b *testing.B) {
	for _, depth := range []int{1, 2, 4} {
		levels := make([]LinearModel, depth)
		for i := range levels {
			levels[i] = LinearModel{Slope: 1e-6, Intercept: 1e-4}
		}
		b.Run("nested/depth="+string(rune('0'+depth)), func(b *testing.B) {
			c := chainClock(&countClock{}, levels, nil)
			for i := 0; i < b.N; i++ {
				sinkF = c.GetTime()
			}
		})
		b.Run("flattened/depth="+string(rune('0'+depth)), func(b *testing.B) {
			c := chainClock(&countClock{}, levels, nil)
			m, _ := Flatten(c)
			g := NewGlobalClockLM(BaseClock(c), m)
			for i := 0; i < b.N; i++ {
				sinkF = g.GetTime()
			}
		})
	}
}

// FuzzUnflattenClock: arbitrary bytes never panic, and whatever parses
// flattens back to the same bytes.
func FuzzUnflattenClock(f *testing.F) {
	f.Add(FlattenClock(&fixedClock{}))
	f.Add(FlattenClock(NewGlobalClockLM(&GlobalClockOffset{Base: &fixedClock{}, Offset: 1e-3}, LinearModel{Slope: 1e-6, Intercept: 2e-4})))
	f.Add([]byte("GCK1\x02\x00\x00\x00L"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := UnflattenClock(b, &fixedClock{t: 1})
		if err != nil {
			if !errors.Is(err, ErrBadClockBuffer) {
				t.Fatalf("error %v does not wrap ErrBadClockBuffer", err)
			}
			return
		}
		if got := FlattenClock(c); string(got) != string(b) {
			t.Fatalf("round trip changed bytes: %x -> %x", b, got)
		}
	})
}

// TestFlattenClock_CarriesTheBound: ClockPropSync's buffer carries the
// outermost level's bound, the time it holds at and its slope bound when
// it is known (0 included) and nothing when it is not; a buffer with the
// bound alone (older versions) reads with time and slope bound 0;
// ModelBound is the smallest |model - midpoint| + half-width.
func TestFlattenClock_CarriesTheBound(t *testing.T) {
	base := &fixedClock{}
	for _, tc := range []struct {
		name  string
		k     KnotBound
		known bool
	}{
		{"known", KnotBound{Bound: 1.5e-6, At: 12.5, Slope: 3e-6}, true},
		{"zero on the reference", KnotBound{}, true},
		{"unknown", KnotBound{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGlobalClockLM(NewGlobalClockLM(base, LinearModel{Slope: 1e-6, Intercept: 2}), LinearModel{Intercept: 3})
			if tc.known {
				withKnotBound(g, tc.k)
			}
			c, err := UnflattenClock(FlattenClock(g), base)
			if err != nil {
				t.Fatal(err)
			}
			k, ok := ClockKnotBound(c)
			if ok != tc.known || k != tc.k {
				t.Errorf("bound after the round trip %+v (known %v), want %+v (%v)", k, ok, tc.k, tc.known)
			}
		})
	}
	t.Run("bound alone, as older versions wrote", func(t *testing.T) {
		g := NewGlobalClockLM(base, LinearModel{Intercept: 3})
		withKnotBound(g, KnotBound{Bound: 2e-6, At: 1, Slope: 1e-6})
		buf := FlattenClock(g)
		c, err := UnflattenClock(buf[:len(buf)-18], base)
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := ClockKnotBound(c); !ok || k != (KnotBound{Bound: 2e-6}) {
			t.Errorf("got %+v (known %v), want the bound 2e-6 alone", k, ok)
		}
	})
	if got := (KnotBound{Bound: 1e-6, At: 10, Slope: 1e-7}).Within(8); math.Abs(got-1.2e-6) > 1e-18 {
		t.Errorf("Within 2 s before the knot: %g, want 1.2e-6 (the slope bound counts both ways)", got)
	}
	lm := LinearModel{Slope: 0, Intercept: 1e-6}
	got := ModelBound(lm, []float64{0, 1}, []float64{1.5e-6, 1e-6}, []float64{3e-6, 0.2e-6}, nil)
	if want := 0.2e-6; math.Abs(got-want) > 1e-15 {
		t.Errorf("ModelBound %g, want %g (the second point: on its midpoint, half-width 0.2 µs)", got, want)
	}
	if got := ModelBound(lm, []float64{0}, []float64{0}, []float64{0}, nil); got != 0 {
		t.Errorf("ModelBound with an unknown uncertainty %g, want 0", got)
	}
	// drift over the window (slope 100 ppm over 10 ms: 1 µs) and crossed
	// intervals (-0.3 µs counts as 0.3 µs)
	drift := LinearModel{Slope: 100e-6, Intercept: 1e-6}
	got = ModelBound(drift, []float64{0}, []float64{1e-6}, []float64{-0.3e-6}, []float64{10e-3})
	if want := 1.3e-6; math.Abs(got-want) > 1e-15 {
		t.Errorf("ModelBound with drift and crossed intervals %g, want %g", got, want)
	}
}

// TestSlopeBound_ContainsTheTrueRateAndShrinksWithSpan: fit points on an
// exact line with SKaMPI half-widths u confine the rate to within 2u over
// the span of the farthest pair; the true rate is inside; with a point
// whose interval is loose it still is; unknown uncertainties prove nothing.
func TestSlopeBound_ContainsTheTrueRateAndShrinksWithSpan(t *testing.T) {
	const rate, u = 50e-6, 0.1e-6
	line := func(span float64, n int) (xs, ys, us []float64) {
		for i := 0; i < n; i++ {
			x := span * float64(i) / float64(n-1)
			xs, ys, us = append(xs, x), append(ys, 1e-3+rate*x), append(us, u)
		}
		return
	}
	for _, tc := range []struct {
		name       string
		span       float64
		fitted     float64 // the slope under test
		wantAtMost float64
	}{
		{"exact slope, 10 ms", 10e-3, rate, 2 * u / 10e-3},
		{"exact slope, 1 s", 1, rate, 2 * u / 1},
		{"slope 1e-6 off, 10 ms", 10e-3, rate + 1e-6, 1e-6 + 2*u/10e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xs, ys, us := line(tc.span, 20)
			got := SlopeBound(tc.fitted, xs, ys, us, nil)
			if got < math.Abs(tc.fitted-rate) || got > tc.wantAtMost*(1+1e-9) {
				t.Errorf("SlopeBound %g: want within [%g, %g]", got, math.Abs(tc.fitted-rate), tc.wantAtMost)
			}
		})
	}
	xs, ys, us := line(10e-3, 20)
	ys[5] += 3e-6 // a delayed fit point: its interval wide, its midpoint off
	us[5] = 4e-6
	if got := SlopeBound(rate, xs, ys, us, nil); got > 2*u/10e-3*(1+1e-9) {
		t.Errorf("a loose point widened the bound to %g", got)
	}
	us[3] = 0
	if got := SlopeBound(rate, xs, ys, us, nil); got != 0 {
		t.Errorf("SlopeBound with an unknown uncertainty %g, want 0", got)
	}
}

package trace

import (
	"math"
	"strings"
	"testing"
)

// TestFakeClock_TrueTimeInvertsEveryShape: for every term kind and their
// sum, TrueTime(round(Recorded(t))) is t to within the rounding (0.5 ns
// over the recorded value's slope), at many points over an hour.
func TestFakeClock_TrueTimeInvertsEveryShape(t *testing.T) {
	for _, spec := range []string{
		"5e6:25",
		"5e6:25+step(20s,1ppm)",
		"-1.5e6:-40+sin(20us,20s)",
		"0:0+sin(20us,20s,1.5)",
		"1e3:0.5+rw(1s,0.05ppm,7)",
		"5e6:25+step(20s,1ppm)+sin(20us,20s,0)+rw(1s,0.05ppm,7,7200s)",
	} {
		t.Run(spec, func(t *testing.T) {
			ins, err := ParseFakeClock(spec)
			if err != nil {
				t.Fatal(err)
			}
			in := ins[0]
			in.AnchorNS = 7e12
			for i := 0; i < 2000; i++ {
				raw := 7e12 - 5e9 + float64(i)*1.8e9 + float64(i%7)*0.37
				rec := int64(math.Round(in.Recorded(raw)))
				got := in.TrueTime(rec)
				if d := math.Abs(got - raw); d > 0.51 {
					t.Fatalf("raw %.3f: recorded %d, TrueTime %.3f (off by %.3f ns)", raw, rec, got, d)
				}
			}
		})
	}
}

// TestFakeClock_ShapesHaveTheirSize: a 1 ppm step adds 1 µs per second
// after it; a sine's extremes are its amplitude; the random walk is the
// same for the same seed and differs for another.
func TestFakeClock_ShapesHaveTheirSize(t *testing.T) {
	p := func(s string) Injection {
		in, err := ParseFakeClock(s)
		if err != nil {
			t.Fatal(err)
		}
		return in[0]
	}
	step := p("0:0+step(20s,1ppm)")
	if v := step.Extra(10e9); v != 0 {
		t.Errorf("step before its time: %v", v)
	}
	if v := step.Extra(30e9); math.Abs(v-10e3) > 1e-6 {
		t.Errorf("step 10 s after: %v ns, want 10000", v)
	}
	sine := p("0:0+sin(20us,20s)")
	if v := sine.Extra(5e9); math.Abs(v-20e3) > 1e-6 {
		t.Errorf("sine at a quarter period: %v, want 20000", v)
	}
	a, b, c := p("0:0+rw(1s,0.05ppm,7)"), p("0:0+rw(1s,0.05ppm,7)"), p("0:0+rw(1s,0.05ppm,8)")
	if a.Extra(60.5e9) != b.Extra(60.5e9) || a.Extra(60.5e9) == c.Extra(60.5e9) || a.Extra(60.5e9) == 0 {
		t.Errorf("random walks: seed 7 %v and %v, seed 8 %v", a.Extra(60.5e9), b.Extra(60.5e9), c.Extra(60.5e9))
	}
}

func TestParseFakeClock_RejectsBadSpecs(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"5e6", "is not <offset_ns>:<drift_ppm>"},
		{"5e6:x", "drift"},
		{"0:-1e6", "stop the clock"},
		{"0:0+step(20,1ppm)", "has no unit"},
		{"0:0+sin(20us)", "takes 2 to 3 arguments"},
		{"0:0+sin(20us,0s)", "positive duration"},
		{"0:0+wobble(1s)", "unknown term"},
		{"0:0+rw(1us,0.1)", "at least 1ms"},
		{"0:0 junk", "drift"},
		{"0:0+step(1s,1)junk", "cannot parse"},
	} {
		if _, err := ParseFakeClock(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.spec, err, c.want)
		}
	}
	ins, err := ParseFakeClock("5e6:25, -1.5e6:-40+sin(20us,20s) ,0:0.5+step(1s,2ppm)+rw(2s,0.1ppm,3,10s)")
	if err != nil || len(ins) != 3 || len(ins[1].Terms) != 1 || len(ins[2].Terms) != 2 || ins[2].Terms[1].Seed != 3 {
		t.Fatalf("three nodes: %+v, %v", ins, err)
	}
}

func FuzzParseFakeClock(f *testing.F) {
	for _, s := range []string{"5e6:25", "0:0+step(20s,1ppm)+sin(20us,20s,0)", "1:2+rw(1s,0.05ppm,7,60s),3:4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ins, err := ParseFakeClock(s)
		if err != nil {
			return
		}
		for _, in := range ins {
			_ = in.TrueTime(int64(in.Recorded(1e12)))
		}
	})
}

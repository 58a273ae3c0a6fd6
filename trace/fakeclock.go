package trace

// Non-linear injected clock error (GCLOCK_FAKE_CLOCK, issue 10). Besides
// the offset and constant drift of Injection, an emulated node's clock can
// carry terms whose exact value the header records, so tests compute the
// truth of every recorded timestamp:
//
//	step(AT, PPM)            the frequency changes by PPM at AT after the anchor
//	sin(AMP, PERIOD[, PHASE]) a sinusoidal wander of amplitude AMP
//	rw(STEP, SIGMA[, SEED[, SPAN]])  a random-walk frequency: every STEP the
//	                          drift changes by a N(0, SIGMA ppm) draw (NTP-like
//	                          slews), seeded, for SPAN (default 1h; then constant)
//
// Times of the terms are relative to the injection's anchor (AnchorNS, rank
// 0's raw timer when the recorder started: the same for every rank, so the
// ranks of one emulated node share one clock).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// FakeTerm is one non-linear term of an injected clock error.
type FakeTerm struct {
	Kind string `msgpack:"k"` // "step", "sin" or "rw"
	// step: AtNS, PPM. sin: AmpNS, PeriodNS, Phase (radians).
	// rw: StepNS, SigmaPPM, Seed, SpanNS.
	AtNS     float64 `msgpack:"at,omitempty"`
	PPM      float64 `msgpack:"ppm,omitempty"`
	AmpNS    float64 `msgpack:"amp,omitempty"`
	PeriodNS float64 `msgpack:"per,omitempty"`
	Phase    float64 `msgpack:"ph,omitempty"`
	StepNS   float64 `msgpack:"step,omitempty"`
	SigmaPPM float64 `msgpack:"sig,omitempty"`
	Seed     uint64  `msgpack:"seed,omitempty"`
	SpanNS   float64 `msgpack:"span,omitempty"`

	rw *RandomWalk // knots, built on first use
}

// RandomWalk is the knot table of an rw term: over [i·Step, (i+1)·Step)
// after the anchor the drift is FreqPPM[i] and the error is
// OffsetNS[i] + FreqPPM[i]·1e-6·(d − i·Step).
type RandomWalk struct {
	StepNS   float64
	OffsetNS []float64
	FreqPPM  []float64
}

// Walk returns the knot table of an rw term (deterministic in Seed).
func (t *FakeTerm) Walk() *RandomWalk {
	if t.rw != nil {
		return t.rw
	}
	n := int(math.Ceil(t.SpanNS/t.StepNS)) + 1
	n = max(2, min(n, 1<<20))
	rng := rand.New(rand.NewPCG(t.Seed, 0x7a1c))
	w := &RandomWalk{StepNS: t.StepNS, OffsetNS: make([]float64, n), FreqPPM: make([]float64, n)}
	for i := 1; i < n; i++ {
		w.FreqPPM[i] = w.FreqPPM[i-1] + t.SigmaPPM*rng.NormFloat64()
		w.OffsetNS[i] = w.OffsetNS[i-1] + w.FreqPPM[i-1]*1e-6*t.StepNS
	}
	t.rw = w
	return w
}

// extra is the term's error (ns) d ns after the anchor, and its rate.
func (t *FakeTerm) extra(d float64) (v, rate float64) {
	switch t.Kind {
	case "step":
		if x := d - t.AtNS; x > 0 {
			return t.PPM * 1e-6 * x, t.PPM * 1e-6
		}
	case "sin":
		w := 2 * math.Pi / t.PeriodNS
		return t.AmpNS * math.Sin(w*d+t.Phase), t.AmpNS * w * math.Cos(w*d+t.Phase)
	case "rw":
		if d <= 0 {
			return 0, 0
		}
		wk := t.Walk()
		i := min(int(d/wk.StepNS), len(wk.FreqPPM)-1)
		f := wk.FreqPPM[i] * 1e-6
		return wk.OffsetNS[i] + f*(d-float64(i)*wk.StepNS), f
	}
	return 0, 0
}

// Extra is the non-linear part of the injected error at raw time raw (ns).
func (in *Injection) Extra(raw float64) float64 {
	v, _ := in.extraRate(raw)
	return v
}

func (in *Injection) extraRate(raw float64) (v, rate float64) {
	d := raw - float64(in.AnchorNS)
	for i := range in.Terms {
		x, r := in.Terms[i].extra(d)
		v += x
		rate += r
	}
	return v, rate
}

// Recorded is the timestamp the injected timer reports at raw time raw:
// raw + OffsetNS + DriftPPM·1e-6·raw + Extra(raw) (before rounding).
func (in *Injection) Recorded(raw float64) float64 {
	if in == nil {
		return raw
	}
	return raw + in.OffsetNS + in.DriftPPM*1e-6*raw + in.Extra(raw)
}

// trueTimeNonLinear inverts Recorded by Newton's method (the map is
// strictly increasing for every drift above −10^6 ppm), falling back to
// bisection; the result is within 1e-3 ns.
func (in *Injection) trueTimeNonLinear(recorded float64) float64 {
	k := 1 + in.DriftPPM*1e-6
	t := (recorded - in.OffsetNS) / k
	for it := 0; it < 50; it++ {
		v, rate := in.extraRate(t)
		f := t + in.OffsetNS + in.DriftPPM*1e-6*t + v - recorded
		if math.Abs(f) < 1e-4 {
			return t
		}
		t -= f / (k + rate)
	}
	// Bisection around the linear guess (the non-linear part is bounded
	// over any finite span).
	lo, hi := t-1e9, t+1e9
	for i := 0; i < 200 && hi-lo > 1e-4; i++ {
		mid := (lo + hi) / 2
		if in.Recorded(mid) < recorded {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// termRe is compiled on first use: as a package-level variable it cost
// every process that preloads libgclock.so, MPI or not, ≈ 0.1 M
// instructions at start-up (callgrind, /bin/sleep: 2.87 → 2.77 M).
var termRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\+\s*([a-z]+)\s*\(([^)]*)\)`) })

// ParseFakeClock parses GCLOCK_FAKE_CLOCK: one node spec per emulated node,
// comma separated, each "<offset_ns>:<drift_ppm>" followed by any number of
// "+step(AT,PPM)", "+sin(AMP,PERIOD[,PHASE])", "+rw(STEP,SIGMA[,SEED[,SPAN]])"
// terms. Durations take a unit (ns, us, µs, ms, s), drifts may end in
// "ppm", the phase is in radians. Example:
// "5e6:25+step(20s,1ppm),-1.5e6:-40+sin(20us,20s)".
func ParseFakeClock(s string) ([]Injection, error) {
	var out []Injection
	for _, node := range splitNodes(s) {
		node = strings.TrimSpace(node)
		base := node
		if m := termRe().FindStringIndex(node); m != nil {
			base = node[:m[0]]
		}
		o, d, ok := strings.Cut(strings.TrimSpace(base), ":")
		if !ok {
			return nil, fmt.Errorf("%q is not <offset_ns>:<drift_ppm>[+term(...)...]", node)
		}
		var in Injection
		var err error
		if in.OffsetNS, err = strconv.ParseFloat(strings.TrimSpace(o), 64); err != nil {
			return nil, fmt.Errorf("offset in %q: %w", node, err)
		}
		if in.DriftPPM, err = parsePPM(d); err != nil {
			return nil, fmt.Errorf("drift in %q: %w", node, err)
		}
		if in.DriftPPM <= -1e6 {
			return nil, fmt.Errorf("drift %v ppm in %q would stop the clock", in.DriftPPM, node)
		}
		rest := node[len(base):]
		for strings.TrimSpace(rest) != "" {
			m := termRe().FindStringSubmatchIndex(rest)
			if m == nil || strings.TrimSpace(rest[:m[0]]) != "" {
				return nil, fmt.Errorf("%q: cannot parse %q (want +step(...), +sin(...) or +rw(...))", node, strings.TrimSpace(rest))
			}
			term, err := parseTerm(rest[m[2]:m[3]], rest[m[4]:m[5]])
			if err != nil {
				return nil, fmt.Errorf("%q: %w", node, err)
			}
			in.Terms = append(in.Terms, term)
			rest = rest[m[1]:]
		}
		out = append(out, in)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no node spec")
	}
	return out, nil
}

// splitNodes splits at commas outside parentheses.
func splitNodes(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseTerm(kind, args string) (FakeTerm, error) {
	a := strings.Split(args, ",")
	for i := range a {
		a[i] = strings.TrimSpace(a[i])
	}
	t := FakeTerm{Kind: kind}
	var err error
	need := func(lo, hi int) error {
		if len(a) < lo || len(a) > hi {
			return fmt.Errorf("%s(...) takes %d to %d arguments, got %d", kind, lo, hi, len(a))
		}
		return nil
	}
	switch kind {
	case "step":
		if err = need(2, 2); err != nil {
			return t, err
		}
		if t.AtNS, err = parseDurNS(a[0]); err != nil {
			return t, fmt.Errorf("step time: %w", err)
		}
		if t.PPM, err = parsePPM(a[1]); err != nil {
			return t, fmt.Errorf("step size: %w", err)
		}
	case "sin":
		if err = need(2, 3); err != nil {
			return t, err
		}
		if t.AmpNS, err = parseDurNS(a[0]); err != nil {
			return t, fmt.Errorf("sin amplitude: %w", err)
		}
		if t.PeriodNS, err = parseDurNS(a[1]); err != nil || t.PeriodNS <= 0 {
			return t, fmt.Errorf("sin period %q: want a positive duration", a[1])
		}
		if len(a) == 3 {
			if t.Phase, err = strconv.ParseFloat(a[2], 64); err != nil {
				return t, fmt.Errorf("sin phase (radians): %w", err)
			}
		}
	case "rw":
		if err = need(2, 4); err != nil {
			return t, err
		}
		if t.StepNS, err = parseDurNS(a[0]); err != nil || t.StepNS < 1e6 {
			return t, fmt.Errorf("rw step %q: want a duration of at least 1ms", a[0])
		}
		if t.SigmaPPM, err = parsePPM(a[1]); err != nil || t.SigmaPPM < 0 {
			return t, fmt.Errorf("rw sigma %q: want ppm >= 0", a[1])
		}
		t.Seed, t.SpanNS = 1, 3600e9
		if len(a) >= 3 {
			if t.Seed, err = strconv.ParseUint(a[2], 10, 64); err != nil {
				return t, fmt.Errorf("rw seed: %w", err)
			}
		}
		if len(a) == 4 {
			if t.SpanNS, err = parseDurNS(a[3]); err != nil || t.SpanNS <= 0 {
				return t, fmt.Errorf("rw span %q: want a positive duration", a[3])
			}
		}
		if t.SpanNS/t.StepNS > 1<<20 {
			return t, fmt.Errorf("rw: span/step over 2^20 knots")
		}
	default:
		return t, fmt.Errorf("unknown term %q (want step, sin or rw)", kind)
	}
	return t, nil
}

var durUnits = []struct {
	suffix string
	ns     float64
}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}

// parseDurNS parses "20s", "1.5ms", "20us", "100ns" into ns.
func parseDurNS(s string) (float64, error) {
	s = strings.TrimSpace(s)
	for _, u := range durUnits {
		if strings.HasSuffix(s, u.suffix) {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%q is not a duration like 20s, 1.5ms, 20us", s)
			}
			return v * u.ns, nil
		}
	}
	return 0, fmt.Errorf("%q has no unit (ns, us, ms, s)", s)
}

func parsePPM(s string) (float64, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "ppm")
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = fmt.Errorf("%q is not finite", s)
	}
	return v, err
}

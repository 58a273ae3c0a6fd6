package clocksync

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// LinearModel is a linear model of the clock offset of a process relative to
// a reference clock (the "lm" of Algorithms 1 and 2 of the H2HCA paper and of
// Algorithms 2-4 of the HCA paper).
//
// Sign convention (fixed for all of clocksync): at local time x,
//
//	offset(x) = Slope*x + Intercept = local - reference
//	global(x) = x - offset(x)
//
// This is the convention of Learn_Model_HCA / Algorithm 8 (ldiff = local -
// tremote - rtt/2, a function of the local time). SKaMPI-Offset (Algorithm
// 7) computes reference - local; SKaMPIOffset negates it. Equation 1 of the
// HCA paper writes models as functions of the reference time giving
// reference - local; MergeLMs documents how it maps onto this convention.
type LinearModel struct {
	Slope     float64
	Intercept float64
}

// Offset returns the modelled offset (local - reference) at local time x.
func (m LinearModel) Offset(x float64) float64 { return m.Slope*x + m.Intercept }

// Global maps local time x to reference time: x - offset(x)
// (Get_Normalized_Time, Algorithm 16 of the HCA paper).
func (m LinearModel) Global(x float64) float64 { return x - (m.Slope*x + m.Intercept) }

// Local inverts Global: it returns the local time x with Global(x) == g.
func (m LinearModel) Local(g float64) float64 { return (g + m.Intercept) / (1 - m.Slope) }

// IsZero reports whether m is the identity model (0, 0).
func (m LinearModel) IsZero() bool { return m.Slope == 0 && m.Intercept == 0 }

// String formats the model as "offset(x)=slope*x+intercept".
func (m LinearModel) String() string {
	return fmt.Sprintf("offset(x)=%.6g*x%+.9g", m.Slope, m.Intercept)
}

// MergeLMs implements Merge_LMs (Algorithm 4, line 33, of the HCA paper):
// given lm1, the model of p2 relative to p1, and lm2, the model of p3
// relative to p2, it returns the model of p3 relative to p1:
//
//	slope     = s1 + s2 - s1*s2
//	intercept = i1 + i2 - s1*i2
//
// In the convention of LinearModel (a function of the local time x3 of p3
// giving local - reference) this is the exact composition of the two affine
// maps: x2 = x3 - lm2.Offset(x3), x1 = x2 - lm1.Offset(x2), so
// x3 - x1 = (s1+s2-s1*s2)*x3 + i1 + i2 - s1*i2. Equation 1 states the same
// composition for models written as functions of the reference time (giving
// reference - local), where the cross term reads -s2*i1 instead; the code of
// Algorithm 4 (lm2.intercept*lm1.slope) is the local-time form used here.
func MergeLMs(lm1, lm2 LinearModel) LinearModel {
	return LinearModel{
		Slope:     lm1.Slope + lm2.Slope - lm1.Slope*lm2.Slope,
		Intercept: lm1.Intercept + lm2.Intercept - lm2.Intercept*lm1.Slope,
	}
}

// ClockOffset is one fit point: the offset (local - reference) measured at
// the client's clock time Timestamp (CLOCK_OFFSET of Algorithms 7 and 8).
type ClockOffset struct {
	Timestamp float64
	Offset    float64
	// Uncertainty, if > 0, bounds |Offset - true offset| (seconds): for
	// SKaMPI-Offset half the width of [td_min, td_max], which only the
	// fastest exchanges narrow (the min-RTT idea). 0 means unknown; < 0
	// means the exchanges' intervals did not overlap (the clocks drifted
	// apart during the measurement).
	Uncertainty float64
	// Window is the client-clock time the measurement's exchanges spanned
	// (seconds; 0 unknown): the offset drifts over it at the clocks'
	// relative rate, which ModelBound adds.
	Window float64
}

// GlobalClockLM is a clock decorator (GLOBALCLOCKLM of Algorithm 1): it reads
// Base and corrects the reading with the linear model LM. Base may itself be
// a global clock, which gives the nested clocks of HCA3 and H2HCA.
type GlobalClockLM struct {
	Base Clock
	LM   LinearModel
	// Bound, if > 0, bounds |GetTime() - reference time| (seconds) at the
	// moment the model was made: the half-widths of the SKaMPI intervals
	// along this rank's sync path to the reference, plus how far the model
	// lies from the path's measured midpoints (ModelBound). Known only
	// when BoundKnown: HCA3, HCA3Offset and what ClockPropSync copies from
	// them set it (the reference's own identity clock: 0, known).
	Bound      float64
	BoundKnown bool
	// KnotAt is the global time (this clock's GetTime timebase, seconds)
	// at which Bound was proven: the time of the measurement it rests on.
	// SlopeBound bounds the model's rate error against the reference
	// (|d(GetTime() - reference)/dt|), so that at global time g the clock
	// is off by at most Bound + SlopeBound·|g - KnotAt| (KnotBound.At).
	// Both are meaningful only when BoundKnown.
	KnotAt, SlopeBound float64
}

// KnotBound is a clock's error bound with the time it holds at and how
// fast it widens away from that time (GlobalClockLM.Bound, KnotAt and
// SlopeBound): the bound of a model is proven at its measurement, and the
// model's slope error counts from there on.
type KnotBound struct {
	Bound float64 // seconds, at At
	At    float64 // global time, seconds
	Slope float64 // rate error bound, seconds per second
}

// Within returns the bound at global time g: Bound + Slope·|g - At|.
func (k KnotBound) Within(g float64) float64 { return k.Bound + k.Slope*math.Abs(g-k.At) }

// NewGlobalClockLM returns GLOBALCLOCKLM(clk, lm).
func NewGlobalClockLM(clk Clock, lm LinearModel) *GlobalClockLM {
	return &GlobalClockLM{Base: clk, LM: lm}
}

// GetTime returns Base's time mapped to the reference time.
func (c *GlobalClockLM) GetTime() float64 { return c.LM.Global(c.Base.GetTime()) }

// ClockBound returns the Bound of c's outermost GlobalClockLM level and
// whether it is known.
func ClockBound(c Clock) (float64, bool) {
	if g, ok := c.(*GlobalClockLM); ok && g.BoundKnown {
		return g.Bound, true
	}
	return 0, false
}

// ClockKnotBound returns the KnotBound of c's outermost GlobalClockLM
// level and whether it is known.
func ClockKnotBound(c Clock) (KnotBound, bool) {
	if g, ok := c.(*GlobalClockLM); ok && g.BoundKnown {
		return KnotBound{Bound: g.Bound, At: g.KnotAt, Slope: g.SlopeBound}, true
	}
	return KnotBound{}, false
}

// withBound returns g with a known bound b that does not widen (the
// reference: b = 0).
func withBound(g *GlobalClockLM, b float64) *GlobalClockLM {
	return withKnotBound(g, KnotBound{Bound: b})
}

// withKnotBound returns g with the known bound k.
func withKnotBound(g *GlobalClockLM, k KnotBound) *GlobalClockLM {
	g.Bound, g.KnotAt, g.SlopeBound, g.BoundKnown = k.Bound, k.At, k.Slope, true
	return g
}

// GlobalClockOffset is an offset-only clock decorator, as produced by the
// SKaMPI and Netgauge style synchronisations: global = Base - Offset.
type GlobalClockOffset struct {
	Base   Clock
	Offset float64
}

// GetTime returns Base's time minus the offset.
func (c *GlobalClockOffset) GetTime() float64 { return c.Base.GetTime() - c.Offset }

// level returns the model of one decorator level and its base, or ok=false
// if c is not a decorator (an innermost local clock).
func level(c Clock) (lm LinearModel, base Clock, kind byte, ok bool) {
	switch g := c.(type) {
	case *GlobalClockLM:
		return g.LM, g.Base, kindLinear, true
	case *GlobalClockOffset:
		return LinearModel{Intercept: g.Offset}, g.Base, kindOffset, true
	}
	return LinearModel{}, nil, 0, false
}

// BaseClock returns the innermost (local) clock under any number of
// GlobalClockLM / GlobalClockOffset decorators.
func BaseClock(c Clock) Clock {
	for {
		_, b, _, ok := level(c)
		if !ok {
			return c
		}
		c = b
	}
}

// Flatten collapses a chain of clock decorators into one linear model
// relative to the innermost local clock (BaseClock(c)), and returns the
// chain of per-level models, innermost first. Every level is affine, so
//
//	c.GetTime() == model.Global(BaseClock(c).GetTime())
//
// up to rounding. The flattened model is MergeLMs(outer, inner) applied from
// the innermost level outwards.
func Flatten(c Clock) (LinearModel, []LinearModel) { return FlattenTo(c, nil) }

// FlattenTo is Flatten stopping at base: the model maps base's time to c's
// time. If base is nil or not in c's chain it flattens down to BaseClock(c).
func FlattenTo(c, base Clock) (LinearModel, []LinearModel) {
	var outerFirst []LinearModel
	for base == nil || c != base {
		lm, b, _, ok := level(c)
		if !ok {
			break
		}
		outerFirst = append(outerFirst, lm)
		c = b
	}
	chain := make([]LinearModel, len(outerFirst))
	var flat LinearModel
	for i := range outerFirst {
		lm := outerFirst[len(outerFirst)-1-i]
		chain[i] = lm
		if i == 0 {
			flat = lm
		} else {
			// lm is applied after flat: lm is the parent, flat the child.
			flat = MergeLMs(lm, flat)
		}
	}
	return flat, chain
}

const (
	flattenMagic = "GCK1"
	kindLinear   = byte('L')
	kindOffset   = byte('O')
	kindBound    = byte('B')
	kindKnotAt   = byte('K')
	kindSlopeB   = byte('S')
)

// FlattenClock (FLATTEN_CLOCK of Algorithm 3) serialises the decorator chain
// of c, innermost level first, so that UnflattenClock can rebuild the same
// nested clock on top of another process's local clock. Format: "GCK1",
// uint32 level count, then per level a kind byte ('L' slope+intercept, 'O'
// offset) and its float64 values, little endian; then, when c's ClockBound
// is known, the byte 'B' and the bound as float64, 'K' and KnotAt, 'S' and
// SlopeBound (UnflattenClock puts them on the outermost level; a buffer
// with 'B' alone, as older versions wrote, is read with KnotAt and
// SlopeBound 0).
func FlattenClock(c Clock) []byte {
	c0 := c
	var levels []struct {
		lm   LinearModel
		kind byte
	}
	for {
		lm, b, kind, ok := level(c)
		if !ok {
			break
		}
		levels = append(levels, struct {
			lm   LinearModel
			kind byte
		}{lm, kind})
		c = b
	}
	buf := make([]byte, 0, 8+len(levels)*17)
	buf = append(buf, flattenMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(levels)))
	for i := len(levels) - 1; i >= 0; i-- {
		l := levels[i]
		buf = append(buf, l.kind)
		if l.kind == kindLinear {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(l.lm.Slope))
		}
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(l.lm.Intercept))
	}
	if k, ok := ClockKnotBound(c0); ok {
		for _, f := range []struct {
			kind byte
			v    float64
		}{{kindBound, k.Bound}, {kindKnotAt, k.At}, {kindSlopeB, k.Slope}} {
			buf = append(buf, f.kind)
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(f.v))
		}
	}
	return buf
}

// ErrBadClockBuffer is wrapped by UnflattenClock for malformed input.
var ErrBadClockBuffer = errors.New("clocksync: malformed flattened clock")

// UnflattenClock (UNFLATTEN_CLOCK of Algorithm 3) rebuilds the decorator
// chain serialised by FlattenClock on top of base (the receiver's own local
// clock, which must share the time source of the sender's local clock).
func UnflattenClock(b []byte, base Clock) (Clock, error) {
	if len(b) < 8 || string(b[:4]) != flattenMagic {
		return nil, fmt.Errorf("%w: %d bytes, missing %q header", ErrBadClockBuffer, len(b), flattenMagic)
	}
	n := binary.LittleEndian.Uint32(b[4:8])
	p := 8
	c := base
	for i := uint32(0); i < n; i++ {
		if p >= len(b) {
			return nil, fmt.Errorf("%w: level %d of %d: truncated at byte %d", ErrBadClockBuffer, i, n, p)
		}
		kind := b[p]
		p++
		need := 8
		if kind == kindLinear {
			need = 16
		} else if kind != kindOffset {
			return nil, fmt.Errorf("%w: level %d: unknown kind %q", ErrBadClockBuffer, i, kind)
		}
		if p+need > len(b) {
			return nil, fmt.Errorf("%w: level %d of %d: truncated at byte %d", ErrBadClockBuffer, i, n, p)
		}
		if kind == kindLinear {
			s := math.Float64frombits(binary.LittleEndian.Uint64(b[p:]))
			ic := math.Float64frombits(binary.LittleEndian.Uint64(b[p+8:]))
			c = NewGlobalClockLM(c, LinearModel{Slope: s, Intercept: ic})
		} else {
			c = &GlobalClockOffset{Base: c, Offset: math.Float64frombits(binary.LittleEndian.Uint64(b[p:]))}
		}
		p += need
	}
	if p+9 <= len(b) && b[p] == kindBound {
		var k KnotBound
		k.Bound = math.Float64frombits(binary.LittleEndian.Uint64(b[p+1:]))
		p += 9
		if p+9 <= len(b) && b[p] == kindKnotAt {
			k.At = math.Float64frombits(binary.LittleEndian.Uint64(b[p+1:]))
			p += 9
		}
		if p+9 <= len(b) && b[p] == kindSlopeB {
			k.Slope = math.Float64frombits(binary.LittleEndian.Uint64(b[p+1:]))
			p += 9
		}
		finite := func(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }
		if g, ok := c.(*GlobalClockLM); ok && k.Bound >= 0 && finite(k.Bound) && finite(k.At) && k.Slope >= 0 && finite(k.Slope) {
			withKnotBound(g, k)
		}
	}
	if p != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes after %d levels", ErrBadClockBuffer, len(b)-p, n)
	}
	return c, nil
}

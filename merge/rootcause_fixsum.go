package merge

import (
	"math"
	"math/big"
	"math/bits"
)

// rcSum is an order-free sum of nanoseconds (decision D75, point 4;
// D76): a 128-bit two's-complement fixed-point integer of 2^-32 ns
// (hi:lo), to which every amount is added rounded once to the nearest
// 2^-32 ns (ties to even; an error below 1.2·10^-10 ns a credit).
// Integer addition is associative and commutative, so the sum's bits do
// not depend on the order of the adds nor on how they are split among
// partial sums merged later (rcSum.merge): a partitioned analysis and the
// serial one give the same result, converted to float64 once (float).
//
// The range is ±2^95 ns (10^12 years); an amount that is not finite
// (NaN, ±Inf) or whose magnitude reaches 2^94 ns is added to odd, a
// float64 sum beside the integer, as the float sums before did: NaN and
// infinities then show in the result as they did (and, NaN and ±Inf
// being absorbing, order-free too).
type rcSum struct {
	lo  uint64
	hi  int64
	odd float64
}

// rcFixOne is 1 ns in rcSum's units.
const rcFixOne = 1 << 32

// add adds v ns, rounded to the nearest 2^-32 ns (addFast, else
// addWide).
func (s *rcSum) add(v float64) {
	if !s.addFast(v) {
		s.addWide(v)
	}
}

// addFast is add's common case, |v| < 2^19 ns, reporting whether v was
// in it (else it adds nothing); it inlines, so the stream's hottest
// credits call `if !x.addFast(v) { x.addWide(v) }` (add, with its call,
// does not inline). Adding and subtracting 1.5·2^52 rounds a float64
// below 2^51 to an integer, ties to even, in the default rounding mode
// (Go does not reassociate floating-point arithmetic).
func (s *rcSum) addFast(v float64) bool {
	x := v * rcFixOne                 // exact: a power of two
	if !(x < 1<<51 && x > -(1<<51)) { // NaN too
		return false
	}
	i := int64((x + 0x1.8p52) - 0x1.8p52)
	lo := s.lo + uint64(i)
	s.hi += i >> 63
	if lo < s.lo { // carry
		s.hi++
	}
	s.lo = lo
	return true
}

// addWide adds v ns, |v| ≥ 2^19 ns or not finite: rounded as add does
// below 2^62 units; beyond, a float64 is an integer (from 2^52 on), so
// v·2^32 splits exactly into 64-bit halves.
func (s *rcSum) addWide(v float64) {
	if !(v < 0x1p94 && v > -0x1p94) { // NaN, ±Inf, beyond range
		s.odd += v
		return
	}
	x := v * rcFixOne
	if x < 1<<62 && x > -(1<<62) {
		i := int64(math.RoundToEven(x))
		lo, c := bits.Add64(s.lo, uint64(i), 0)
		s.lo, s.hi = lo, s.hi+i>>63+int64(c)
		return
	}
	h := math.Floor(x * 0x1p-64)
	l := x - h*0x1p64 // in [0, 2^64), exact
	lo, c := bits.Add64(s.lo, uint64(l), 0)
	s.lo, s.hi = lo, s.hi+int64(h)+int64(c)
}

// merge adds the sum o to s.
func (s *rcSum) merge(o rcSum) {
	lo, c := bits.Add64(s.lo, o.lo, 0)
	s.lo, s.hi = lo, s.hi+o.hi+int64(c)
	if o.odd != 0 {
		s.odd += o.odd
	}
}

// plus returns s + o (rcSum.merge).
func (s rcSum) plus(o rcSum) rcSum {
	s.merge(o)
	return s
}

// cmp compares two sums' fixed-point parts, −1, 0 or +1 (the float
// parts, rare, compared after).
func (s rcSum) cmp(o rcSum) int {
	switch {
	case s.hi != o.hi:
		if s.hi < o.hi {
			return -1
		}
		return 1
	case s.lo != o.lo:
		if s.lo < o.lo {
			return -1
		}
		return 1
	case s.odd < o.odd:
		return -1
	case s.odd > o.odd:
		return 1
	}
	return 0
}

// float returns the sum in ns, rounded once to the nearest float64
// (then odd added, 0 when every amount was finite and in range).
func (s rcSum) float() float64 {
	var f float64
	if s.hi == int64(s.lo)>>63 { // fits in an int64: one rounding
		f = float64(int64(s.lo)) / rcFixOne
	} else {
		var v big.Int
		v.SetInt64(s.hi)
		v.Lsh(&v, 64)
		var l big.Int
		l.SetUint64(s.lo)
		v.Add(&v, &l)
		f, _ = new(big.Float).SetInt(&v).Float64() // nearest, ties to even
		f /= rcFixOne
	}
	if s.odd != 0 {
		f += s.odd
	}
	return f
}

package main

// Adaptive resync intervals and their cost budget (issue 38,
// docs/explanation/clocksync.md "Adaptive resync"; the policy itself is
// clocksync/adapt.go). After each resync epoch every rank judges its new
// knot against the prediction of the knots before it, scaled to the miss
// of tracemerge's smooth model (clocksync.JudgeKnot). The ranks say so in
// the agreement that closes the epoch (one allgather of an int, as
// before), together with how long this epoch took them up to the
// agreement and how long their previous epoch took from its start to its
// end; rank 0 then halves the interval when any rank disagreed,
// lengthens it by half when all were calm (between GCLOCK_RESYNC/8 and
// 2·GCLOCK_RESYNC), and starts no resync before the resyncs' running
// total of cost, plus two more epochs, is within GCLOCK_RESYNC_BUDGET of
// the run (clocksync.ResyncSpend). Knots stay at agreed collectives as
// before; only the time rank 0 waits between them changes.

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/gclock/gclock/clocksync"
)

// resyncAdaptOn reads GCLOCK_RESYNC_ADAPT (default on; 0/off/false: the
// interval stays GCLOCK_RESYNC, and no budget applies).
func resyncAdaptOn(getenv func(string) string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv("GCLOCK_RESYNC_ADAPT"))); v {
	case "", "1", "on", "true", "yes":
		return true, nil
	case "0", "off", "false", "no":
		return false, nil
	default:
		return true, fmt.Errorf("GCLOCK_RESYNC_ADAPT=%q: want 1 or 0 (default 1)", v)
	}
}

// resyncBudget reads GCLOCK_RESYNC_BUDGET: the largest share of the run
// the resync epochs may take (default clocksync.ResyncBudget, 0.001; 0:
// no budget, the interval alone decides).
func resyncBudget(getenv func(string) string) (float64, error) {
	v := strings.TrimSpace(getenv("GCLOCK_RESYNC_BUDGET"))
	if v == "" {
		return clocksync.ResyncBudget, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0 && f < 1) {
		return clocksync.ResyncBudget, fmt.Errorf("GCLOCK_RESYNC_BUDGET=%q: want a share of the run's time in [0, 1) (0: none, default %g)", v, clocksync.ResyncBudget)
	}
	return f, nil
}

// resyncPingPongs reads GCLOCK_RESYNC_PINGPONGS: ping-pongs per offset
// measurement of a resync epoch (default clocksync.ResyncPingPongs; the
// full syncs keep GCLOCK_PINGPONGS).
func resyncPingPongs(getenv func(string) string) (int, error) {
	v := strings.TrimSpace(getenv("GCLOCK_RESYNC_PINGPONGS"))
	if v == "" {
		return clocksync.ResyncPingPongs, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100000 {
		return clocksync.ResyncPingPongs, fmt.Errorf("GCLOCK_RESYNC_PINGPONGS=%q: want ping-pongs per resync offset, 1 to 100000 (default %d)", v, clocksync.ResyncPingPongs)
	}
	return n, nil
}

// resyncDeadline reads GCLOCK_RESYNC_DEADLINE: a resync epoch's client
// pair's time for its offsets, in ms per 16 ping-pongs an offset (ns
// returned; empty or 0: no deadline, the default).
func resyncDeadline(getenv func(string) string) (int64, error) {
	v := strings.TrimSpace(getenv("GCLOCK_RESYNC_DEADLINE"))
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0 && f <= 1e6) {
		return 0, fmt.Errorf("GCLOCK_RESYNC_DEADLINE=%q: want ms per 16 ping-pongs of a resync pair, 0 to 1000000 (0: none, the default)", v)
	}
	return int64(f * 1e6), nil
}

// A duration in µs travels in 14 bits as a small float: values below 512
// exactly, above as 9 bits of mantissa (with the leading 1 implied) and a
// 5-bit exponent, rounded up (at most 0.2 % over): up to about 10^12 µs.
const (
	usBits     = 14
	usMantBits = 9
	usMax      = (1<<(usMantBits+1) - 1) << 30
)

// encodeUS packs µs (≥ 0) into usBits bits, rounding up.
func encodeUS(us int64) uint32 {
	us = min(max(us, 0), usMax)
	if us < 1<<usMantBits {
		return uint32(us)
	}
	shift := bits.Len64(uint64(us)) - (usMantBits + 1) // ≥ 0
	m := (us + 1<<shift - 1) >> shift                  // rounded up: 512..1024
	if m == 1<<(usMantBits+1) {
		m >>= 1
		shift++
	}
	return uint32(shift+1)<<usMantBits | uint32(m-1<<usMantBits)
}

// decodeUS unpacks encodeUS.
func decodeUS(x uint32) int64 {
	x &= 1<<usBits - 1
	e, m := x>>usMantBits, int64(x&(1<<usMantBits-1))
	if e == 0 {
		return m
	}
	return (m + 1<<usMantBits) << (e - 1)
}

// encodeAgree packs a rank's part of the closing agreement into one int:
// bit 0 ok, bits 1-2 the verdict, bits 3-16 this epoch's time up to the
// agreement (µs), bits 17-30 the previous epoch's span from start to end
// (µs, 0: none), both rounded up (encodeUS).
func encodeAgree(ok bool, v clocksync.KnotVerdict, costUS, prevUS int64) int32 {
	if !ok {
		return 0
	}
	return int32(1 | uint32(v)<<1 | encodeUS(costUS)<<3 | encodeUS(prevUS)<<(3+usBits))
}

// decodeAgree unpacks encodeAgree.
func decodeAgree(x int32) (ok bool, v clocksync.KnotVerdict, costUS, prevUS int64) {
	u := uint32(x)
	return u&1 != 0, clocksync.KnotVerdict(u >> 1 & 3), decodeUS(u >> 3), decodeUS(u >> (3 + usBits))
}

// encodeArm packs a rank's part of the agreement that arms the resyncs
// (armResync): bit 0 whether it records with resyncs on, bits 1-30 how
// long its end anchor took (µs, capped): the first resync's expected
// cost.
func encodeArm(on bool, anchorUS int64) int32 {
	if !on {
		return 0
	}
	return int32(1 | min(max(anchorUS, 0), 1<<30-1)<<1)
}

// decodeArm unpacks encodeArm.
func decodeArm(x int32) (on bool, anchorUS int64) {
	return x&1 != 0, int64(x) >> 1
}

// ceilUS is ns rounded up to µs.
func ceilUS(ns int64) int64 { return int64(math.Ceil(float64(max(ns, 0)) / 1000)) }

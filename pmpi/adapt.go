package main

// Adaptive resync intervals (issue 38 §3, docs/explanation/clocksync.md "Adaptive
// resync"). After each resync epoch every rank compares its new knot with
// the straight line through its two previous knots: a miss above
// resyncTolNS means the clock bends faster than the knots follow (a
// frequency step, a fast wander), a miss below a quarter of it that the
// knots could be further apart. The ranks say so in the agreement that
// closes the epoch (one allgather of an int, as before), together with how
// long their epoch took; rank 0 then halves the interval when any rank
// disagreed, lengthens it by half when all were calm, and keeps it between
// GCLOCK_RESYNC/8 and 2·GCLOCK_RESYNC, and never below what keeps the
// resyncs' cost under resyncBudget of the run (the slowest rank's epoch
// time, a running mean, over the interval) unless GCLOCK_RESYNC itself is shorter. Knots stay at agreed collectives as before;
// only the time rank 0 waits between them changes.

import (
	"fmt"
	"math"
	"strings"
)

const (
	// resyncTolNS: a knot missing the line through the two before it by
	// more than this disagrees (the chord between knots then misses by
	// about an eighth of it). 1 µs let a 1 ppm step pass unseen (its miss
	// is the step times the spacing times where it fell: 0.5-1 µs).
	resyncTolNS = 500.0
	// resyncBudget: the largest share of the run's time resyncs may take.
	resyncBudget = 0.001
	// resync interval bounds, as multiples of GCLOCK_RESYNC (at 4× a
	// random-walk frequency wandered 0.1 µs between knots unseen by them)
	resyncMinFactor = 1.0 / 8
	resyncMaxFactor = 2.0
)

// resyncAdaptOn reads GCLOCK_RESYNC_ADAPT (default on; 0/off/false: the
// interval stays GCLOCK_RESYNC).
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

// knotPoint is one knot of this rank's offset curve (local ns, offset ns).
type knotPoint struct {
	t   int64
	off float64
}

// knotVerdict is what a rank says of its new knot.
type knotVerdict int

const (
	knotKeep     knotVerdict = iota // neither: keep the interval
	knotDisagree                    // missed the line through the last two by > resyncTolNS
	knotCalm                        // missed it by < resyncTolNS/4
)

// judgeKnot compares knot k with the line through a and b (b after a).
// With fewer than two earlier knots (a.t == b.t) it says keep.
func judgeKnot(a, b, k knotPoint) (knotVerdict, float64) {
	if b.t <= a.t || k.t <= b.t {
		return knotKeep, 0
	}
	pred := b.off + (b.off-a.off)*float64(k.t-b.t)/float64(b.t-a.t)
	miss := math.Abs(k.off - pred)
	switch {
	case miss > resyncTolNS:
		return knotDisagree, miss
	case miss < resyncTolNS/4:
		return knotCalm, miss
	}
	return knotKeep, miss
}

// encodeAgree packs a rank's part of the closing agreement into one int:
// bit 0 ok, bits 1-2 the verdict, bits 3.. the epoch's duration in µs.
func encodeAgree(ok bool, v knotVerdict, costUS int64) int32 {
	if !ok {
		return 0
	}
	return int32(1 | int64(v)<<1 | min(max(costUS, 0), 1<<27)<<3)
}

// decodeAgree unpacks encodeAgree.
func decodeAgree(x int32) (ok bool, v knotVerdict, costUS int64) {
	return x&1 != 0, knotVerdict(x >> 1 & 3), int64(x >> 3)
}

// nextInterval is rank 0's next resync interval (s) after an epoch: cur
// the current one, base GCLOCK_RESYNC, anyDisagree and allCalm the ranks'
// verdicts, costS the slowest rank's epoch time (s).
func nextInterval(cur, base float64, anyDisagree, allCalm bool, costS float64) float64 {
	next := cur
	switch {
	case anyDisagree:
		next = cur / 2
	case allCalm:
		next = cur * 1.5
	}
	// never shorter than the budget allows, unless GCLOCK_RESYNC itself
	// asks for more (a test, or a user who knows the cost)
	lo := min(base, max(base*resyncMinFactor, costS/resyncBudget))
	hi := base * resyncMaxFactor
	return min(max(next, lo), hi)
}

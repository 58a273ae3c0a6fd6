package clocksync

import "math"

// Adaptive resync intervals (issue 38, docs/explanation/clocksync.md
// "Adaptive resync"): the policy the recorder follows (pmpi/resync.go)
// and the long simulated runs replay (clocksync/sim/longrun), in one
// place. After each resync epoch every rank compares its new knot with
// the straight line through its two previous knots (JudgeKnot): a miss
// above ResyncTolNS means the clock bends faster than the knots follow (a
// frequency step, a fast wander), a miss below a quarter of it that the
// knots could be further apart. Rank 0 then halves the interval when any
// rank disagreed, lengthens it by half when all were calm, and keeps it
// between GCLOCK_RESYNC·ResyncMinFactor and GCLOCK_RESYNC·ResyncMaxFactor,
// never below what keeps the resyncs' cost under ResyncBudget of the run
// unless GCLOCK_RESYNC itself is shorter (NextResyncInterval).
const (
	// ResyncTolNS: a knot missing the line through the two before it by
	// more than this disagrees (the chord between knots then misses by
	// about an eighth of it). 1 µs let a 1 ppm step pass unseen (its miss
	// is the step times the spacing times where it fell: 0.5-1 µs).
	ResyncTolNS = 500.0
	// ResyncBudget: the largest share of the run's time resyncs may take.
	ResyncBudget = 0.001
	// ResyncMinFactor and ResyncMaxFactor bound the interval as multiples
	// of GCLOCK_RESYNC (at 4× a random-walk frequency wandered 0.1 µs
	// between knots unseen by them).
	ResyncMinFactor = 1.0 / 8
	ResyncMaxFactor = 2.0
)

// KnotPoint is one knot of a rank's offset curve: local ns, offset ns.
type KnotPoint struct {
	T   int64
	Off float64
}

// KnotVerdict is what a rank says of its new knot.
type KnotVerdict int

const (
	KnotKeep     KnotVerdict = iota // neither: keep the interval
	KnotDisagree                    // missed the line through the last two by > ResyncTolNS
	KnotCalm                        // missed it by < ResyncTolNS/4
)

// JudgeKnot compares knot k with the line through a and b (b after a) and
// returns the verdict and the miss (ns). With fewer than two earlier knots
// (a.T == b.T) it says keep.
func JudgeKnot(a, b, k KnotPoint) (KnotVerdict, float64) {
	if b.T <= a.T || k.T <= b.T {
		return KnotKeep, 0
	}
	pred := b.Off + (b.Off-a.Off)*float64(k.T-b.T)/float64(b.T-a.T)
	miss := math.Abs(k.Off - pred)
	switch {
	case miss > ResyncTolNS:
		return KnotDisagree, miss
	case miss < ResyncTolNS/4:
		return KnotCalm, miss
	}
	return KnotKeep, miss
}

// NextResyncInterval is rank 0's next resync interval (s) after an epoch:
// cur the current one, base GCLOCK_RESYNC, anyDisagree and allCalm the
// ranks' verdicts, costS the resyncs' cost (ResyncCost, s).
func NextResyncInterval(cur, base float64, anyDisagree, allCalm bool, costS float64) float64 {
	next := cur
	switch {
	case anyDisagree:
		next = cur / 2
	case allCalm:
		next = cur * 1.5
	}
	// never shorter than the budget allows, unless GCLOCK_RESYNC itself
	// asks for more (a test, or a user who knows the cost)
	lo := min(base, max(base*ResyncMinFactor, costS/ResyncBudget))
	hi := base * ResyncMaxFactor
	return min(max(next, lo), hi)
}

// ResyncCost is the cost the budget counts after an epoch whose slowest
// rank took c s, prev the cost before (0: none yet): a running mean, one
// in four from the latest epoch, never below it (a quick epoch after slow
// ones let the interval drop to 0.4 s while the resyncs took 1.4 % of a
// loaded run).
func ResyncCost(prev, c float64) float64 {
	if prev == 0 {
		prev = c
	}
	return max(c, 0.75*prev+0.25*c)
}

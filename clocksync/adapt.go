package clocksync

import (
	"math"
	"sort"
)

// Adaptive resync intervals (issue 38, docs/explanation/clocksync.md
// "Adaptive resync"): the policy the recorder follows (pmpi/resync.go)
// and the long simulated runs replay (clocksync/sim/longrun), in one
// place.
//
// The judge. After each resync epoch every rank predicts its new knot
// from the knots before it (the polynomial through the last two, three or
// four: JudgeKnot) and turns the miss into an estimate of how far
// tracemerge's smooth model (a cubic spline through the knots) misses the
// clock between knots at this spacing: a miss above ResyncTolNS disagrees
// (the clock bends faster than the knots follow: a frequency step, a fast
// wander), one below a quarter of it is calm. Rank 0 then halves the
// interval when any rank disagreed, lengthens it by half when all were
// calm, and keeps it between GCLOCK_RESYNC·ResyncMinFactor and
// GCLOCK_RESYNC·ResyncMaxFactor (NextResyncInterval).
//
// The budget. Independently of the interval, no resync starts before the
// run time at which the resyncs' cost so far plus two more epochs (the
// next one and the one opening MPI_Finalize) is within ResyncBudget of
// the run (ResyncSpend.Earliest): a running total, not a mean, so a
// costly epoch under load pushes the next ones out until the share is
// back under the budget, its excess over the expected cost repaid at
// even gaps of at most twice the budget's steady spacing (D73).
const (
	// ResyncTolNS: a knot whose miss, scaled to the smooth model's miss
	// between knots (SplineMissRatio), exceeds this disagrees; below a
	// quarter of it, it is calm. 80 ns keeps a 0.05 ppm/√s random walk at
	// about the intervals the straight-line judge of 0.5 µs gave it
	// (whose miss is about 0.18 of the line's), while a 20 µs / 20 s sine,
	// which the spline follows within 0.01 µs at 1-1.5 s, is no longer
	// driven down to 0.25 s.
	ResyncTolNS = 80.0
	// ResyncBudget: the largest share of the run's time resyncs may take.
	ResyncBudget = 0.001
	// ResyncMinFactor and ResyncMaxFactor bound the interval as multiples
	// of GCLOCK_RESYNC (at 4× a random-walk frequency wandered 0.1 µs
	// between knots unseen by them).
	ResyncMinFactor = 1.0 / 8
	ResyncMaxFactor = 2.0
)

// SplineMissRatio is, for predictions from the last 2, 3 and 4 knots
// (index 0, 1, 2), the ratio of the cubic spline's largest miss between
// knots to the prediction's miss at the next knot, for a random-walk
// frequency (rms over 40 walks of 0.05 ppm per 1 s step, knots every
// 2-4 s, exact knots). For a smooth clock the ratio is far smaller (a
// 20 µs / 20 s sine: 0.002-0.005), so the judge is right for a walk and
// cautious for a smooth wander: the roughness term that a scale for
// smooth clocks alone (h⁴ / ∏(t_k − t_i)) lacked, and with which the
// simulated random walks got calmer and worse.
var SplineMissRatio = [3]float64{0.18, 0.14, 0.085}

// KnotPoint is one knot of a rank's offset curve: local ns, offset ns,
// and the knot's own noise (ns, a standard deviation: KnotNoise; 0: none
// known, as on shared memory where it is far below ResyncTolNS).
type KnotPoint struct {
	T     int64
	Off   float64
	Noise float64
}

// KnotNoisePerSpread is a loose knot's noise (the standard deviation of
// its true error) per unit of the typical spread of its pair's agreeing
// offsets (HCA3Offset's KnotStats.Spread): over TCP between namespace
// hosts, 78 resync knots of one rank (CI, 2026-11-28) missed the truth
// by 0.47 µs rms with a median spread of 0.61 µs. One knot's own spread
// says little (its error lay up to 4.4 times its spread), so the typical
// spread of the rank's recent knots is what it multiplies (KnotNoise).
const KnotNoisePerSpread = 0.8

// KnotNoiseZ: a knot disagrees only when its prediction's miss also
// exceeds KnotNoiseZ times the miss's own noise (JudgeKnot).
const KnotNoiseZ = 3.0

// KnotNoise is the noise (ns) of a loose knot from the spreads (ns) of
// its rank's recent loose knots' agreeing offsets, this one's included:
// KnotNoisePerSpread times their median (0 without any).
func KnotNoise(spreads []float64) float64 {
	if len(spreads) == 0 {
		return 0
	}
	s := append([]float64(nil), spreads...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return KnotNoisePerSpread * med
}

// KnotVerdict is what a rank says of its new knot.
type KnotVerdict int

const (
	KnotKeep     KnotVerdict = iota // neither: keep the interval
	KnotDisagree                    // estimated model miss > ResyncTolNS
	KnotCalm                        // estimated model miss < ResyncTolNS/4
)

// LagrangeAt is the value at t of the polynomial through the points
// (ts[i], vs[i]), whose times must be distinct: what JudgeKnot predicts a
// knot from, and tracemerge a loose knot from its steady neighbours.
func LagrangeAt(t int64, ts []int64, vs []float64) float64 {
	v := 0.0
	for i := range ts {
		w := 1.0
		for j := range ts {
			if j != i {
				w *= float64(t-ts[j]) / float64(ts[i]-ts[j])
			}
		}
		v += w * vs[i]
	}
	return v
}

// JudgeKnot predicts knot k from the earlier knots prev (oldest first;
// the last up to four are used: the Lagrange polynomial through them,
// extrapolated to k.T) and returns the verdict and the estimated miss of
// the smooth model between knots (ns): the prediction's miss times
// SplineMissRatio. With fewer than two earlier knots with distinct times
// before k it says keep. A miss within KnotNoiseZ times its own noise
// (the knots' Noise, carried through the extrapolation: sqrt(k.Noise² +
// Σ L_i(k.T)² Noise_i²)) does not disagree, and one within KnotCalmZ
// times it is calm: over
// TCP, knots 0.5 µs off predicted from four through a cubic miss by
// ≈ 8.4 × 0.5 µs, which scaled to the spline read as 0.36 µs, far over
// ResyncTolNS, and halved the interval down to GCLOCK_RESYNC/8 on noise
// alone (78 epochs in 4.8 s at GCLOCK_RESYNC=0.25; decisions.md D86).
func JudgeKnot(prev []KnotPoint, k KnotPoint) (KnotVerdict, float64) {
	// the latest up to four knots with increasing times before k
	var use []KnotPoint
	for i := len(prev) - 1; i >= 0 && len(use) < 4; i-- {
		p := prev[i]
		last := k.T
		if len(use) > 0 {
			last = use[len(use)-1].T
		}
		if p.T < last {
			use = append(use, p)
		}
	}
	if len(use) < 2 {
		return KnotKeep, 0
	}
	var ts [4]int64
	var vs [4]float64
	for i, p := range use {
		ts[i], vs[i] = p.T, p.Off
	}
	pred := LagrangeAt(k.T, ts[:len(use)], vs[:len(use)])
	raw := math.Abs(k.Off - pred)
	miss := raw * SplineMissRatio[len(use)-2]
	noise := predictionNoise(k, use)
	switch {
	case miss > ResyncTolNS && raw > KnotNoiseZ*noise:
		return KnotDisagree, miss
	case miss < ResyncTolNS/4 || raw <= KnotCalmZ*noise:
		return KnotCalm, miss
	}
	return KnotKeep, miss
}

// KnotCalmZ: a knot whose prediction's miss is within KnotCalmZ times
// the miss's own noise is calm, however large the noise (JudgeKnot): the
// knots cannot tell the model from the clock at this spacing, so a
// longer one costs nothing they could show. Without it a loose knot was
// never calm over TCP (its noise alone is over ResyncTolNS/4), and every
// disagreement, true or a 3σ miss, shortened the interval for the rest
// of the run (3 of 12 kept TCP runs ended at 0.125-0.19 s after one).
const KnotCalmZ = 1.0

// predictionNoise is the standard deviation (ns) of knot k's miss from
// the polynomial through the knots use (distinct times, none at k.T) when
// every knot's error is independent with its own Noise.
func predictionNoise(k KnotPoint, use []KnotPoint) float64 {
	v := k.Noise * k.Noise
	for i, p := range use {
		w := 1.0
		for j, q := range use {
			if j != i {
				w *= float64(k.T-q.T) / float64(p.T-q.T)
			}
		}
		v += w * w * p.Noise * p.Noise
	}
	return math.Sqrt(v)
}

// NextResyncInterval is rank 0's next resync interval (s) after an epoch:
// cur the current one, base GCLOCK_RESYNC, anyDisagree and allCalm the
// ranks' verdicts. The cost budget is not part of it: ResyncSpend gates
// when a resync may start.
func NextResyncInterval(cur, base float64, anyDisagree, allCalm bool) float64 {
	next := cur
	switch {
	case anyDisagree:
		next = cur / 2
	case allCalm:
		next = cur * 1.5
	}
	return min(max(next, base*ResyncMinFactor), base*ResyncMaxFactor)
}

// ResyncCost is the expected cost of the next epoch after one whose
// slowest rank took c s, prev the expectation before (0: none yet): a
// running mean, one in four from the latest epoch, which counts at most
// ResyncCostClip times prev. Not "never below the latest": one costly
// epoch under load (4-135 ms among epochs of 0.3 ms) then set the reserve
// for two more epochs so high that the next resync waited 10-30 s, and a
// 20 µs / 20 s sine went 18 µs off in a 40 s bench run; nor the plain
// mean, whose quarter of an 80 ms spike still held the next resync off
// for 40 s. The running total charges the costly epoch itself
// (ResyncSpend), and costs that stay higher raise the expectation by a
// quarter per epoch.
func ResyncCost(prev, c float64) float64 {
	if prev == 0 {
		return c
	}
	return 0.75*prev + 0.25*min(c, ResyncCostClip*prev)
}

// ResyncSeedCost is the expected cost (s) of the first resync epoch,
// before any has been measured, from the end anchor's time anchor (s):
// the same offset-only tree, run in MPI_Init with anchorPP ping-pongs
// per offset, while the resyncs measure with resyncPP
// (GCLOCK_RESYNC_PINGPONGS). Fewer ping-pongs scale it by their ratio,
// but by no less than a half: an epoch's sleeping waits and wake-ups do
// not shrink with the ping-pongs (4 ranks on 2 loaded cores: epochs with
// 16 ping-pongs cost 0.46-0.75 of those with 50 at the median). Unscaled,
// the anchor's time held the first resync off for twice the steady
// spacing: at 4 ranks under load 20 s into a 40 s run.
func ResyncSeedCost(anchor float64, anchorPP, resyncPP int) float64 {
	if anchorPP <= 0 || resyncPP <= 0 {
		return anchor
	}
	f := float64(resyncPP) / float64(anchorPP)
	if f < 1 {
		f = max(f, 0.5)
	}
	return anchor * f
}

// ResyncCostClip is the most an epoch counts in the expected cost, as a
// multiple of the expectation before it (ResyncCost).
const ResyncCostClip = 2.0

// ResyncRepayHorizon: an excess over the budget's line is repaid over at
// least this many times the run time the budget needs for it alone
// (ResyncSpend.Earliest): the gaps while repaying are at most
// ResyncRepayHorizon/(ResyncRepayHorizon−1) times the steady spacing.
const ResyncRepayHorizon = 2.0

// ResyncSpend is rank 0's account of what the resync epochs cost, against
// ResyncBudget. An epoch's cost is its slowest rank's time from the
// epoch's start to its end (the span every rank writes as the epoch's
// StartNS..EndNS, as `make bench` section 4 sums them). Rank 0 learns it
// one epoch late (each rank reports its previous epoch's span in the next
// epoch's closing agreement); until then it books an estimate (Book) and
// replaces it when the measurement comes (Settle).
//
// An epoch that costs more than the expectation it was planned with puts
// the running total in debt: the excess (Debt) is repaid at even gaps of
// at most ResyncRepayHorizon/(ResyncRepayHorizon−1) times the budget's
// steady spacing, not by one long gap nor by gaps that double (Earliest;
// a smooth clock's error grows with the fourth power of the spacing, so
// the longest gap is what counts). Only the largest single
// excess is ever left out of the budget's floor: under lasting load,
// where every epoch costs more than expected, the rest counts in full.
type ResyncSpend struct {
	// Settled is the sum of the measured costs (s).
	Settled float64
	// Pending is the estimate booked for the latest epoch, not yet
	// measured (s).
	Pending float64
	// Next is the expected cost of one more epoch (ResyncCost; 0 before
	// any epoch, s).
	Next float64
	// Debt is what the epochs since the total last fitted the budget
	// cost over the expectations they were planned with (s).
	Debt float64
	// Last is the run time at which the latest epoch started, Gap the
	// time from the start before it (or from the run's start) to it (s).
	Last, Gap float64
	// before: Next before the latest booking; expect: the expectation
	// the latest epoch was planned with; pendDebt: the latest epoch's
	// excess; maxDebt: the largest excess of the epochs before it in Debt
	before, expect, pendDebt, maxDebt float64
	// lastOver: the latest epoch cost over ResyncCostClip times its
	// expectation; prevOver: the one before it did
	lastOver, prevOver bool
	// latest: the latest epoch's cost as booked or measured (s)
	latest float64
}

// mean is the expected cost after an epoch of c s, prev the expectation
// before it: ResyncCost, but in full (a plain running mean) when the
// epoch before also cost over ResyncCostClip times its expectation: one
// spike is clipped, lasting load is followed (a 40 s run whose epochs went
// from 1 to 10 ms took 0.14 % with every epoch clipped).
func (s *ResyncSpend) mean(prev, c float64) float64 {
	s.lastOver = prev > 0 && c > ResyncCostClip*prev
	if prev > 0 && s.prevOver {
		return 0.75*prev + 0.25*c
	}
	return ResyncCost(prev, c)
}

// Book books an epoch that started at run time at (s) and whose cost is
// estimated at est s (the slowest rank's time up to the closing
// agreement, at least); budget is the share Earliest plans with. When
// the total fitted the budget at the epoch's start, the debt is repaid.
func (s *ResyncSpend) Book(at, est, budget float64) {
	if budget > 0 && s.Next > 0 && s.Total()+2*s.Next <= budget*at {
		s.Debt, s.maxDebt, s.pendDebt = 0, 0, 0
	}
	s.Settled += s.Pending
	s.Pending, s.latest = est, est
	s.Gap, s.Last = at-s.Last, at
	s.expect = s.Next
	s.maxDebt = max(s.maxDebt, s.pendDebt)
	s.pendDebt = 0
	if s.expect > 0 {
		s.pendDebt = max(0, est-s.expect)
	}
	s.Debt += s.pendDebt
	s.before = s.Next
	s.prevOver = s.lastOver
	s.Next = s.mean(s.before, est)
}

// Settle replaces the estimate booked for the latest epoch by its
// measured cost c (s), when c is known (c > 0).
func (s *ResyncSpend) Settle(c float64) {
	if c <= 0 || s.Pending == 0 {
		return
	}
	s.Settled += c
	s.latest = c
	s.Next = s.mean(s.before, c)
	if s.expect > 0 {
		d := max(0, c-s.expect)
		s.Debt += d - s.pendDebt
		s.pendDebt = d
	}
	s.Pending = 0
}

// Total is the cost booked so far (s).
func (s ResyncSpend) Total() float64 { return s.Settled + s.Pending }

// Earliest is the run time (s from the run's start) before which no
// resync epoch may start with the given budget (a share of the run; ≤ 0:
// no budget, 0 returned). In full, the cost so far plus two more epochs
// (this one and the one at MPI_Finalize, at the expected cost) within
// budget of the run at that time; but while the total is over the
// budget's line (an epoch cost more than expected), the next start comes
// after the gap that repays the excess evenly (repayGap; right after an
// epoch that cost over ResyncCostClip times its expectation, at least
// twice the latest gap), and never
// before the total without its largest single excess plus the two epochs
// fits the budget. So the share exceeds the budget by at most one
// epoch's excess and the reserve's shortfall (under lasting load, where
// every epoch costs more than expected, the others count in full), and a
// costly epoch stretches the following gaps evenly (1.5 s to 3.8 s for a
// 15 ms epoch among 1.5 ms ones) until the total is back on the line,
// instead of holding the next resync off for its excess over the budget
// (80 ms at 0.1 %: 80 s) or doubling the gaps (3, 6, 9.4 s: a 20 µs /
// 20 s sine 5.7 µs off between exact knots; D73). Before any epoch
// there is nothing to go by, and the first resync is free.
func (s ResyncSpend) Earliest(budget float64) float64 {
	if budget <= 0 || s.Next == 0 {
		return 0
	}
	full := (s.Total() + 2*s.Next) / budget
	if s.Gap <= 0 {
		return full
	}
	forgiven := min(s.Debt, max(s.maxDebt, s.pendDebt))
	floor := (s.Total() - forgiven + 2*s.Next) / budget
	gap := s.repayGap(full, budget)
	if s.lastOver {
		// right after an epoch that cost over ResyncCostClip times its
		// expectation the next gap at most doubles, as a probe: under
		// lasting load the next epoch costs as much again, and an even
		// gap would plan it (and the MPI_Finalize epoch after it) at
		// the expectation from before (TestResync_BudgetHoldsAtTheDefault
		// at load 12: epochs of 87-537 ms)
		gap = max(gap, ResyncGapGrowth*s.Gap)
	}
	return max(floor, min(full, s.Last+gap))
}

// ResyncGapGrowth: right after an epoch that cost over ResyncCostClip
// times its expectation, the next gap is at least this many times the
// latest (ResyncSpend.Earliest); the gaps after it repay evenly.
const ResyncGapGrowth = 2.0

// repayGap is the gap (s) after the latest start while the total is over
// the budget's line: the excess R = budget·(full − Last) is repaid over a
// horizon H = max(Last, ResyncRepayHorizon·R/budget), at evenly spaced
// epochs of the expected cost, Next/(budget − R/H) apart (at most
// ResyncRepayHorizon/(ResyncRepayHorizon−1) times the budget's steady
// spacing Next/budget), so the total meets the line at the horizon's end.
func (s ResyncSpend) repayGap(full, budget float64) float64 {
	r := budget * (full - s.Last)
	if r <= 0 {
		return 0
	}
	h := max(s.Last, ResyncRepayHorizon*r/budget)
	c := s.Next
	if s.lastOver && s.prevOver {
		// lasting load: the epochs cost what the latest did, not what the
		// running mean has caught up to yet
		c = max(c, s.latest)
	}
	return c / (budget - r/h)
}

package sim

import (
	"math"
	"sync"
	"testing"

	"github.com/gclock/gclock/clocksync"
)

// TestResync_LateNodeMemberSharesItsLeadersKnot: 2 nodes × 2 ranks, node
// 1's clock takes a 1 ppm frequency step 5 s after the init sync, so the
// slope every resync keeps (epoch 0's) is 1 ppm off at the resync 10 s in.
// Rank 3, node 1's member, enters that resync 100 ms after the others
// (descheduled, or late into the meeting's collective): its leader
// (rank 2) has measured by then (the resync's communicators exist from a
// first resync: the second one starts without a collective) and ClockPropSync hands rank 3 the
// leader's clock. Against the simulator's exact truth: rank 3's knot
// (clocksync.ClockKnotBound) is its leader's, before rank 3 entered, and
// rank 3's model is as right there as the leader's; at rank 3's own epoch
// end (where tracemerge put the knot before knot_copied: correct.KnotTime)
// it is off by the slope error times the delay, 100 ns.
func TestResync_LateNodeMemberSharesItsLeadersKnot(t *testing.T) {
	const later, late, step = 10.0, 0.1, 1e-6
	p := DefaultParams(4, 2, 5)
	w := New(p)
	w.Clocks[1].Extra = func(T float64) float64 { return step * math.Max(0, T-5) }
	cfg := clocksync.DefaultConfig()
	var mu sync.Mutex
	type rankOut struct {
		model       clocksync.LinearModel
		knot        clocksync.KnotBound
		known       bool
		start, end  float64 // true times
		startGlobal float64 // the rank's global clock as it entered
	}
	out := make([]rankOut, p.Ranks)
	err := w.Run(func(r int, tr clocksync.Transport, clk *Clock) error {
		c := cfg
		c.NodeID, c.SocketID = w.NodeOf(r), w.NodeOf(r)
		res, err := clocksync.Sync(c, tr, clk)
		if err != nil {
			return err
		}
		// A first resync, every rank on time, makes the resync's
		// communicators (the recorder keeps them from then on: later
		// resyncs start without a collective).
		alg, err := clocksync.NewResyncAlg(c, res.Model)
		if err != nil {
			return err
		}
		w.Advance(r, later-1-w.Now(r))
		g, err := alg.SyncClocks(tr, clk)
		if err != nil {
			return err
		}
		prior, _ := clocksync.Flatten(g)
		alg.SetPrior(prior)
		w.Advance(r, later-w.Now(r))
		if r == 3 {
			w.Advance(r, late)
		}
		o := rankOut{start: w.Now(r)}
		o.startGlobal = prior.Global(w.LocalTime(r, o.start))
		g, err = alg.SyncClocks(tr, clk)
		if err != nil {
			return err
		}
		o.end = w.Now(r)
		o.model, _ = clocksync.Flatten(g)
		o.knot, o.known = clocksync.ClockKnotBound(g)
		mu.Lock()
		out[r] = o
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// errAtGlobal: rank r's model error at the moment its global clock
	// reads gl (exact truth: the true time by bisection on its node clock).
	errAtGlobal := func(r int, gl float64) float64 {
		x := out[r].model.Local(gl)
		lo, hi := 0.0, 30.0
		for range 200 {
			mid := (lo + hi) / 2
			if w.LocalTime(r, mid) < x {
				lo = mid
			} else {
				hi = mid
			}
		}
		return gl - w.RefTime(lo)
	}
	errAtTrue := func(r int, T float64) float64 { return out[r].model.Global(w.LocalTime(r, T)) - w.RefTime(T) }
	leader, member := out[2], out[3]
	if !leader.known || !member.known {
		t.Fatalf("knot bounds unknown: leader %v, member %v", leader.known, member.known)
	}
	if member.knot.At != leader.knot.At || member.model != leader.model {
		t.Errorf("the member's clock is not its leader's: knot at %.9f s / %.9f s, models %v / %v", member.knot.At, leader.knot.At, member.model, leader.model)
	}
	if member.knot.At >= member.startGlobal {
		t.Fatalf("the member's knot at %.6f s (global) does not precede its entry at %.6f s: the test does not make it late", member.knot.At, member.startGlobal)
	}
	atKnot := math.Abs(errAtGlobal(3, member.knot.At))
	leaderAtKnot := math.Abs(errAtGlobal(2, leader.knot.At))
	atEnd := math.Abs(errAtTrue(3, member.end))
	t.Logf("member entered %.0f ms after its leader's measurement; its model's true error at the leader's knot %.1f ns (the leader's %.1f ns), at its own epoch end %.1f ns",
		(member.startGlobal-member.knot.At)*1e3, atKnot*1e9, leaderAtKnot*1e9, atEnd*1e9)
	if atKnot > 50e-9 || math.Abs(atKnot-leaderAtKnot) > 1e-9 {
		t.Errorf("the member's model is off by %.1f ns at its leader's knot (the leader's %.1f ns): want the leader's, within 50 ns", atKnot*1e9, leaderAtKnot*1e9)
	}
	if atEnd < atKnot+0.5*step*late {
		t.Errorf("at the member's epoch end the model is off by only %.1f ns (at the knot %.1f ns): the kept slope's error did not show, the test proves nothing", atEnd*1e9, atKnot*1e9)
	}
}

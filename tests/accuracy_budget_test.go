package tests

import (
	"math"
	"strconv"
	"testing"

	"github.com/gclock/gclock/clocksync"
)

// resyncBudget is what checkResyncBudget read from a run.
type resyncBudget struct {
	resyncs int     // resync epochs (MPI_Finalize's included)
	share   float64 // the slowest rank's resync epochs over rank 0's span (as `make bench` section 4)
	// bound: the budget allowed no further resync before the run ended
	bound bool
}

// checkResyncBudget checks, on a run with adaptive resyncs and the
// default budget (GCLOCK_RESYNC_BUDGET unset), that rank 0 started no
// resync epoch before the time its budget allowed (clocksync.ResyncSpend:
// the first not before two end anchors' time over the budget, each later
// one not before the previous epoch's budget_next_s), and measures the
// resyncs' share of the run the way `make bench` section 4 does. It
// reports whether the budget was what kept the run from having more
// resyncs (its earliest next start was past the run's last resync, or
// MPI_Finalize).
func checkResyncBudget(t *testing.T, traces []rankTrace) resyncBudget {
	t.Helper()
	var b resyncBudget
	eps0 := traces[0].Meta.Epochs
	if len(eps0) < 2 {
		t.Errorf("rank 0 has %d sync epochs", len(eps0))
		return b
	}
	start := eps0[0].StartNS
	anchorUS := 0.0
	byIndex := map[int]float64{}
	for _, tr := range traces {
		eps := tr.Meta.Epochs
		if len(eps) > 0 {
			if v, err := strconv.ParseFloat(eps[0].Params["end_anchor_us"], 64); err == nil {
				anchorUS = math.Max(anchorUS, v)
			}
		}
		for _, e := range eps {
			if e.Params["resync"] != "" {
				byIndex[e.Index] = math.Max(byIndex[e.Index], float64(e.EndNS-e.StartNS))
			}
		}
	}
	if anchorUS <= 0 {
		t.Errorf("epoch 0 has no end_anchor_us on any rank: the first resync's expected cost is unknown")
	}
	earliest := 2 * anchorUS * 1e-6 / clocksync.ResyncBudget // s from the start
	end := float64(eps0[len(eps0)-1].StartNS-start) * 1e-9   // the run's last epoch (MPI_Finalize's)
	for _, e := range eps0[1:] {
		if e.Params["resync"] == "" {
			continue
		}
		b.resyncs++
		if e.Params["trigger"] == "MPI_Finalize" {
			end = float64(e.StartNS-start) * 1e-9
			continue
		}
		at := float64(e.StartNS-start) * 1e-9
		// budget_next_s is written to the ms
		if at < earliest-1e-3 {
			t.Errorf("resync epoch %d started %.3f s into the run, before the budget allowed (%.3f s)", e.Index, at, earliest)
		}
		v, err := strconv.ParseFloat(e.Params["budget_next_s"], 64)
		if err != nil {
			t.Errorf("resync epoch %d on rank 0 has no budget_next_s (%q)", e.Index, e.Params["budget_next_s"])
			continue
		}
		earliest = v
	}
	b.bound = earliest >= end
	sum := 0.0
	for _, v := range byIndex {
		sum += v
	}
	if ev := traces[0].Events; len(ev) > 1 {
		b.share = sum / float64(ev[len(ev)-1].ExitNS-ev[0].EnterNS)
	}
	return b
}

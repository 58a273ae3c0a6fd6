package tests

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"testing"

	"github.com/gclock/gclock/clocksync"
)

// resyncBudget is what checkResyncBudget read from a run.
type resyncBudget struct {
	resyncs int     // resync epochs (MPI_Finalize's included)
	share   float64 // the slowest rank's resync epochs over rank 0's span (as `make bench` section 4)
	// unforeseen: the share the plan could not foresee (epochs that cost
	// more than expected, the latest booking's shortfall)
	unforeseen float64
	// bound: the budget allowed no further resync before the run ended
	bound bool
	costs string // per resync epoch: the slowest rank's ms
}

// checkResyncBudget checks, on a run with adaptive resyncs and the given
// budget (GCLOCK_RESYNC_BUDGET), that rank 0 kept the rule of
// clocksync.ResyncSpend: the first resync not before twice its expected
// cost (the end anchor's time scaled, clocksync.ResyncSeedCost) over the
// budget, each later one not before the previous epoch's
// budget_next_s; and that the resyncs' share of the run, measured the way
// `make bench` section 4 does (each epoch's slowest rank from its start
// to its end, over rank 0's span), is within the budget plus what the
// plan could not foresee (an epoch costing more than the expectation it
// was planned with, budget_expect_us; the latest booking under its
// measured cost). It reports whether the budget was what kept the run
// from having more resyncs.
func checkResyncBudget(t *testing.T, traces []rankTrace, budget float64) resyncBudget {
	t.Helper()
	var b resyncBudget
	eps0 := traces[0].Meta.Epochs
	ev := traces[0].Events
	if len(eps0) < 2 || len(ev) < 2 {
		t.Errorf("rank 0 has %d sync epochs and %d events", len(eps0), len(ev))
		return b
	}
	span := float64(ev[len(ev)-1].ExitNS - ev[0].EnterNS)
	// the budget's run start: rank 0's first meeting (budget_start_ns)
	start := int64(-1)
	for _, e := range eps0 {
		if v, err := strconv.ParseInt(e.Params["budget_start_ns"], 10, 64); err == nil {
			start = v
			break
		}
	}
	if start < 0 {
		start = ev[0].EnterNS
	} else if start < ev[0].EnterNS {
		t.Errorf("the budget's run start (%d) is before rank 0's first event (%d): its run time is longer than the span the share is measured against", start, ev[0].EnterNS)
	}
	anchorUS := 0.0
	actual := map[int]float64{} // epoch index: the slowest rank's ns
	for _, tr := range traces {
		eps := tr.Meta.Epochs
		if len(eps) > 0 {
			if v, err := strconv.ParseFloat(eps[0].Params["end_anchor_us"], 64); err == nil {
				anchorUS = math.Max(anchorUS, v)
			}
		}
		for _, e := range eps {
			if e.Params["resync"] != "" {
				actual[e.Index] = math.Max(actual[e.Index], float64(e.EndNS-e.StartNS))
			}
		}
	}
	if anchorUS <= 0 {
		t.Errorf("epoch 0 has no end_anchor_us on any rank: the first resync's expected cost is unknown")
	}
	// the first resync's expected cost: the anchor's time scaled to the
	// resyncs' ping-pongs (GCLOCK_RESYNC_PINGPONGS' default here)
	seed := clocksync.ResyncSeedCost(anchorUS*1e-6, eps0[0].PingPongs, clocksync.ResyncPingPongs)
	earliest := 2 * seed / budget // s from the start
	expect := seed * 1e9          // ns: the expectation the next epoch is planned with
	end := float64(eps0[len(eps0)-1].StartNS-start) * 1e-9
	unforeseen, shortfall := 0.0, 0.0 // ns
	for _, e := range eps0[1:] {
		if e.Params["resync"] == "" {
			continue
		}
		b.resyncs++
		a := actual[e.Index]
		b.costs += fmt.Sprintf(" %.2f", a/1e6)
		unforeseen += math.Max(0, a-expect)
		if e.Params["trigger"] == "MPI_Finalize" {
			end = float64(e.StartNS-start) * 1e-9
			continue
		}
		at := float64(e.StartNS-start) * 1e-9
		// budget_next_s is written to the ms
		if at < earliest-1e-3 {
			t.Errorf("resync epoch %d started %.3f s into the run, before the budget allowed (%.3f s)", e.Index, at, earliest)
		}
		next, err1 := strconv.ParseFloat(e.Params["budget_next_s"], 64)
		exp, err2 := strconv.ParseFloat(e.Params["budget_expect_us"], 64)
		booked, err3 := strconv.ParseFloat(e.Params["resync_cost_us"], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Errorf("resync epoch %d on rank 0 lacks budget_next_s, budget_expect_us or resync_cost_us: %v", e.Index, e.Params)
			continue
		}
		earliest, expect, shortfall = next, exp*1e3, math.Max(0, a-booked*1e3)
	}
	unforeseen += shortfall
	b.bound = earliest >= end
	sum := 0.0
	for _, v := range actual {
		sum += v
	}
	b.share, b.unforeseen = sum/span, unforeseen/span
	if b.share > budget+b.unforeseen+1e-9 {
		t.Errorf("resyncs took %.4f %% of the run, over the budget %.2f %% plus the unforeseen %.4f %% (epochs' ms:%s)", 100*b.share, 100*budget, 100*b.unforeseen, b.costs)
	}
	return b
}

// TestResync_BudgetHoldsAtTheDefault: with the default resync settings
// (GCLOCK_RESYNC 2 s, adapted, GCLOCK_RESYNC_BUDGET 0.1 %) and a clock
// that keeps the adaptation asking for short intervals (a 20 µs / 20 s
// sine), rank 0 starts no resync before its budget allows, and the
// resyncs take at most 0.1 % of the run (measured as `make bench` section
// 4 measures it) plus what the plan could not foresee; at 2 ranks and at
// 4 ranks on 2 emulated nodes (whose epochs cost more on 2 cores).
func TestResync_BudgetHoldsAtTheDefault(t *testing.T) {
	mp := mpis(t)
	for _, tc := range []struct {
		name     string
		np, node int
	}{{"2ranks", 2, 1}, {"4ranks_2nodes", 4, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			traces, _ := runClockprog(t, accRun{MPI: mp[0], NP: tc.np, NodeSize: tc.node, Fake: "0:0,1e6:10+sin(20us,20s)", Iters: 200, SleepUS: 40000})
			b := checkResyncBudget(t, traces, 0.001)
			a := measureAccuracy(t, traces, nil)
			t.Logf("%d resync epochs (slowest rank's ms:%s), %.4f %% of the run (unforeseen %.4f %%)%s; max |corrected - truth| %.3f µs",
				b.resyncs, b.costs, 100*b.share, 100*b.unforeseen, map[bool]string{true: "; the budget allowed no more", false: ""}[b.bound], a.MaxInterp/1e3)
			if b.resyncs == 0 {
				t.Errorf("no resync epoch at all (MPI_Finalize opens with one when the latest knot is over 1 s old)")
			}
			// The resync epochs measure with GCLOCK_RESYNC_PINGPONGS' default
			// (16 ping-pongs per offset), the full syncs with GCLOCK_PINGPONGS'.
			for rank, tr := range traces {
				for _, e := range tr.Meta.Epochs {
					want := 50
					if e.Params["resync"] != "" {
						want = clocksync.ResyncPingPongs
					}
					if e.PingPongs != want {
						t.Errorf("rank %d epoch %d (resync %q): %d ping-pongs per offset, want %d", rank, e.Index, e.Params["resync"], e.PingPongs, want)
					}
				}
			}
		})
	}
}

// resyncShare is the resyncs' share of the run as `make bench` section 4
// measures it (each resync epoch's slowest rank from its start to its
// end, summed, over rank 0's span) and the epochs' ms.
func resyncShare(traces []rankTrace) (float64, string) {
	actual := map[int]float64{}
	for _, tr := range traces {
		for _, e := range tr.Meta.Epochs {
			if e.Params["resync"] != "" {
				actual[e.Index] = math.Max(actual[e.Index], float64(e.EndNS-e.StartNS))
			}
		}
	}
	var idx []int
	sum := 0.0
	for i, v := range actual {
		idx = append(idx, i)
		sum += v
	}
	sort.Ints(idx)
	costs := ""
	for _, i := range idx {
		costs += fmt.Sprintf(" %.2f", actual[i]/1e6)
	}
	ev := traces[0].Events
	if len(ev) < 2 {
		return 0, costs
	}
	return sum / float64(ev[len(ev)-1].ExitNS-ev[0].EnterNS), costs
}

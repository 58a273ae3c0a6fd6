package tests

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gclock/gclock/clocksync"
)

// TestPingPongDeadline_ClientStopsAndTellsTheReference runs
// progs/ppdeadline.c, a unit test of cshim/pingpong.c's client loop
// compiled against each MPI's mpi.h: under a deadline the loop stops after
// the first ping-pong that returns at or after it and sends the reference
// the NaN that ends its loop, exactly when it stopped early; at least one
// ping-pong is made; without a deadline all are; and the test fault
// pingpong-stall sleeps inside every ping-pong.
func TestPingPongDeadline_ClientStopsAndTellsTheReference(t *testing.T) {
	runCUnit(t, "ppdeadline", 700, time.Minute)
}

// TestResync_PingPongDeadlineBoundsAStalledEpoch: rank 1 stalls 5 ms
// inside every ping-pong of every resync epoch (GCLOCK_TEST_FAULT=
// pingpong-stall, a rank descheduled in the middle of the resync). Without
// a deadline one offset's 16 ping-pongs take at least 80 ms, and the loose
// offsets (half-widths of 2.5 ms) make the pair measure 5 to 9 of them:
// 0.4-0.7 s an epoch (1.9-2.3 s measured at load 20-30). With the pair
// deadline (5 ms, pmpi ppDeadline) the loop stops at its second ping-pong
// (as slow as the first; at most 5 are made), the median epoch's
// measuring part (sync_us) stays under the 80 ms of one uncut loop, the
// epoch says it was cut (pingpongs_done under
// pingpongs_asked, pingpongs_cut), its knot's bound holds (the knot's
// true error lies within it), and the full syncs at MPI_Init and
// MPI_Finalize are not cut.
func TestResync_PingPongDeadlineBoundsAStalledEpoch(t *testing.T) {
	mp := mpis(t)
	traces, _ := runClockprog(t, accRun{MPI: mp[0], NP: 2, NodeSize: 1, Fake: "0:0,1e6:10", Iters: 60, SleepUS: 20000,
		Env: []string{"GCLOCK_RESYNC=0.3", "GCLOCK_RESYNC_ADAPT=0", "GCLOCK_RESYNC_BUDGET=0", "GCLOCK_TEST_FAULT=pingpong-stall", "GCLOCK_RESYNC_DEADLINE=5", "GCLOCK_QUIET=1"}})
	const stallLoopUS = 16 * 5000 // one uncut loop of rank 1's stalled ping-pongs
	// rounding of the knot's local time and the model's evaluation
	const knotSlackNS = 20
	in0 := traces[0].Meta.Header.Inject
	resyncs := 0
	var measuring []int64
	for rank, tr := range traces {
		for _, e := range tr.Meta.Epochs {
			p := e.Params
			if p["resync"] == "" {
				if p["pingpongs_asked"] != "" || p["pingpongs_cut"] != "" {
					t.Errorf("rank %d full sync epoch %d carries the resync deadline's params: %v", rank, e.Index, p)
				}
				continue
			}
			if rank == 0 {
				if p["pingpongs_asked"] != "" {
					t.Errorf("rank 0 (the reference) epoch %d counts client ping-pongs: %v", e.Index, p)
				}
				continue
			}
			resyncs++
			syncUS, err := strconv.ParseInt(p["sync_us"], 10, 64)
			if err != nil {
				t.Fatalf("rank %d epoch %d: sync_us %q: %v", rank, e.Index, p["sync_us"], err)
			}
			done, _ := strconv.Atoi(p["pingpongs_done"])
			asked, _ := strconv.Atoi(p["pingpongs_asked"])
			t.Logf("rank %d resync epoch %d: %d µs measuring (%d µs in all), %d of %d ping-pongs, cut %s, bound %s ns",
				rank, e.Index, syncUS, (e.EndNS-e.StartNS)/1000, done, asked, p["pingpongs_cut"], p["bound_ns"])
			measuring = append(measuring, syncUS)
			// the resyncs' own ping-pongs per offset (GCLOCK_RESYNC_PINGPONGS,
			// 16), not the init sync's 50 (its end anchor's algorithm serves
			// the resyncs)
			if asked%e.PingPongs != 0 || e.PingPongs != clocksync.ResyncPingPongs {
				t.Errorf("rank %d resync epoch %d: %d client ping-pongs asked, epoch says %d per offset; want multiples of %d", rank, e.Index, asked, e.PingPongs, clocksync.ResyncPingPongs)
			}
			// past the deadline at most 1 + 3 ping-pongs (the late one and
			// the grace), and one more that may end just before it
			if done < 1 || done > 5 || done >= asked || p["pingpongs_cut"] == "" {
				t.Errorf("rank %d resync epoch %d: %d of %d ping-pongs done, cut %q; want the loop cut short and marked", rank, e.Index, done, asked, p["pingpongs_cut"])
			}
			// the cut knot's bound holds: its true error lies within it
			b, berr := strconv.ParseFloat(p["bound_ns"], 64)
			tkn, kerr := strconv.ParseInt(p["knot_ns"], 10, 64)
			if berr != nil || kerr != nil {
				t.Errorf("rank %d resync epoch %d: no knot bound (bound_ns %q, knot_ns %q)", rank, e.Index, p["bound_ns"], p["knot_ns"])
				continue
			}
			truth := in0.Recorded(tr.Meta.Header.Inject.TrueTime(tkn))
			if miss := math.Abs(e.Model.Global(tkn) - truth); miss > b+knotSlackNS {
				t.Errorf("rank %d resync epoch %d: knot %.0f ns off the truth, beyond its bound of %.0f ns", rank, e.Index, miss, b)
			}
		}
	}
	// Wall time under load stretches each 5 ms sleep; the median epoch
	// stays under one uncut loop (which no epoch can without the deadline).
	if len(measuring) > 0 {
		slices.Sort(measuring)
		if m := measuring[len(measuring)/2]; m >= stallLoopUS {
			t.Errorf("median resync epoch of rank 1: %d µs measuring, want under %d µs (one uncut loop of stalled ping-pongs); all: %v", m, stallLoopUS, measuring)
		}
	}
	if resyncs < 2 {
		t.Errorf("rank 1 has %d resync epochs, want at least 2 (GCLOCK_RESYNC=0.3 over a run of 1.5 s)", resyncs)
	}
}

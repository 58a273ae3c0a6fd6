package main

// Resync epochs (issue 10, docs/explanation/clocksync.md "Resync epochs"): sync epochs
// between MPI_Init and MPI_Finalize, so the offset curve tracemerge
// interpolates has knots every GCLOCK_RESYNC seconds instead of only at
// both ends, and clocks whose drift is not a straight line (NTP slews,
// temperature) stay corrected.
//
// The rule. A sync needs every rank at once; the recorder cannot talk
// whenever it likes. All ranks do meet in the blocking collectives on a
// communicator of all ranks, in the same order. So every epoch (the one of
// MPI_Init too) ends with rank 0 naming, in the epoch's own broadcast, the
// instance of the current such communicator at which the ranks meet next:
// the instance count it expects after the remaining interval at the rate
// it saw. The C shim arms that (communicator, instance); the first
// resync-eligible collective at or after it calls gclockGoResync on every
// rank (cshim/comms.c: eligible are MPI_Barrier and data-carrying
// MPI_Allreduce, Allgather, Alltoall and Reduce_scatter_block, which no
// rank can leave before all entered). There rank 0 decides whether the
// interval has passed: then all run the offset-only resync
// (clocksync.NewResyncAlg: O(log p) ping-pong rounds, slopes kept from the
// previous model) and write an epoch; otherwise it only re-plans the next
// meeting (one broadcast). Before any rate is known (after MPI_Init), every
// communicator of all ranks is armed at instance 0: the first eligible
// collective is the first meeting.

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/trace"
)

/*
#include "gclock.h"
#include "pingpong.h"
*/
import "C"

// defaultResyncS is GCLOCK_RESYNC's default (seconds between knots): a 1
// ppm frequency change over 2 s bends a clock by at most 0.5 µs against
// the chord, a 20 µs, 20 s sine by about 1 µs.
const defaultResyncS = 2.0

// resyncInterval reads GCLOCK_RESYNC (seconds; 0 = off).
func resyncInterval(getenv func(string) string) (float64, error) {
	v := strings.TrimSpace(getenv("GCLOCK_RESYNC"))
	if v == "" {
		return defaultResyncS, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f != f || f > 86400 {
		return 0, fmt.Errorf("GCLOCK_RESYNC=%q: want seconds between resync epochs (0: none, default %g)", v, defaultResyncS)
	}
	return f, nil
}

// resyncState is rank 0's planning state (other ranks only follow).
type resyncState struct {
	interval  float64 // seconds (GCLOCK_RESYNC); 0 = off
	cur       float64 // rank 0: the current interval (adapt.go), s
	adapt     bool    // GCLOCK_RESYNC_ADAPT
	budget    float64 // GCLOCK_RESYNC_BUDGET (share of the run; 0: none)
	pingpongs int     // GCLOCK_RESYNC_PINGPONGS (per offset measurement)
	// deadlineNS: GCLOCK_RESYNC_DEADLINE, a client pair's time for its
	// offsets per 16 ping-pongs an offset (0: no deadline, the default)
	deadlineNS int64
	knots      []clocksync.KnotPoint // this rank's latest knots, oldest first, at most 4 (adapt.go)
	spreads    []float64             // this rank's latest loose knots' spreads (ns), at most knotSpreads: their noise (adapt.go)
	spend      clocksync.ResyncSpend // rank 0: the resyncs' cost so far (adapt.go)
	earliest   float64               // rank 0: no resync before this run time (s since startNS)
	startNS    int64                 // local ns of the first meeting: the budget's run start (not before any event)
	prevUS     int64                 // this rank's latest resync epoch, start to end, µs
	lastEpoch  int64                 // local ns at the end of the latest epoch
	lastSeq    uint32                // instance of the latest meeting
	lastComm   uint64
	lastNS     int64 // local ns of the latest meeting
	epochs     int   // resync epochs written
	meetings   int   // meetings (epochs and re-plans)
	step       int64 // instances from the latest meeting to the next
	// The rate window: the first meeting on lastComm since the latest
	// epoch (instance and local ns).
	winSeq uint32
	winNS  int64
	prior  clocksync.LinearModel
	// slope0 bounds epoch 0's slope error (its bound_slope; the resyncs
	// keep that slope) and kbound holds the sync-path bounds of knots
	// (ns; -1 unknown): resyncSlopeBound.
	slope0 float64
	kbound [2]float64
	// alg is the resync algorithm, made at the first resync epoch and
	// reused (it keeps its communicators).
	alg *clocksync.ResyncAlg
	// failed: a resync epoch failed (on every rank: agree) and meetings
	// stopped; MPI_Finalize then skips its opening resync too.
	failed bool
	// stallNS: GCLOCK_TEST_FAULT=pingpong-stall on world rank 1, the
	// client's sleep inside each ping-pong of a resync epoch (pingpong.c).
	stallNS int64
}

// knotSpreads is how many of a rank's latest loose knots' spreads give
// its knots' noise (resyncState.spreads).
const knotSpreads = 8

// resyncPairNS is the time a client pair of a resync epoch has for its
// offset measurements (ppDeadline): perNS (GCLOCK_RESYNC_DEADLINE) per 16
// ping-pongs an offset, scaled with GCLOCK_RESYNC_PINGPONGS; 0 (no
// deadline) when perNS is 0, the default. 5 ms is what 9 offsets of 16
// ping-pongs at 35 µs take on shared memory (under load on 2 cores a
// ping-pong takes about 36 µs), but over TCP between namespace hosts a
// pair's first offset is always loose (SKaMPI half-widths of 11-37 µs)
// and 5 ms cut most pairs to one offset of a cut loop: knots 8-270 µs
// and, at load, milliseconds off (decisions.md D89, amendment).
func resyncPairNS(perNS int64, pingpongs int) int64 {
	return perNS * int64(max(16, pingpongs)) / 16
}

// finalizeResync runs, at MPI_Finalize before its full sync, one more
// offset-only epoch when resync epochs are armed (collective: every rank
// decides alike from the agreed armed state). The full sync at
// MPI_Finalize takes long over a network (1.2-1.9 s on 4 TCP hosts) and
// its knot is at its end: without a knot at its start the events since
// the last resync were interpolated over the whole sync as well, and on a
// bending clock missed by 1 µs there (TestNetns_ResyncHoldsNonLinearClocksOverTCP).
//
// Only when the latest knot is at least half an interval old on rank 0
// (which decides for all, one broadcast): a shorter stretch is already
// as short as the resyncs make them.
func (r *recorder) finalizeResync() {
	if !r.resyncArmed || r.rs.failed || r.rs.interval <= 0 {
		return
	}
	dec := []int64{0}
	// (GCLOCK_RESYNC's half, not the adapted interval's: at 6.75 s the
	// finalize resync was skipped and the full sync's knot, 0.87 µs off
	// under load, bent the last 2 s)
	if r.rank == 0 && float64(int64(C.gclock_now_ext())-r.rs.lastEpoch)*1e-9 >= r.rs.interval/2 {
		dec[0] = 1
	}
	v, err := bcastInt64s(r.tr, 0, dec)
	if err != nil || len(v) != 1 {
		r.warnf("resync at MPI_Finalize: broadcast of the decision failed: %v", err)
		return
	}
	if v[0] == 0 {
		return
	}
	if err := r.resyncEpoch(0, 0, true); err != nil {
		r.warnf("resync epoch at MPI_Finalize failed: %v", err)
	}
}

// armResync runs after start() on every rank that took part in sync epoch
// 0 (collective): all ranks agree that every one records (a rank that does
// not would never meet the others), then the probe arming starts.
func (r *recorder) armResync(recording bool, ep trace.Epoch) {
	r.rs.lastEpoch = ep.EndNS
	if os.Getenv("GCLOCK_TEST_FAULT") == "pingpong-stall" && r.rank == 1 {
		r.rs.stallNS = 5_000_000
	}
	r.rs.prior = clocksync.LinearModel{Slope: ep.Model.Slope, Intercept: ep.Model.Intercept * 1e-9}
	r.rs.cur = r.rs.interval
	k := clocksync.KnotPoint{T: ep.EndNS, Off: ep.Model.Offset(ep.EndNS)}
	r.rs.knots = []clocksync.KnotPoint{k}
	r.rs.slope0 = paramFloat(ep.Params, "bound_slope", 0)
	b := paramFloat(ep.Params, "bound_ns", -1)
	r.rs.kbound = [2]float64{b, b}
	// With it, every rank's end anchor time: the first resync's expected
	// cost for the budget (an offset-only pass of the same tree, scaled
	// to the resyncs' ping-pongs: clocksync.ResyncSeedCost).
	mine := C.int(encodeArm(recording && r.rs.interval > 0, int64(paramFloat(ep.Params, "end_anchor_us", 0))))
	all := make([]C.int, r.size)
	if rc := C.gclock_t_allgather_int_idle(0, mine, &all[0]); rc != 0 {
		r.warnf("resync: agreement failed (MPI error %d); no resync epochs", int(rc))
		return
	}
	anchorUS := int64(0)
	for _, v := range all {
		on, us := decodeArm(int32(v))
		if !on {
			return // some rank does not record (or GCLOCK_RESYNC=0): no meetings
		}
		anchorUS = max(anchorUS, us)
	}
	if r.rs.adapt && r.rs.budget > 0 && anchorUS > 0 {
		r.rs.spend.Next = clocksync.ResyncSeedCost(float64(anchorUS)*1e-6, r.scfg.PingPongs, r.rs.pingpongs)
		r.rs.earliest = r.rs.spend.Earliest(r.rs.budget)
	}
	if r.size > 1 {
		r.resyncArmed = true
		C.gclock_resync_arm_world(1)
	}
}

// gclockGoResync runs one meeting (see the file comment). It returns the
// instance of the same communicator at which the ranks meet next (low 32
// bits, math.MaxUint32: none) and in bit 32 whether a sync epoch ran.
//
//export gclockGoResync
func gclockGoResync(commID C.uint64_t, seq C.uint32_t) (next C.uint64_t) {
	next = C.uint64_t(math.MaxUint32)
	defer guard("resync", nil)
	n, epoch := rec.resync(uint64(commID), uint32(seq))
	next = C.uint64_t(n)
	if epoch {
		next |= 1 << 32
	}
	return next
}

func (r *recorder) resync(commID uint64, seq uint32) (next uint32, epoch bool) {
	now := int64(C.gclock_now_ext())
	rs := &r.rs
	// Rank 0 decides: [resync now (0/1), instances until the next meeting].
	dec := []int64{0, 0}
	if r.rank == 0 {
		since := float64(now-rs.lastEpoch) * 1e-9
		// The budget (adapt.go): no resync before the run time at which
		// the resyncs so far and two more fit in it. The run starts, for
		// the budget, at the first meeting: an application collective, so
		// not before the first recorded event (the span `make bench`
		// measures the share against).
		if rs.startNS == 0 {
			rs.startNS = now
		}
		wait := rs.earliest - float64(now-rs.startNS)*1e-9
		resyncNow := since >= 0.9*rs.cur && wait <= 0
		due := rs.cur
		if !resyncNow {
			due = max(rs.cur-since, wait, 1e-3)
		}
		// The rate over the window since the first meeting after the
		// latest epoch; the step at most doubles per meeting, so a burst
		// of back-to-back collectives cannot push the next meeting past
		// the end of the run.
		if rs.meetings == 0 || rs.lastComm != commID || seq < rs.winSeq {
			rs.winSeq, rs.winNS = seq, now
		}
		rate := 0.0 // instances per second on this communicator
		if now > rs.winNS && seq > rs.winSeq {
			rate = float64(seq-rs.winSeq) / (float64(now-rs.winNS) * 1e-9)
		}
		step := int64(1)
		if rate > 0 {
			step = max(1, min(int64(rate*due), 2*rs.step+1))
		}
		rs.step = step
		if resyncNow {
			rs.winSeq, rs.winNS = seq, now // a new window after the epoch
		}
		if resyncNow {
			dec[0] = 1
		}
		dec[1] = min(step, 1<<30)
	}
	v, err := bcastInt64s(r.tr, 0, dec)
	if err != nil || len(v) != 2 {
		r.rs.failed = true
		r.warnf("resync: broadcast of the decision failed: %v; no more resync epochs", err)
		return math.MaxUint32, false
	}
	rs.meetings++
	rs.lastComm, rs.lastSeq, rs.lastNS = commID, seq, now
	if v[0] == 1 {
		if err := r.resyncEpoch(commID, seq, false); err != nil {
			r.rs.failed = true
			r.warnf("resync epoch failed: %v; no more resync epochs (MPI_Finalize still syncs)", err)
			return math.MaxUint32, false
		}
		epoch = true
	}
	return nextMeeting(seq, v[1]), epoch
}

// nextMeeting is the instance at which the ranks meet next, step
// instances after seq. The shim compares seq >= next in 32 bits, so a
// meeting past the counter's wrap (after 2^32 collectives on the
// communicator) would make every call until the wrap a meeting (a
// broadcast each); the ranks meet instead just before the wrap, once more
// at the last instance, and from there on as before. math.MaxUint32 is
// the shim's "not armed" and never returned.
func nextMeeting(seq uint32, step int64) uint32 {
	const last = math.MaxUint32 - 1 // the highest instance that can be armed
	n := uint64(seq) + uint64(max(step, 1))
	switch {
	case n <= last:
		return uint32(n)
	case seq < last:
		return last
	default: // seq is last or the one after: the next round, after the wrap
		if r := uint32(n); r != math.MaxUint32 {
			return r
		}
		return 0 // step 1 at last: the next instance cannot be armed, the one after can
	}
}

// pingpongLoop names the ping-pong loop in epoch params: "c" or "go"
// (GCLOCK_PINGPONG=go).
func pingpongLoop(goLoop bool) string {
	if goLoop {
		return "go"
	}
	return "c"
}

// agreeResync is an allgather at the end of a resync epoch (it also
// leaves the ranks together, as a barrier would): every rank's ok, its
// verdict on its knot, its epoch's time up to here and its previous
// epoch's span (µs) in one allgather. It returns whether any rank
// disagreed, whether all were calm, and the slowest rank's times.
func (r *recorder) agreeResync(ok bool, v clocksync.KnotVerdict, costUS, prevUS int64) (anyDisagree, allCalm bool, maxUS, maxPrevUS int64, err error) {
	mine := C.int(encodeAgree(ok, v, costUS, prevUS))
	all := make([]C.int, r.size)
	if rc := C.gclock_t_allgather_int_idle(0, mine, &all[0]); rc != 0 {
		return false, false, 0, 0, fmt.Errorf("agreement after the resync: MPI error %d", int(rc))
	}
	allCalm = true
	for rank, x := range all {
		ok, v, us, prev := decodeAgree(int32(x))
		if !ok {
			return false, false, 0, 0, fmt.Errorf("the resync failed on rank %d", rank)
		}
		anyDisagree = anyDisagree || v == clocksync.KnotDisagree
		allCalm = allCalm && v == clocksync.KnotCalm
		maxUS, maxPrevUS = max(maxUS, us), max(maxPrevUS, prev)
	}
	return anyDisagree, allCalm, maxUS, maxPrevUS, nil
}

// resyncEpoch runs the offset-only resync and writes its epoch.
func (r *recorder) resyncEpoch(commID uint64, seq uint32, atFinalize bool) error {
	if r.rs.alg == nil {
		alg, err := clocksync.NewResyncAlg(r.scfg, r.rs.prior)
		if err != nil {
			return err
		}
		r.rs.alg = alg
	}
	alg := r.rs.alg
	// Every epoch: the algorithm is usually the init sync's end anchor
	// (recorder.epoch), made with the full syncs' GCLOCK_PINGPONGS; set
	// only on an algorithm made here, from 2026-11-28 to 11-29 the resyncs
	// measured with 50 ping-pongs an offset while their epochs said 16.
	alg.SetPingPongs(r.rs.pingpongs)
	// A loose pair (its first offset's half-width over
	// clocksync.ResyncLoose: a network hop) measures its repeats with the
	// full syncs' GCLOCK_PINGPONGS (D84).
	alg.SetLoosePingPongs(max(r.scfg.PingPongs, r.rs.pingpongs))
	alg.SetPrior(r.rs.prior)
	alg.SetPriorSlopeBound(resyncSlopeBound(r.rs))
	t0 := int64(C.gclock_now_ext())
	r.tr.dl.begin(resyncPairNS(r.rs.deadlineNS, r.rs.pingpongs))
	C.gclock_pp_stall(C.int64_t(r.rs.stallNS))
	g, err := alg.SyncClocks(r.tr, r.clock)
	C.gclock_pp_stall(0)
	dl := *r.tr.dl
	r.tr.dl.begin(0)
	// A knot whose pair ran out of time rests on fewer ping-pongs or
	// offsets than a full one: its bound is as wide as they leave it, and
	// it is not trusted as a full knot (ppDeadline): it cannot lengthen
	// the interval, and later knots are not judged against it.
	cut := dl.cut > 0 || dl.stopped > 0
	// This rank's verdict on its new knot (adapt.go), judged before the
	// agreement so that rank 0 can plan with every rank's.
	var m clocksync.LinearModel
	verdict, miss, noise := clocksync.KnotKeep, 0.0, 0.0
	tk := int64(C.gclock_now_ext())
	tSync := tk
	if err == nil {
		m, _ = clocksync.FlattenTo(g, r.clock)
		mod := trace.Model{T0: r.clock.base0, Slope: m.Slope, Intercept: m.Intercept * 1e9}
		// A loose knot (a pair over a network hop that measured several
		// offsets) is judged against its noise, the typical spread of the
		// rank's latest loose knots (D86): over TCP the knots' noise alone
		// disagreed and halved the interval to its floor.
		st, measured := alg.LastKnot()
		if measured && st.Offsets > 1 {
			r.rs.spreads = append(r.rs.spreads, st.Spread*1e9)
			if len(r.rs.spreads) > knotSpreads {
				r.rs.spreads = r.rs.spreads[len(r.rs.spreads)-knotSpreads:]
			}
			noise = clocksync.KnotNoise(r.rs.spreads)
		}
		verdict, miss = clocksync.JudgeKnot(r.rs.knots, clocksync.KnotPoint{T: tk, Off: mod.Offset(tk), Noise: noise})
		if cut && verdict == clocksync.KnotCalm {
			verdict = clocksync.KnotKeep
		}
		// A node member's knot is its leader's measurement (ClockPropSync),
		// whose noise it does not know: the leader, which measured it,
		// judges whether it disagrees; the member can only hold the
		// interval.
		if !measured && r.rank != 0 && verdict == clocksync.KnotDisagree {
			verdict = clocksync.KnotKeep
		}
	}
	// Leave together, as after the full sync (recorder.epoch), and agree:
	// a rank whose resync failed (before talking to anyone) must not stop
	// meeting while the others go on, or they would wait for it inside the
	// next meeting's collective for ever. So every rank says whether it
	// succeeded, and all stop together when one did not; with it, its
	// verdict and its epoch's time.
	anyDisagree, allCalm, costUS, prevUS, aerr := r.agreeResync(err == nil, verdict, ceilUS(tk-t0), r.rs.prevUS)
	if aerr != nil && err == nil {
		err = aerr
	}
	t1 := int64(C.gclock_now_ext())
	if err != nil {
		return err
	}
	r.rs.prevUS = ceilUS(t1 - t0)
	// The budget's account (rank 0 plans): the previous epoch's measured
	// span replaces its estimate; this one is booked at the slowest
	// rank's time up to the agreement or rank 0's own span, the larger.
	costUS = max(costUS, r.rs.prevUS)
	if r.rs.adapt && r.rs.budget > 0 {
		r.rs.spend.Settle(float64(prevUS) * 1e-6)
		r.rs.spend.Book(float64(t0-r.rs.startNS)*1e-9, float64(costUS)*1e-6, r.rs.budget)
		r.rs.earliest = r.rs.spend.Earliest(r.rs.budget)
	}
	if r.rs.adapt && !atFinalize {
		r.rs.cur = clocksync.NextResyncInterval(r.rs.cur, r.rs.interval, anyDisagree, allCalm)
	}
	r.global = g
	r.rs.prior = m
	r.rs.lastEpoch = t1
	kb, kbOK := clocksync.SyncKnotBound(r.tr, g)
	if !kbOK {
		kb.Bound = -1
	}
	if !cut {
		k := clocksync.KnotPoint{T: t1, Off: trace.Model{T0: r.clock.base0, Slope: m.Slope, Intercept: m.Intercept * 1e9}.Offset(t1), Noise: noise}
		r.rs.knots = append(r.rs.knots, k)
		if len(r.rs.knots) > 4 {
			r.rs.knots = r.rs.knots[len(r.rs.knots)-4:]
		}
		r.rs.kbound = [2]float64{r.rs.kbound[1], kb.Bound * 1e9}
	}
	r.rs.epochs++
	r.nextEpoch++
	ep := trace.Epoch{
		Index:     r.nextEpoch - 1,
		Algorithm: alg.Name(),
		StartNS:   t0,
		EndNS:     t1,
		Model:     trace.Model{T0: r.clock.base0, Slope: m.Slope, Intercept: m.Intercept * 1e9},
		PingPongs: r.rs.pingpongs,
		Params: map[string]string{
			"resync":         strconv.Itoa(r.rs.epochs),
			"interval_s":     strconv.FormatFloat(r.rs.interval, 'g', -1, 64),
			"knot_miss_ns":   strconv.FormatFloat(miss, 'f', 1, 64),
			"knot_noise_ns":  strconv.FormatFloat(noise, 'f', 1, 64),
			"trigger_comm":   strconv.FormatUint(commID, 10),
			"trigger_seq":    strconv.FormatUint(uint64(seq), 10),
			"pingpong_token": strconv.FormatBool(r.token),
			"pingpong_loop":  pingpongLoop(r.tr.goLoop),
			"ranks":          strconv.Itoa(r.size),
			// where this rank's span went: the sync's tree (its own pair's
			// ping-pongs and its waits for its partners) and the closing
			// agreement (its wait for the slowest rank), µs
			"sync_us":  strconv.FormatInt(ceilUS(tSync-t0), 10),
			"agree_us": strconv.FormatInt(ceilUS(t1-tk), 10),
		},
	}
	if r.rank == 0 && r.rs.adapt {
		ep.Params["next_interval_s"] = strconv.FormatFloat(r.rs.cur, 'g', 4, 64)
		ep.Params["resync_cost_us"] = strconv.FormatInt(costUS, 10)
		if r.rs.budget > 0 {
			ep.Params["resync_spent_us"] = strconv.FormatFloat(r.rs.spend.Total()*1e6, 'f', 0, 64)
			ep.Params["budget_next_s"] = strconv.FormatFloat(r.rs.earliest, 'f', 3, 64)
			ep.Params["budget_expect_us"] = strconv.FormatFloat(r.rs.spend.Next*1e6, 'f', 0, 64)
			ep.Params["budget_start_ns"] = strconv.FormatInt(r.rs.startNS, 10)
		}
	}
	if atFinalize {
		delete(ep.Params, "trigger_comm")
		delete(ep.Params, "trigger_seq")
		ep.Params["trigger"] = "MPI_Finalize"
	}
	if v := clocksync.BoundParam(clocksync.SyncBound(r.tr, g)); v != "" && kbOK {
		ep.Params["bound_ns"] = v
		ep.Params["knot_at_s"] = strconv.FormatFloat(kb.At, 'f', 9, 64)
		ep.Params["bound_slope"] = strconv.FormatFloat(kb.Slope, 'g', 4, 64)
		setKnotNS(ep.Params, m, r.clock.base0)
	}
	// A node member (ClockPropSync: it measured nothing, its clock is its
	// leader's) may have entered the resync after its leader measured: its
	// knot is that measurement all the same (correct.KnotTime).
	if _, measured := alg.LastKnot(); !measured {
		markCopiedKnot(ep.Params, t0)
	}
	// How this rank's knot between node leaders was chosen (docs/
	// clocksync.md, "Resync epochs"): offsets measured, how many agreed,
	// their spread.
	// The pair deadline (ppDeadline): this rank's client ping-pongs
	// asked and made, and the loops and pairs cut short.
	if dl.asked > 0 {
		ep.Params["pingpongs_done"] = strconv.Itoa(dl.done)
		ep.Params["pingpongs_asked"] = strconv.Itoa(dl.asked)
		ep.Params["pair_deadline_us"] = strconv.FormatInt(dl.pairNS/1000, 10)
	}
	if cut {
		ep.Params["pingpongs_cut"] = strconv.Itoa(dl.cut + dl.stopped)
	}
	if st, ok := alg.LastKnot(); ok {
		if st.Offsets > 1 {
			ep.Params["loose_pingpongs"] = strconv.Itoa(max(r.scfg.PingPongs, r.rs.pingpongs))
		}
		ep.Params["knot_offsets"] = strconv.Itoa(st.Offsets)
		ep.Params["knot_agree"] = strconv.Itoa(st.Agree)
		ep.Params["knot_spread_ns"] = strconv.FormatFloat(st.Spread*1e9, 'f', 1, 64)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		if err := r.w.WriteEpoch(ep); err != nil {
			r.stopRecording(fmt.Errorf("writing resync epoch %d to %s: %w", ep.Index, r.path, err))
		}
	}
	return nil
}

// resyncSlopeBound bounds the error of the slope a resync keeps (epoch
// 0's) against the clock's rate now, for the widening of the resync's
// bounds (clocksync.HCA3Offset.PriorSlopeBound): epoch 0's own slope bound
// plus how far that slope lies from the mean rate between the rank's two
// latest knots, and those knots' bounds over their distance. For a clock
// that drifts linearly the first term holds alone; for one whose rate
// wanders the second follows the wander, as of the latest interval.
func resyncSlopeBound(rs resyncState) float64 {
	s := rs.slope0
	if len(rs.knots) < 2 {
		return s
	}
	k0, k1 := rs.knots[len(rs.knots)-2], rs.knots[len(rs.knots)-1]
	dt := float64(k1.T - k0.T)
	if dt <= 0 || rs.kbound[0] < 0 || rs.kbound[1] < 0 {
		return s
	}
	// offsets in ns over ns: d(offset)/dt is the slope of offset(x)
	mean := (k1.Off - k0.Off) / dt
	return s + math.Abs(rs.prior.Slope-mean) + (rs.kbound[0]+rs.kbound[1])/dt
}

// paramFloat reads a float param, def when missing or malformed.
func paramFloat(p map[string]string, key string, def float64) float64 {
	v, err := strconv.ParseFloat(p[key], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return def
	}
	return v
}

// markCopiedKnot sets params' "knot_copied" to "1" when its knot_ns lies
// before start, the local ns at which this rank entered the epoch: the
// knot is a measurement its node leader made before (correct.KnotTime
// accepts it there); tracemerge would otherwise put the knot at the
// epoch's end, where the copied model's slope error over the delay adds.
func markCopiedKnot(params map[string]string, start int64) {
	k, err := strconv.ParseInt(params["knot_ns"], 10, 64)
	if err == nil && k < start {
		params["knot_copied"] = "1"
	}
}

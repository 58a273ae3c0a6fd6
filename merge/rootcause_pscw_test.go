package merge

import (
	"math"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// rcWin is the window of the PSCW programs: every rank a member.
const rcWin = 0x77

func withWindow(p *rcProg) *rcProg {
	members := make([]int32, p.n)
	for i := range members {
		members[i] = int32(i)
	}
	p.comms = append(p.comms, trace.Comm{ID: rcWin, Local: 1, Kind: "win_create", Members: members})
	return p
}

// pscw simulates one general active target epoch of origin o on target
// t: t posts (MPI_Win_post, returns at once), o starts (MPI_Win_start
// returns 1 after the post was entered: a Late Post wait when o entered
// first), computes 99+extra, completes; t computes 99 and waits
// (MPI_Win_wait returns 1 after o's complete was entered: an Early Wait
// when t entered first). Post and start share call site site, complete
// and wait site+0x20 (one SPMD code path). With lazy, MPI_Win_start
// returns at once and MPI_Win_complete waits for the post instead (as
// MPI libraries may). It returns the simulated Late Post and Early
// Wait.
func (p *rcProg) pscw(o, t int, site uint64, extra int64, lazy bool) (latePost, earlyWait float64) {
	tp, to := p.t[t], p.t[o]
	p.evs[t] = append(p.evs[t], trace.Event{Op: trace.OpWinPost, Comm: 1, Root: -1, Peer: int32(o), Callsite: site,
		EnterNS: tp, ExitNS: tp + 1})
	startExit := max(to, tp) + 1
	if lazy {
		startExit = to + 1
	}
	p.evs[o] = append(p.evs[o], trace.Event{Op: trace.OpWinStart, Comm: 1, Root: -1, Peer: int32(t), Callsite: site,
		EnterNS: to, ExitNS: startExit})
	c := startExit + 99 + extra
	complExit := max(c, tp) + 1
	p.evs[o] = append(p.evs[o], trace.Event{Op: trace.OpWinComplete, Comm: 1, Root: -1, Peer: -1, Callsite: site + 0x20,
		EnterNS: c, ExitNS: complExit})
	w := tp + 1 + 99
	waitExit := max(w, c) + 1
	p.evs[t] = append(p.evs[t], trace.Event{Op: trace.OpWinWait, Comm: 1, Root: -1, Peer: -1, Callsite: site + 0x20,
		EnterNS: w, ExitNS: waitExit})
	latePost = float64(max(0, min(tp, startExit)-to) + max(0, min(tp, complExit)-c))
	earlyWait = float64(max(0, min(c, waitExit)-w))
	p.waits[o] += latePost
	p.waits[t] += earlyWait
	p.t[o], p.t[t] = complExit, waitExit
	return latePost, earlyWait
}

// TestRootCause_PSCWDelaysAreAttributed: 4 ranks, origins 0 and 2 on
// targets 1 and 3, an MPI_Allreduce after each epoch. A target that
// computes Δ longer before its MPI_Win_post makes its origin wait Δ in
// MPI_Win_start (Late Post), and the other pair Δ at the Allreduce (for
// the origin it delayed); an origin that computes Δ longer before its
// MPI_Win_complete makes its target wait Δ in MPI_Win_wait (Early Wait),
// and the other pair Δ at the Allreduce. Every wait is the delay's cost:
// the late rank's region gets all the waiting, within 1 %, the Late Post
// or Early Wait directly, and the PSCW waits are the same as the
// one-sided analysis's.
func TestRootCause_PSCWDelaysAreAttributed(t *testing.T) {
	const delta, iters = 20000, 40
	tests := []struct {
		name       string
		late       int   // the late rank
		postExtra  int64 // extra compute of rank late before MPI_Win_post (a target)
		complExtra int64 // extra compute of rank late before MPI_Win_complete (an origin)
		lazy       bool  // MPI_Win_complete, not MPI_Win_start, waits for the post
		region     string
		wantLP     float64
		wantEW     float64
	}{
		{"LatePost_target1", 1, delta, 0, false, "0x100 → 0x300", delta * iters, 0},
		{"LatePostInComplete_target1", 1, delta, 0, true, "0x100 → 0x300", (delta - 99) * iters, 0}, // 1 in the start, the rest in the complete
		{"EarlyWait_origin2", 2, 0, delta, false, "0x300 → 0x320", 0, delta * iters},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := withWindow(newRCProg(4))
			p.allreduce(0x100)
			lp, ew := 0.0, 0.0
			for it := 0; it < iters; it++ {
				p.compute(func(r int) int64 {
					if r == tc.late {
						return 1000 + tc.postExtra
					}
					return 1000
				})
				for _, pr := range [][2]int{{0, 1}, {2, 3}} {
					extra := int64(0)
					if pr[0] == tc.late {
						extra = tc.complExtra
					}
					a, b := p.pscw(pr[0], pr[1], 0x300, extra, tc.lazy)
					lp += a
					ew += b
				}
				p.allreduce(0x100)
			}
			if lp != tc.wantLP || ew != tc.wantEW {
				t.Fatalf("simulation: Late Post %v, Early Wait %v; want %v, %v", lp, ew, tc.wantLP, tc.wantEW)
			}
			res := p.run(t) // checks that the costs and the unattributed add up to the total
			if !within(res.TotalWaitNS, p.totalWait(), 1e-9) {
				t.Fatalf("total wait %v, simulated %v: %+v", res.TotalWaitNS, p.totalWait(), res)
			}
			if res.LatePostNS != lp || res.EarlyWaitNS != ew {
				t.Errorf("Late Post %v, Early Wait %v; simulated %v, %v", res.LatePostNS, res.EarlyWaitNS, lp, ew)
			}
			rma := p.rma.Result()
			if rma.LatePost.TotalNS != res.LatePostNS || rma.EarlyWait.TotalNS != res.EarlyWaitNS {
				t.Errorf("root causes: Late Post %v, Early Wait %v; the one-sided analysis: %v, %v",
					res.LatePostNS, res.EarlyWaitNS, rma.LatePost.TotalNS, rma.EarlyWait.TotalNS)
			}
			if len(res.Causes) == 0 {
				t.Fatalf("no root cause: %+v", res)
			}
			top := res.Causes[0]
			// All the waiting is the late region's: the partner's PSCW
			// wait, the other pair's Δ at the Allreduce (and, lazy, the
			// partner's 100 there).
			want := p.totalWait()
			if !tc.lazy && want != 3*delta*iters {
				t.Fatalf("simulation: total wait %v, want %v", want, 3*delta*iters)
			}
			if top.Ranks != rankName(tc.late) || top.Region != tc.region || !within(top.CostNS, want, 0.01) {
				t.Errorf("top cause %+v, want rank %d's region %s with cost %v", top, tc.late, tc.region, want)
			}
			if !within(top.DirectNS, lp+ew, 0.01) && !within(top.DirectNS, want, 0.01) {
				t.Errorf("direct cost %v, want the PSCW wait %v (or all, %v)", top.DirectNS, lp+ew, want)
			}
			if res.AttributedNS < 0.99*res.TotalWaitNS {
				t.Errorf("attributed %v of %v", res.AttributedNS, res.TotalWaitNS)
			}
			// The late region is on the critical path every iteration.
			var on *datamodel.CPRegion
			for i := range res.CriticalPath.Regions {
				if r := &res.CriticalPath.Regions[i]; r.Region == tc.region && r.Ranks == rankName(tc.late) {
					on = r
				}
			}
			wantPath := float64(iters) * (1000 + delta)
			if tc.complExtra != 0 {
				wantPath = float64(iters) * (99 + delta)
			}
			if on == nil || !within(on.PathNS, wantPath, 0.01) {
				t.Errorf("critical path %+v: want rank %d's %s with %v", res.CriticalPath.Regions, tc.late, tc.region, wantPath)
			}
			if math.IsNaN(res.AttributedNS) {
				t.Errorf("attributed NaN")
			}
		})
	}
}

func rankName(r int) string { return string(rune('0' + r)) }

// TestRootCause_PSCWGroupsWaitForTheLatestPartner: with groups of two,
// the wait is for the latest partner, and through a chain. Origin 0
// accesses targets 1 and 2 (one MPI_Win_start of two records): target 2
// posts Δ late, so rank 0 waits Δ in its start (Late Post for rank 2, not
// rank 1) and completes Δ late, so rank 1 waits Δ in MPI_Win_wait (Early
// Wait, propagated through rank 0). Target 0 exposed to origins 1 and 2
// (one MPI_Win_post of two records): origin 2 completes Δ late, so rank 0
// waits Δ in MPI_Win_wait (Early Wait for rank 2), and rank 1 Δ at the
// next Allreduce (propagated through rank 0). Either way all the waiting
// is rank 2's late region's, within 1 %.
func TestRootCause_PSCWGroupsWaitForTheLatestPartner(t *testing.T) {
	const delta, iters = 20000, 30
	ev := func(op trace.Op, peer int32, seq uint32, site uint64, enter, exit int64) trace.Event {
		return trace.Event{Op: op, Comm: 1, Root: -1, Peer: peer, Seq: seq, Callsite: site, EnterNS: enter, ExitNS: exit}
	}
	tests := []struct {
		name           string
		epoch          func(p *rcProg) // one iteration's epochs, from the ranks' times
		region         string
		wantLP, wantEW float64
	}{
		{"OriginWithTwoTargets", func(p *rcProg) {
			p.t[2] += delta // target 2 computes Δ more before its post
			t1, t2, t0 := p.t[1], p.t[2], p.t[0]
			p.evs[1] = append(p.evs[1], ev(trace.OpWinPost, 0, 0, 0x300, t1, t1+1))
			p.evs[2] = append(p.evs[2], ev(trace.OpWinPost, 0, 0, 0x300, t2, t2+1))
			se := max(t0, t1, t2) + 1
			p.evs[0] = append(p.evs[0], ev(trace.OpWinStart, 1, 0, 0x300, t0, se), ev(trace.OpWinStart, 2, 1, 0x300, t0, se))
			c := se + 99
			p.evs[0] = append(p.evs[0], ev(trace.OpWinComplete, -1, 0, 0x320, c, c+1))
			for _, r := range []int{1, 2} {
				w := p.t[r] + 100
				p.evs[r] = append(p.evs[r], ev(trace.OpWinWait, -1, 0, 0x320, w, max(w, c)+1))
				p.waits[r] += float64(max(0, c-w))
				p.t[r] = max(w, c) + 1
			}
			p.waits[0] += float64(max(0, max(t1, t2)-t0))
			p.t[0] = c + 1
		}, "0x100 → 0x300", delta * iters, delta * iters},
		{"TargetWithTwoOrigins", func(p *rcProg) {
			t0 := p.t[0]
			p.evs[0] = append(p.evs[0], ev(trace.OpWinPost, 1, 0, 0x300, t0, t0+1), ev(trace.OpWinPost, 2, 1, 0x300, t0, t0+1))
			last := int64(0)
			for _, r := range []int{1, 2} {
				s := p.t[r]
				se := max(s, t0) + 1
				c := se + 99
				if r == 2 {
					c += delta // origin 2 computes Δ more before its complete
				}
				p.evs[r] = append(p.evs[r], ev(trace.OpWinStart, 0, 0, 0x300, s, se), ev(trace.OpWinComplete, -1, 0, 0x320, c, c+1))
				p.waits[r] += float64(max(0, t0-s))
				p.t[r] = c + 1
				last = max(last, c)
			}
			w := t0 + 100
			p.evs[0] = append(p.evs[0], ev(trace.OpWinWait, -1, 0, 0x320, w, max(w, last)+1))
			p.waits[0] += float64(max(0, last-w))
			p.t[0] = max(w, last) + 1
		}, "0x300 → 0x320", 0, delta * iters},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := withWindow(newRCProg(3))
			p.allreduce(0x100)
			for it := 0; it < iters; it++ {
				p.compute(func(int) int64 { return 1000 })
				tc.epoch(p)
				p.allreduce(0x100)
			}
			res := p.run(t)
			if !within(res.TotalWaitNS, p.totalWait(), 1e-9) || res.TotalWaitNS != 2*delta*iters {
				t.Fatalf("total wait %v, simulated %v, want %v", res.TotalWaitNS, p.totalWait(), 2*delta*iters)
			}
			if res.LatePostNS != tc.wantLP || res.EarlyWaitNS != tc.wantEW {
				t.Errorf("Late Post %v, Early Wait %v; want %v, %v", res.LatePostNS, res.EarlyWaitNS, tc.wantLP, tc.wantEW)
			}
			if rma := p.rma.Result(); rma.LatePost.TotalNS != res.LatePostNS || rma.EarlyWait.TotalNS != res.EarlyWaitNS {
				t.Errorf("root causes: Late Post %v, Early Wait %v; the one-sided analysis: %v, %v",
					res.LatePostNS, res.EarlyWaitNS, rma.LatePost.TotalNS, rma.EarlyWait.TotalNS)
			}
			if len(res.Causes) == 0 {
				t.Fatalf("no root cause: %+v", res)
			}
			top := res.Causes[0]
			if top.Ranks != "2" || top.Region != tc.region || !within(top.CostNS, res.TotalWaitNS, 0.01) {
				t.Errorf("top cause %+v, want rank 2's region %s with all the waiting, %v", top, tc.region, res.TotalWaitNS)
			}
			if !within(top.PropagatedNS, delta*iters, 0.01) || len(top.Via) != 1 || top.Via[0].Rank != 0 {
				t.Errorf("top cause %+v: want half of it, %v, propagated via rank 0", top, float64(delta*iters))
			}
		})
	}
}

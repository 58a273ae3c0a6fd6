package merge

import (
	"math"
	"testing"

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
			var on *CPRegion
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

package rma

import (
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

const win = 0x77

// threeRankWindow is a run whose three ranks share one window.
func threeRankWindow() *rundir.Run {
	run := &rundir.Run{WorldSize: 3}
	for r := range 3 {
		m := &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: 3}}
		m.Comms = []trace.Comm{{ID: win, Kind: "win_create", Members: []int32{0, 1, 2}}}
		run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: m})
	}
	return run
}

func ev(rank int32, op trace.Op, peer int32, enter, exit float64) datamodel.GEvent {
	return datamodel.GEvent{Rank: rank, Op: op, CommID: win, Peer: peer, Enter: enter, Exit: exit, Root: -1}
}

// TestStream_WaitStatesAndTransfersOfKnownPatterns: a fence instance, a
// post/start/complete/wait pair and transfers with known times give Wait
// at Fence, Late Post, Early Wait and byte counts computed by hand.
func TestStream_WaitStatesAndTransfersOfKnownPatterns(t *testing.T) {
	put := ev(0, trace.OpPut, 2, 1, 2)
	put.Sent = 8
	get := ev(1, trace.OpGet, 0, 3, 4)
	get.Recv = 16
	null := ev(2, trace.OpPut, trace.PeerNull, 5, 6)
	null.Sent = 4
	for _, c := range []struct {
		name   string
		evs    []datamodel.GEvent
		check  func(r *Result) bool
		expect string
	}{
		{"fence: last enter minus mine, capped at the call",
			[]datamodel.GEvent{ev(0, trace.OpWinFence, -1, 10, 60), ev(1, trace.OpWinFence, -1, 30, 60), ev(2, trace.OpWinFence, -1, 50, 60)},
			func(r *Result) bool {
				return r.FenceInstances == 1 && r.FenceIncomplete == 0 && r.WaitAtFence.Count == 2 && r.WaitAtFence.TotalNS == 60 && r.WaitAtFence.MaxNS == 40
			}, "1 instance, waits 40 and 20"},
		{"fence: an instance some member never reached is incomplete",
			[]datamodel.GEvent{ev(0, trace.OpWinFence, -1, 10, 60), ev(1, trace.OpWinFence, -1, 30, 60)},
			func(r *Result) bool {
				return r.FenceInstances == 0 && r.FenceIncomplete == 1 && r.WaitAtFence.Count == 0
			},
			"0 instances, 1 incomplete"},
		{"PSCW: start before the post waits for it, wait before the complete waits for it",
			[]datamodel.GEvent{ev(0, trace.OpWinStart, 1, 10, 40), ev(1, trace.OpWinPost, 0, 30, 31),
				ev(1, trace.OpWinWait, -1, 45, 56), ev(0, trace.OpWinComplete, -1, 50, 55)},
			func(r *Result) bool {
				return r.AccessEpochs == 1 && r.ExposureEpochs == 1 && r.Unmatched == 0 &&
					r.LatePost.TotalNS == 20 && r.EarlyWait.TotalNS == 5 && len(r.Ranks) == 2 &&
					r.Ranks[0].LatePostNS == 20 && r.Ranks[1].EarlyWaitNS == 5
			}, "Late Post 20 ns (rank 0), Early Wait 5 ns (rank 1)"},
		{"transfers: put and get bytes counted, MPI_PROC_NULL excluded",
			[]datamodel.GEvent{put, get, null},
			func(r *Result) bool {
				return r.Calls == 3 && r.Transfers == 2 && r.Put == 8 && r.Got == 16 && len(r.Windows) == 1 &&
					r.Windows[0].Members == 3 && r.Windows[0].Kind == "win_create" && len(r.List) == 2 &&
					r.List[1].Src == 0 && r.List[1].Dst == 1 && r.List[1].Bytes == 16
			}, "3 calls, 2 transfers, 8 bytes put, 16 got, the get drawn from its target"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewStream(threeRankWindow(), Options{KeepTransfers: 10})
			for i := range c.evs {
				if !s.Wants(c.evs[i].Op) {
					t.Fatalf("Wants(%v) = false for a one-sided op", c.evs[i].Op)
				}
				if err := s.Add(&c.evs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if r := s.Result(); !c.check(r) {
				t.Errorf("want %s, got %+v", c.expect, *r)
			}
		})
	}
}

package merge

import (
	"fmt"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// TestP2POwners_EveryRankOneOwnerThatDecodesIt: every world rank, with a
// file or not, has exactly one owner among the processes that own
// instances, and a rank's owner is the process that decodes its file
// whenever that process is an owner (so its events stay in the process).
func TestP2POwners_EveryRankOneOwnerThatDecodesIt(t *testing.T) {
	for _, tc := range []struct {
		procs   int
		share0  float64
		world   int
		missing map[int]bool
	}{
		{2, 0.5, 8, nil},
		{2, 0, 8, nil},
		{3, 0, 13, map[int]bool{0: true, 5: true}},
		{3, 1, 13, nil},
		{5, 0.3, 40, map[int]bool{39: true, 1: true, 2: true}},
		{4, 0, 3, nil}, // more processes than files
	} {
		t.Run(fmt.Sprintf("K%d-share%g-world%d", tc.procs, tc.share0, tc.world), func(t *testing.T) {
			rn := &rundir.Run{WorldSize: tc.world}
			for r := 0; r < tc.world; r++ {
				if !tc.missing[r] {
					rn.Ranks = append(rn.Ranks, &rundir.RankInput{Rank: r})
				}
			}
			pl := &partPlan{procs: tc.procs, share0: tc.share0}
			if tc.procs >= 3 {
				pl.owner0 = 1
			}
			owner := p2pOwners(pl, rn)
			if len(owner) != tc.world {
				t.Fatalf("%d owners for %d ranks", len(owner), tc.world)
			}
			for r, q := range owner {
				if int(q) < pl.owner0 || int(q) >= tc.procs {
					t.Errorf("rank %d owned by process %d, not one of %d..%d", r, q, pl.owner0, tc.procs-1)
				}
			}
			for p := 0; p < tc.procs; p++ {
				lo, hi := ownedBlock(p, len(rn.Ranks), tc.procs, tc.share0)
				for i := lo; i < hi; i++ {
					if r := rn.Ranks[i].Rank; p >= pl.owner0 && int(owner[r]) != p {
						t.Errorf("rank %d decoded by owner %d but owned by %d", r, p, owner[r])
					}
				}
			}
		})
	}
}

// TestP2PRouter_SendSideGoesToTheReceiversOwner: the decoder sends the
// send side of a message to another owner's rank there (blocking sends,
// Sendrecv half 0, Isend and its completion, a persistent send's init,
// every Start and completion, and its Request_free), nothing else, and
// forgets a request id once it is done (a receive reusing it stays home).
func TestP2PRouter_SendSideGoesToTheReceiversOwner(t *testing.T) {
	// ranks 0-3 on process 1, 4-7 on process 2
	rt := &p2pRouter{owner: []int32{1, 1, 1, 1, 2, 2, 2, 2}, reqs: map[uint64]int32{}, persist: map[uint64]int32{}}
	ev := func(op trace.Op, peer int32, req, seq uint32) *datamodel.GEvent {
		return &datamodel.GEvent{Rank: 3, Op: op, Peer: peer, Req: req, Seq: seq}
	}
	for i, c := range []struct {
		e    *datamodel.GEvent
		want int
	}{
		{ev(trace.OpSend, 4, 0, 0), 2},
		{ev(trace.OpSsend, 2, 0, 0), -1}, // same owner
		{ev(trace.OpSend, trace.PeerNull, 0, 0), -1},
		{ev(trace.OpSend, 99, 0, 0), -1}, // outside the world: the sender's owner counts it
		{ev(trace.OpSendrecv, 5, 0, 0), 2},
		{ev(trace.OpSendrecv, 5, 0, 1), -1}, // the receive half
		{ev(trace.OpRecv, 5, 0, 0), -1},
		{ev(trace.OpIsend, 6, 10, 0), 2},
		{ev(trace.OpIrecv, 6, 11, 0), -1},
		{ev(trace.OpWaitall, 6, 11, 0), -1},
		{ev(trace.OpWaitall, 6, 10, 1), 2},
		{ev(trace.OpWait, 6, 10, 0), -1}, // completed already
		{ev(trace.OpSendInit, 7, 20, 0), 2},
		{ev(trace.OpStart, 7, 20, 0), 2},
		{ev(trace.OpWait, 7, 20, 0), 2},
		{ev(trace.OpStart, 7, 20, 0), 2}, // persistent: still known
		{ev(trace.OpTest, 7, 20, 0), 2},
		{ev(trace.OpRequestFree, 7, 20, 0), 2},
		{ev(trace.OpStart, 7, 20, 0), -1}, // freed
		{ev(trace.OpIssend, 4, 30, 0), 2},
		{ev(trace.OpIrecv, 4, 30, 0), -1}, // the id reused by a receive
		{ev(trace.OpWait, 4, 30, 0), -1},
		{ev(trace.OpIbarrier, 0, 40, 0), -1},
		{ev(trace.OpWait, 0, 0, 0), -1},
		// Request ids wrap: a persistent send keeps its routing while
		// new requests reuse its id.
		{ev(trace.OpSendInit, 7, 50, 0), 2},
		{ev(trace.OpIrecv, 7, 50, 0), -1},
		{ev(trace.OpStart, 7, 50, 0), 2},
		{ev(trace.OpIsend, 5, 50, 0), 2},
		{ev(trace.OpWaitall, 7, 50, 0), 2}, // the persistent send's completion
		{ev(trace.OpWaitall, 5, 50, 1), 2}, // the Isend's
		{ev(trace.OpStart, 7, 50, 0), 2},
		{ev(trace.OpRequestFree, 7, 50, 0), 2},
	} {
		if got := rt.other(c.e); got != c.want {
			t.Errorf("event %d (%v peer %d req %d seq %d): routed to %d, want %d", i, c.e.Op, c.e.Peer, c.e.Req, c.e.Seq, got, c.want)
		}
	}
	if len(rt.reqs) != 0 || len(rt.persist) != 0 {
		t.Errorf("request ids left in the tables: %v, persistent %v", rt.reqs, rt.persist)
	}
}

// TestP2POwner_HoldsStateForItsOwnRanksOnly: an owner's point-to-point
// stream starts with a rank state for each of its own ranks and none for
// the other ranks of the run (they come with their first event, a send to
// one of its ranks); a stream of the whole run starts with every rank's.
func TestP2POwner_HoldsStateForItsOwnRanksOnly(t *testing.T) {
	for _, tc := range []struct {
		procs, world int
		share0       float64
	}{
		{3, 12, 0},
		{5, 40, 0.3},
		{8, 64, 0},
	} {
		t.Run(fmt.Sprintf("K%d-world%d", tc.procs, tc.world), func(t *testing.T) {
			rn := &rundir.Run{WorldSize: tc.world}
			for r := 0; r < tc.world; r++ {
				rn.Ranks = append(rn.Ranks, &rundir.RankInput{Rank: r, Meta: &rundir.RankMeta{}})
			}
			pl := &partPlan{procs: tc.procs, share0: tc.share0, owner0: 1}
			owner := p2pOwners(pl, rn)
			states := func(s *P2PStream) (n int, foreign []int32) {
				for r := range s.ranks.len() {
					if rs := s.ranks.at(int32(r)); rs != nil {
						n++
						if !s.owns(int32(r)) && s.own != nil {
							foreign = append(foreign, int32(r))
						}
					}
				}
				return n, foreign
			}
			if n, _ := states(NewP2PStream(rn, P2POptions{}, nil)); n != tc.world {
				t.Errorf("the whole run's stream: %d rank states, want %d", n, tc.world)
			}
			total := 0
			for me := pl.owner0; me < tc.procs; me++ {
				mine := 0
				for _, q := range owner {
					if int(q) == me {
						mine++
					}
				}
				n, foreign := states(newP2POwner(rn, P2POptions{}, owner, me))
				if n != mine || len(foreign) > 0 {
					t.Errorf("owner %d: %d rank states (others' ranks %v), want its %d ranks only", me, n, foreign, mine)
				}
				total += n
			}
			if total != tc.world {
				t.Errorf("owners hold %d rank states together, want %d", total, tc.world)
			}
		})
	}
}

package merge

import (
	"sort"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// TestP2PStream_PairWaitsAreEachPairsMessagesSummed: receivers that get
// late-sender and late-receiver messages from one sender, from as many
// senders as a rank keeps inline, and from more (the rank's map): every
// culprit -> victim pair's count and sum are its messages' waits, each
// pair once, none from another pair, and the lists are complete.
func TestP2PStream_PairWaitsAreEachPairsMessagesSummed(t *testing.T) {
	const big = 1 << 20 // a rendezvous-sized send: its sender can wait
	for _, tc := range []struct {
		name    string
		senders int // to each of the two receivers
		msgs    int // per sender and receiver
	}{
		{"one sender", 1, 3},
		{"as many senders as a rank keeps inline", pairInline, 2},
		{"more senders than a rank keeps inline", pairInline + 5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const receivers = 2
			n := receivers + tc.senders
			run := &rundir.Run{WorldSize: n}
			for r := 0; r < n; r++ {
				run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: n}}})
			}
			s := NewP2PStream(run, P2POptions{TopN: 1 << 20, RendezvousBytes: big}, nil)
			type pair struct{ culprit, victim int32 }
			wantLS, wantLR := map[pair]datamodel.PairWait{}, map[pair]datamodel.PairWait{}
			add := func(m map[pair]datamodel.PairWait, culprit, victim int32, w float64) {
				p := m[pair{culprit, victim}]
				p.Culprit, p.Victim = culprit, victim
				p.Count++
				p.NS += w
				m[pair{culprit, victim}] = p
			}
			var evs []datamodel.GEvent
			ev := func(rank int32, op trace.Op, peer, tag int32, bytes uint64, enter, exit float64) {
				e := datamodel.GEvent{Rank: rank, Op: op, CommID: trace.CommWorldID, Root: -1, Peer: peer, Tag: tag,
					Enter: enter, Exit: exit, LocalEnter: int64(enter), LocalExit: int64(exit)}
				if op.IsSend() {
					e.Sent = bytes
				} else {
					e.Recv = bytes
				}
				evs = append(evs, e)
			}
			t0 := 0.0
			for m := 0; m < tc.msgs; m++ {
				for dst := int32(0); dst < receivers; dst++ {
					for k := 0; k < tc.senders; k++ {
						src := int32(receivers + k)
						d := float64(1 + int(dst)*97 + k*13 + m*7) // a wait of its own per message
						tag := int32(2 * m)
						// late sender: the receive waits d ns for the send
						ev(dst, trace.OpRecv, src, tag, 8, t0, t0+1000)
						ev(src, trace.OpSend, dst, tag, 8, t0+d, t0+d+10)
						add(wantLS, src, dst, d)
						t0 += 2000
						// late receiver: the rendezvous send waits d ns
						ev(src, trace.OpSend, dst, tag+1, big, t0, t0+1000)
						ev(dst, trace.OpRecv, src, tag+1, big, t0+d, t0+d+1000)
						add(wantLR, dst, src, d)
						t0 += 2000
					}
				}
			}
			sort.SliceStable(evs, func(i, j int) bool { return evs[i].Enter < evs[j].Enter })
			addStream(t, s, evs)
			res := s.Result()
			if want := 2 * receivers * tc.senders * tc.msgs; res.Messages != want {
				t.Fatalf("%d messages matched, want %d", res.Messages, want)
			}
			for _, c := range []struct {
				kind string
				got  []datamodel.PairWait
				want map[pair]datamodel.PairWait
			}{{"late sender", res.LateSender.Pairs, wantLS}, {"late receiver", res.LateReceiver.Pairs, wantLR}} {
				if len(c.got) != len(c.want) {
					t.Errorf("%s: %d pairs, want %d: %+v", c.kind, len(c.got), len(c.want), c.got)
				}
				for _, p := range c.got {
					if w, ok := c.want[pair{p.Culprit, p.Victim}]; !ok || p != w {
						t.Errorf("%s: pair %+v, want %+v", c.kind, p, w)
					}
				}
				for i := 1; i < len(c.got); i++ {
					if c.got[i].NS > c.got[i-1].NS {
						t.Errorf("%s: pairs not largest first: %+v", c.kind, c.got)
						break
					}
				}
			}
		})
	}
}

// TestP2PStream_NoWaitsGiveEmptyPairLists: a run without waits reports
// empty pair lists, not missing ones (JSON [] rather than null).
func TestP2PStream_NoWaitsGiveEmptyPairLists(t *testing.T) {
	run := &rundir.Run{WorldSize: 2}
	for r := 0; r < 2; r++ {
		run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: 2}}})
	}
	s := NewP2PStream(run, P2POptions{}, nil)
	evs := []datamodel.GEvent{
		{Rank: 1, Op: trace.OpSend, CommID: trace.CommWorldID, Root: -1, Peer: 0, Sent: 8, Enter: 0, Exit: 10},
		{Rank: 0, Op: trace.OpRecv, CommID: trace.CommWorldID, Root: -1, Peer: 1, Recv: 8, Enter: 20, Exit: 30},
	}
	addStream(t, s, evs)
	res := s.Result()
	if res.Messages != 1 {
		t.Fatalf("%d messages, want 1", res.Messages)
	}
	if res.LateSender.Pairs == nil || res.LateReceiver.Pairs == nil || len(res.LateSender.Pairs)+len(res.LateReceiver.Pairs) != 0 {
		t.Fatalf("pairs %#v and %#v, want two empty lists", res.LateSender.Pairs, res.LateReceiver.Pairs)
	}
}

// TestP2PStream_PrefetchEndCallChangesNothing: the prefetch stages of an
// event that ends its rank's completion call (p2pPieces' endCall) run
// for ranks out of range, without state, without a call and with an
// open call, and leave the stream as it was: the call then ends as
// without them.
func TestP2PStream_PrefetchEndCallChangesNothing(t *testing.T) {
	run := &rundir.Run{WorldSize: 3}
	for r := 0; r < 2; r++ { // rank 2 has no file, so no state
		run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: 3}}})
	}
	for _, prefetch := range []bool{false, true} {
		s := NewP2PStream(run, P2POptions{}, nil)
		s.ranks.n = 3 // rank 2: a rank below len without state
		evs := []datamodel.GEvent{
			{Rank: 0, Op: trace.OpIrecv, CommID: trace.CommWorldID, Root: -1, Peer: 1, Req: 1, Recv: 8, Enter: 0, Exit: 1},
			{Rank: 1, Op: trace.OpSend, CommID: trace.CommWorldID, Root: -1, Peer: 0, Sent: 8, Enter: 50, Exit: 60},
			{Rank: 0, Op: trace.OpWait, CommID: trace.CommWorldID, Root: -1, Peer: 1, Req: 1, Recv: 8, Enter: 10, Exit: 70},
		}
		addStream(t, s, evs)
		if s.ranks.at(0).cur == nil {
			t.Fatal("rank 0's Wait is not its open call")
		}
		if prefetch {
			for _, r := range []int32{0, 1, 2, 3, 99} { // open call, no call, no state, out of range
				e := datamodel.GEvent{Rank: r, Op: trace.OpBarrier}
				for k := range deepStages {
					s.prefetchEndCall(&e, k)
				}
			}
		}
		s.endCall(0)
		res := s.Result()
		if len(res.Ranks) < 1 || res.Ranks[0].LateSenderNS != 40 || len(res.Ranks[0].WaitedFor) != 1 {
			t.Fatalf("prefetch %v: rank 0 %+v, want a late-sender wait of 40 ns for rank 1", prefetch, res.Ranks)
		}
	}
}

// addStream adds evs to s in order, failing the test at an error.
func addStream(t *testing.T, s datamodel.Sink, evs []datamodel.GEvent) {
	t.Helper()
	for i := range evs {
		if err := s.Add(&evs[i]); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
}

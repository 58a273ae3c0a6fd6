package merge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// lastSyncSearch is lastSync as a search over every communicator of a
// and its partners (the definition that rcRank.topComm shortcuts).
func lastSyncSearch(a, b *rcRank, ea, eb uint64) (uint64, uint64) {
	cbest := math.Inf(-1)
	var ca, cb uint64
	for _, ref := range a.comms {
		c, i := ref.c, int(ref.pos)
		if !c.valid || c.t <= cbest || c.last[i] > ea {
			continue
		}
		j := c.pos(b.rank)
		if j < 0 || c.last[j] > eb {
			continue
		}
		cbest, ca, cb = c.t, c.last[i], c.last[j]
	}
	if h := a.peer(b.rank, false); h != nil {
		best, found := math.Inf(-1), false
		var pa, pb uint64
		for _, y := range h.y {
			if y.mine != 0 && y.mine <= ea && y.theirs <= eb && y.t > best {
				best, pa, pb, found = y.t, y.mine, y.theirs, true
			}
		}
		if found && best >= cbest {
			return pa, pb
		}
	}
	return ca, cb
}

// TestRootCause_LatestCommunicatorShortcutAgreesWithTheSearch drives
// N×N synchronisations of overlapping communicators (times that tie,
// go back, or are NaN; some point-to-point partners) and checks after
// each that lastSync, which takes a rank's latest communicator without
// a search when it is strictly the latest, finds the same last
// synchronisation as a search over every communicator and partner, for
// every pair of ranks and positions before, at and after the
// synchronisations; and that the shortcut was taken most of the time.
func TestRootCause_LatestCommunicatorShortcutAgreesWithTheSearch(t *testing.T) {
	type syncCase struct {
		name           string
		tie, back, nan float64 // probabilities of an instance's time
		peers          bool
	}
	cases := []syncCase{
		{"times increasing", 0, 0, 0, false},
		{"ties between communicators", 0.3, 0, 0, false},
		{"times going back", 0, 0.2, 0, false},
		{"NaN times", 0, 0, 0.05, false},
		{"all of it with partners", 0.2, 0.1, 0.02, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const world = 6
			s := &RootCauseStream{}
			for r := int32(0); r < world; r++ {
				s.rank(r)
			}
			comms := []*rcComm{
				newRCComm([]int32{0, 1, 2, 3, 4, 5}),
				newRCComm([]int32{0, 1, 2}),
				newRCComm([]int32{3, 4, 5}),
				newRCComm([]int32{5, 1, 3}),
				newRCComm([]int32{2, 4}),
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
			now, pos := 100.0, uint64(10)
			fast, total := 0, 0
			for step := 0; step < 3000; step++ {
				c := comms[rng.IntN(len(comms))]
				mem := make([]rcMember, len(c.members))
				now += 1 + float64(rng.IntN(3))
				tm := now
				switch x := rng.Float64(); {
				case x < tc.tie:
					tm = c.t // another communicator may have it too
					if o := comms[rng.IntN(len(comms))]; o.valid {
						tm = o.t
					}
				case x < tc.tie+tc.back:
					tm = now - 50
				case x < tc.tie+tc.back+tc.nan:
					tm = math.NaN()
				}
				for i := range mem {
					pos += uint64(rng.IntN(3))
					mem[i].seg = pos
					mem[i].exit = tm - float64(rng.IntN(2)) // the latest is tm
				}
				if !math.IsNaN(tm) {
					mem[rng.IntN(len(mem))].exit = tm
				}
				s.syncComm(c, mem)
				if tc.peers && rng.Float64() < 0.2 {
					a, b := s.ranks.at(int32(rng.IntN(world))), s.ranks.at(int32(rng.IntN(world)))
					if a != b {
						y := rcSync{pos + 1, pos + 2, now - float64(rng.IntN(20))}
						a.addPeer(b.rank, y)
						b.addPeer(a.rank, rcSync{y.theirs, y.mine, y.t})
					}
				}
				for ia := range s.ranks.len() {
					a := s.ranks.at(int32(ia))
					for ib := range s.ranks.len() {
						b := s.ranks.at(int32(ib))
						if a == b {
							continue
						}
						for _, ea := range []uint64{pos - 5, pos + 5, pos - uint64(rng.IntN(40))} {
							eb := pos + 5 - uint64(rng.IntN(2))*uint64(rng.IntN(40))
							total++
							if c := a.topComm; c != nil && c.t > a.secondT {
								fast++
							}
							ga, gb := s.lastSync(a, b, ea, eb)
							wa, wb := lastSyncSearch(a, b, ea, eb)
							if ga != wa || gb != wb {
								t.Fatalf("step %d: ranks %d, %d at %d, %d: lastSync (%d, %d), the search (%d, %d)",
									step, a.rank, b.rank, ea, eb, ga, gb, wa, wb)
							}
						}
					}
				}
			}
			if tc.name == "times increasing" && fast < total*9/10 {
				t.Errorf("the latest communicator was known for %d of %d look-ups, want most", fast, total)
			}
			t.Log(fmt.Sprintf("%d of %d look-ups with a known latest communicator", fast, total))
		})
	}
}

// TestRCInst_ReuseForgetsItsMembers checks that an instance taken again
// for a later one of its communicator has no member present and counts
// none, also where its generation wraps (members of every older
// generation, 0 for one that never came).
func TestRCInst_ReuseForgetsItsMembers(t *testing.T) {
	cases := []struct {
		name string
		gen  uint32   // the instance's generation before reuse
		mem  []uint32 // its members' generations
	}{
		{"all members came", 7, []uint32{7, 7, 7}},
		{"some members from older instances", 7, []uint32{7, 6, 1, 0}},
		{"the generation wraps", math.MaxUint32, []uint32{math.MaxUint32, 1, 0, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &rcInst{gen: tc.gen, got: len(tc.mem), mem: make([]rcMember, len(tc.mem))}
			for i, g := range tc.mem {
				in.mem[i].gen = g
			}
			in.reuse()
			if in.got != 0 {
				t.Errorf("got %d members after reuse, want 0", in.got)
			}
			for i, m := range in.mem {
				if m.gen == in.gen {
					t.Errorf("member %d (generation %d before) looks present at generation %d", i, tc.mem[i], in.gen)
				}
			}
		})
	}
}

// TestRCOpKinds_AgreeWithTraceOps checks the stream's table of what it
// does per operation against the predicates it replaces, for every
// operation value (an unknown one in a damaged file included) and
// sequence numbers 0 and 1.
func TestRCOpKinds_AgreeWithTraceOps(t *testing.T) {
	cases := []struct {
		name string
		bit  uint8
		want func(op trace.Op, seq uint32) bool
		kind func(k uint8, seq uint32) bool
	}{
		{"a continuation (GEvent.Continuation)", rcOpContinues,
			func(op trace.Op, seq uint32) bool { return op.Continues(seq) },
			func(k uint8, seq uint32) bool { return k&rcOpContinues != 0 && seq != 0 }},
		{"taken by the point-to-point stream (P2PStream.Wants)", rcOpP2P,
			func(op trace.Op, _ uint32) bool { return op.IsPointToPoint() || op.IsNonblockingCollective() },
			func(k uint8, _ uint32) bool { return k&rcOpP2P != 0 }},
		{"matched as an instance (a blocking collective, a fence)", rcOpMatched,
			func(op trace.Op, _ uint32) bool {
				return op.IsCollective() && !op.IsNonblockingCollective() || op == trace.OpWinFence
			},
			func(k uint8, _ uint32) bool { return k&rcOpMatched != 0 }},
		{"a general active target call (isPSCW: afterP2P's pscw)", rcOpPSCW,
			func(op trace.Op, _ uint32) bool {
				return op == trace.OpWinPost || op == trace.OpWinStart || op == trace.OpWinComplete ||
					op == trace.OpWinWait || op == trace.OpWinTest
			},
			func(k uint8, _ uint32) bool { return k&rcOpPSCW != 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := 0
			for i := 0; i < 1<<16; i++ {
				op := trace.Op(i)
				for _, seq := range []uint32{0, 1} {
					if got, want := tc.kind(rcOpKinds[op], seq), tc.want(op, seq); got != want {
						t.Fatalf("%v (%d) seq %d: table says %v, trace's predicates %v", op, i, seq, got, want)
					}
				}
				if rcOpKinds[op]&tc.bit != 0 {
					set++
				}
			}
			if set == 0 {
				t.Fatal("no operation has the kind: the comparison compared nothing")
			}
		})
	}
}

// TestRCInst_MemberCallRecordedOnce feeds the stream the calls of an
// N×N instance of three ranks directly, one member's call twice, and
// checks that the open instance holds each member's enter, exit,
// segment, bytes sent and received and generation as its call gave
// them, counts the repeated member once, and completes (leaves the open
// instances) only when the third member comes.
func TestRCInst_MemberCallRecordedOnce(t *testing.T) {
	members := []int32{0, 1, 2}
	run := &rundir.Run{WorldSize: 3}
	for r := range members {
		m := rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: 3},
			Comms: []trace.Comm{{ID: trace.CommWorldID, Kind: "world", Members: members}}}
		run.Ranks = append(run.Ranks, &rundir.RankInput{Rank: r, Meta: &m})
	}
	s := NewRootCauseStream(run, RootCauseOptions{}, nil)
	call := func(r int32, enter, exit float64, sent, recv uint64) *datamodel.GEvent {
		return &datamodel.GEvent{Rank: r, Op: trace.OpAllreduce, CommID: trace.CommWorldID, CommRank: r, Seq: 4,
			Root: -1, Enter: enter, Exit: exit, Sent: sent, Recv: recv, Callsite: 0x40}
	}
	// an instance before, so that the members' calls are not their
	// ranks' first segments
	for r := range members {
		e := call(int32(r), 1, 2, 8, 8)
		e.Seq, e.Callsite = 3, 0x20
		if err := s.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		ev   *datamodel.GEvent
		got  int // members counted after it (0: the instance completed)
	}{
		{"first member", call(1, 10, 30, 8, 16), 1},
		{"second member", call(0, 12, 31, 24, 32), 2},
		{"the first member's call again", call(1, 13, 33, 40, 48), 2},
		{"last member", call(2, 25, 32, 56, 64), 0},
	}
	want := map[int32]rcMember{}
	for _, st := range steps {
		if err := s.Add(st.ev); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		cc := s.coll[trace.CommWorldID]
		if st.got == 0 {
			if len(cc.open) != 0 || len(cc.free) != 1 {
				t.Fatalf("%s: %d open instances and %d kept, want the instance completed and kept for reuse", st.name, len(cc.open), len(cc.free))
			}
			continue
		}
		if len(cc.open) != 1 {
			t.Fatalf("%s: %d open instances, want 1", st.name, len(cc.open))
		}
		in := cc.open[0]
		if in.got != st.got {
			t.Errorf("%s: %d members counted, want %d", st.name, in.got, st.got)
		}
		r := st.ev.Rank
		if _, seen := want[r]; !seen { // the repeated call changes nothing
			rs := s.ranks.at(r)
			if rs.n < 3 {
				t.Fatalf("%s: rank %d has %d segments, want its call after a region after a call", st.name, r, rs.n)
			}
			want[r] = rcMember{enter: st.ev.Enter, exit: st.ev.Exit, seg: rs.n - 1, sent: st.ev.Sent, recv: st.ev.Recv, gen: in.gen}
		}
		for m, w := range want {
			if got := in.mem[m]; got != w {
				t.Errorf("%s: member %d recorded as %+v, want %+v", st.name, m, got, w)
			}
		}
	}
}

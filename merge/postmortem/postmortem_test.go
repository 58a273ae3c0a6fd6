package postmortem

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// hangRun builds a synthetic run of n ranks that ended without footers:
// ranks 0 and 1 inside MPI_Recv from each other (tag 7), rank crash ended
// by a SIGSEGV outside MPI, the others inside MPI_Allreduce on world,
// instance seq, all killed by the launcher's SIGTERM later.
func hangRun(n, crash int, seq uint32) *rundir.Run {
	members := make([]int32, n)
	for i := range members {
		members[i] = int32(i)
	}
	world := trace.Comm{ID: 1, Local: 0, Kind: "world", Members: members}
	run := &rundir.Run{Dir: "synthetic", JobID: "hang", WorldSize: n}
	for r := 0; r < n; r++ {
		live := &rundir.LiveInfo{Path: "synthetic.live", LastNS: 1_000_000_000 + int64(r),
			LastCall: []*trace.Event{{Op: trace.OpAllreduce, Comm: 0, Seq: seq - 1}}}
		switch {
		case r == crash:
			live.End = &trace.End{Kind: trace.EndSignal, Code: 11, NS: 2_000_000_000, Thread: 0}
		case r < 2:
			live.InFlight = []trace.InFlight{{Op: trace.OpRecv, EnterNS: 1_100_000_000, Comm: 0, Peer: int32(1 - r), Tag: 7,
				Root: trace.NoArg, Peer2: trace.NoArg, Tag2: trace.NoArg}}
			live.End = &trace.End{Kind: trace.EndSignal, Code: 15, Pid: 99, NS: 3_000_000_000, Thread: -1}
		default:
			live.InFlight = []trace.InFlight{{Op: trace.OpAllreduce, EnterNS: 1_450_000_000 + int64(r), Comm: 0, Seq: seq,
				Root: trace.NoArg, Peer: trace.NoArg, Tag: trace.NoArg, Peer2: trace.NoArg, Tag2: trace.NoArg}}
			live.End = &trace.End{Kind: trace.EndSignal, Code: 15, Pid: 99, NS: 3_000_000_000 + int64(r), Thread: -1}
		}
		m := &rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: n, StartNS: 1_000_000_000}, Comms: []trace.Comm{world}, Live: live}
		run.Ranks = append(run.Ranks, &rundir.RankInput{Path: "synthetic", Rank: r, Meta: m})
	}
	return run
}

func TestPostMortem_GroupsThousandsOfRanksAndNamesTheDeadlock(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, crash int
	}{
		{"4096 ranks", 4096, 1000},
		{"4 ranks", 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pm := Of(hangRun(tc.n, tc.crash, 123458), correct.ClockRaw, nil)
			if pm == nil {
				t.Fatal("no post-mortem")
			}
			if f := pm.First; f == nil || f.Rank != tc.crash || f.How != datamodel.EndFatal || f.SignalName != "SIGSEGV" {
				t.Fatalf("first %+v, want rank %d SIGSEGV", f, tc.crash)
			}
			if len(pm.Ends) != tc.n || len(pm.EndGroups) != 2 {
				t.Errorf("%d ends in %d groups, want %d in 2 (the SIGSEGV, the SIGTERMs)", len(pm.Ends), len(pm.EndGroups), tc.n)
			}
			if len(pm.InFlight) != 2 {
				t.Fatalf("%d groups in flight, want 2: %+v", len(pm.InFlight), pm.InFlight)
			}
			ar := pm.InFlight[0]
			if ar.Op != "MPI_Allreduce" {
				ar = pm.InFlight[1]
			}
			want := "ranks 2-" + itoa(tc.crash-1) + ", " + itoa(tc.crash+1) + "-" + itoa(tc.n-1) + ": inside MPI_Allreduce on world, instance 123458, entered 0.450 s"
			if tc.crash == tc.n-1 {
				want = "rank 2: inside MPI_Allreduce on world, instance 123458, entered 0.450 s"
			}
			if !strings.HasPrefix(ar.Text, want) || !strings.Contains(ar.Text, "members that never entered it: rank 0 (in MPI_Recv from 1 tag 7); rank 1 (in MPI_Recv from 0 tag 7)") ||
				!strings.Contains(ar.Text, "rank "+itoa(tc.crash)+" (ended, not inside an MPI call: SIGSEGV)") {
				t.Errorf("allreduce group:\n%s\nwant it to start\n%s", ar.Text, want)
			}
			if len(pm.Deadlocks) != 1 || !strings.HasPrefix(pm.Deadlocks[0].Text,
				"rank 0 in MPI_Recv from 1 tag 7, rank 1 in MPI_Recv from 0 tag 7: deadlock") {
				t.Fatalf("deadlocks %+v", pm.Deadlocks)
			}
			if got := len(pm.Deadlocks[0].Blocked); got != tc.n-3 {
				t.Errorf("%d ranks blocked behind the deadlock, want %d", got, tc.n-3)
			}
			lines := Lines(pm)
			if len(lines) > 10 {
				t.Errorf("%d lines for %d ranks; the section must stay short:\n%s", len(lines), tc.n, strings.Join(lines, "\n"))
			}
			t.Logf("\n%s", strings.Join(lines, "\n"))
		})
	}
}

func TestPostMortem_CleanRunHasNone(t *testing.T) {
	run := hangRun(3, 2, 5)
	for _, ri := range run.Ranks {
		ri.Meta.Footer = &trace.Footer{Reason: "finalize"}
	}
	if pm := Of(run, correct.ClockRaw, nil); pm != nil {
		t.Errorf("a run whose ranks all ended in MPI_Finalize got a post-mortem: %+v", pm)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestPostMortem_FirstIsTheCauseNotTheEarliestSilence(t *testing.T) {
	allreduce := func(enter int64) []trace.InFlight {
		return []trace.InFlight{{Op: trace.OpAllreduce, EnterNS: enter, Comm: 0, Seq: 9,
			Root: trace.NoArg, Peer: trace.NoArg, Tag: trace.NoArg, Peer2: trace.NoArg, Tag2: trace.NoArg}}
	}
	for _, tc := range []struct {
		name      string
		edit      func(run *rundir.Run)
		wantRank  int
		wantHow   string
		wantInfer bool
	}{
		{"abort beats earlier silent ranks", func(run *rundir.Run) {
			for r, ri := range run.Ranks {
				ri.Meta.Live = &rundir.LiveInfo{LastNS: 1_100_000_000, InFlight: allreduce(1_100_000_000)}
				if r == 2 {
					ri.Meta.Live = nil
					ri.Meta.Footer = &trace.Footer{Reason: "abort", EndNS: 1_500_000_000,
						End: &trace.End{Kind: trace.EndAbort, Code: 3, NS: 1_500_000_000, Thread: 0}}
				}
			}
		}, 2, datamodel.EndAbort, false},
		{"a rank that vanished while computing beats ranks killed inside a call", func(run *rundir.Run) {
			for r, ri := range run.Ranks {
				ri.Meta.Live = &rundir.LiveInfo{LastNS: 1_100_000_000, InFlight: allreduce(1_100_000_000)}
				if r == 1 {
					ri.Meta.Live = &rundir.LiveInfo{LastNS: 1_200_000_000}
				}
			}
		}, 1, datamodel.EndKilled, true},
		{"no sidecar, no footer: time unknown, still encodable", func(run *rundir.Run) {
			for _, ri := range run.Ranks {
				ri.Meta.Live = nil
			}
			run.Ranks[0].Meta.Live = &rundir.LiveInfo{LastNS: 1_300_000_000}
		}, 0, datamodel.EndKilled, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := hangRun(4, 3, 9)
			tc.edit(run)
			pm := Of(run, correct.ClockRaw, nil)
			if pm == nil || pm.First == nil {
				t.Fatalf("no first: %+v", pm)
			}
			if f := pm.First; f.Rank != tc.wantRank || f.How != tc.wantHow || f.Inferred != tc.wantInfer {
				t.Errorf("first rank %d %s inferred %v (%s), want rank %d %s inferred %v", f.Rank, f.How, f.Inferred, f.Text, tc.wantRank, tc.wantHow, tc.wantInfer)
			}
			if _, err := json.Marshal(pm); err != nil {
				t.Errorf("not JSON-encodable: %v", err)
			}
		})
	}
}

func TestPostMortem_AMemberThatLeftTheInstanceIsNoDeadlock(t *testing.T) {
	// MPICH, 3 ranks: rank 1 returned from instance 199 and called exit(1);
	// rank 2 had left 199 too and waits in 200; rank 0 still waits in 199
	// for rank 1's part
	run := hangRun(3, 1, 200)
	run.Ranks[1].Meta.Live.End = nil
	run.Ranks[1].Meta.Footer = &trace.Footer{Reason: "exit", EndNS: 1_500_000_000,
		End: &trace.End{Kind: trace.EndExit, Code: 1, NS: 1_500_000_000, Thread: 0}}
	run.Ranks[1].Meta.Live = nil
	run.Ranks[0].Meta.Live.InFlight = []trace.InFlight{{Op: trace.OpAllreduce, EnterNS: 1_400_000_000, Comm: 0, Seq: 199,
		Root: trace.NoArg, Peer: trace.NoArg, Tag: trace.NoArg, Peer2: trace.NoArg, Tag2: trace.NoArg}}
	pm := Of(run, correct.ClockRaw, nil)
	if len(pm.Deadlocks) != 0 {
		t.Errorf("deadlocks %+v; rank 2 had left instance 199, rank 0 waits for rank 1 only", pm.Deadlocks)
	}
	var g199 *datamodel.FlightGroup
	for i := range pm.InFlight {
		if pm.InFlight[i].Instance != nil && *pm.InFlight[i].Instance == 199 {
			g199 = &pm.InFlight[i]
		}
	}
	if g199 == nil || !strings.Contains(g199.Text, "members not inside it: rank 1 (ended") ||
		!strings.Contains(g199.Text, "rank 2 (had left it: inside instance 200)") {
		t.Errorf("instance 199's group: %+v", g199)
	}
	if f := pm.First; f == nil || f.Rank != 1 || f.How != datamodel.EndExit || f.Code == nil || *f.Code != 1 {
		t.Errorf("first %+v", pm.First)
	}
}

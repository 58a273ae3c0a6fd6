package tests

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// TestSelective_PcontrolAndOpsFilter runs progs/pcontrol.c (rounds of
// Barrier, Allreduce and a ring Isend/Irecv/Waitall; the middle third
// paused with MPI_Pcontrol(0) ... MPI_Pcontrol(1)) with several GCLOCK_OPS
// settings: exactly the rounds outside the pause of exactly the selected
// operations are in the trace, two MPI_Pcontrol events per rank, the
// program's result is unchanged, resync meetings go on inside the pause
// (instance counts too: every recorded collective instance is complete),
// and the report says what was left out.
func TestSelective_PcontrolAndOpsFilter(t *testing.T) {
	needSetup(t)
	const np, iters, sleepUS = 3, 30, 3000
	recorded := iters - (2*iters/3 - iters/3) // rounds outside the pause
	args := []string{"30", "3000"}
	plain := mpirun(t, run{NP: np, Prog: "pcontrol", Args: args})
	if plain.Code != 0 {
		t.Fatalf("pcontrol without the preload exited %d:\n%s", plain.Code, plain.Stderr)
	}
	// (MPICH's run prints the same result: compared below too.)
	all := map[trace.Op]int{trace.OpBarrier: recorded, trace.OpAllreduce: recorded, trace.OpIsend: recorded,
		trace.OpIrecv: recorded, trace.OpWaitall: 2 * recorded, trace.OpPcontrol: 2} // Waitall: one event per completed request
	mp := mpis(t)
	for _, tc := range []struct {
		mpi       *mpiImpl
		name, ops string
		want      map[trace.Op]int
		excluded  []string
		warn      bool
	}{
		{mp[0], "pcontrol_only", "", all, nil, false},
		{mp[0], "minus_barrier_p2p", "-MPI_Barrier,-p2p",
			map[trace.Op]int{trace.OpAllreduce: recorded, trace.OpWaitall: 2 * recorded, trace.OpPcontrol: 2},
			[]string{"MPI_Barrier", "MPI_Isend", "MPI_Irecv"}, false},
		{mp[0], "only_allreduce", "Allreduce",
			map[trace.Op]int{trace.OpAllreduce: recorded, trace.OpPcontrol: 2},
			[]string{"MPI_Barrier", "MPI_Waitall", "MPI_Isend"}, false},
		{mp[0], "not_understood", "Allredcue", all, nil, true},
		{mp[1], "pcontrol_only", "", all, nil, false},
		{mp[1], "minus_barrier_p2p", "-MPI_Barrier,-p2p",
			map[trace.Op]int{trace.OpAllreduce: recorded, trace.OpWaitall: 2 * recorded, trace.OpPcontrol: 2},
			[]string{"MPI_Barrier", "MPI_Isend", "MPI_Irecv"}, false},
	} {
		t.Run(tc.mpi.Name+"/"+tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tr")
			env := []string{"GCLOCK_DIR=" + dir, "GCLOCK_RESYNC=0.02", "GCLOCK_RESYNC_BUDGET=0"}
			if tc.ops != "" {
				env = append(env, "GCLOCK_OPS="+tc.ops)
			}
			r := mpirun(t, run{MPI: tc.mpi, NP: np, Preload: true, Prog: "pcontrol", Args: args, Env: env})
			if r.Code != 0 {
				t.Fatalf("pcontrol exited %d:\n%s", r.Code, r.Stderr)
			}
			if r.Stdout != plain.Stdout {
				t.Errorf("output changed by the preload: %q, without %q", r.Stdout, plain.Stdout)
			}
			warnings := 0
			for _, l := range gclockLines(r.Stderr) {
				if strings.Contains(l, "GCLOCK_OPS") {
					warnings++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.warn]; warnings != want {
				t.Errorf("%d GCLOCK_OPS warnings, want %d:\n%s", warnings, want, r.Stderr)
			}
			traces := readTraces(t, dir, np)
			resyncs := 0
			for rank, rt := range traces {
				got := map[trace.Op]int{}
				for _, e := range rt.Events {
					if e.Op == trace.OpResync {
						resyncs++
					}
					if !e.Op.IsRecorder() {
						got[e.Op]++
					}
				}
				for op, n := range tc.want {
					if got[op] != n {
						t.Errorf("rank %d: %d %s events, want %d", rank, got[op], op, n)
					}
				}
				for op, n := range got {
					if _, ok := tc.want[op]; !ok {
						t.Errorf("rank %d: %d %s events, want none", rank, n, op)
					}
				}
			}
			if resyncs == 0 {
				t.Errorf("no resync epoch in the run (GCLOCK_RESYNC=0.02): the test does not show that meetings survive the pause")
			}
			run, err := rundir.Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			res, err := merge.Analyze(run, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			an := res.Analysis
			if an.Incomplete != 0 || an.Clock.Violations != 0 || len(an.Problems) != 0 {
				t.Errorf("%d incomplete instances, %d clock-condition violations, problems %v", an.Incomplete, an.Clock.Violations, an.Problems)
			}
			s := an.Selective
			if s == nil {
				t.Fatal("the analysis says nothing about selective tracing")
			}
			if s.Pauses != np || s.PausedRanks != np || s.OpenAtEnd != 0 || s.LongestNS < float64((iters/3)*sleepUS*1000)/2 {
				t.Errorf("pauses %+v, want one per rank of about %d rounds", s, iters/3)
			}
			if tc.warn != (s.OpsError != "") {
				t.Errorf("ops error %q (want one: %v)", s.OpsError, tc.warn)
			}
			for _, name := range tc.excluded {
				if !strings.Contains(strings.Join(s.Excluded, ","), name) {
					t.Errorf("%s not listed as excluded: %v", name, s.Excluded)
				}
			}
			if tc.want[trace.OpIsend] > 0 {
				p2p, err := merge.AnalyzeP2P(run, merge.P2POptions{Clock: correct.ClockInterp})
				if err != nil {
					t.Fatal(err)
				}
				if p2p.Messages != np*recorded || p2p.UnmatchedSends+p2p.UnmatchedRecvs+p2p.Uncompleted != 0 {
					t.Errorf("point-to-point: %d messages (want %d), unmatched %d/%d, uncompleted %d",
						p2p.Messages, np*recorded, p2p.UnmatchedSends, p2p.UnmatchedRecvs, p2p.Uncompleted)
				}
			}
		})
	}
}

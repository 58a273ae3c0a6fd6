package tests

// The MPI-4 sessions model (docs/explanation/recorder.md "Sessions"): a program that
// starts MPI with MPI_Session_init has no MPI_COMM_WORLD and never calls
// MPI_Init; before, it ran unrecorded and without a word. progs/sessions.c
// runs on MPICH 4 (Open MPI 4.1 has no sessions, and its build of the
// library must not define the wrappers).

import (
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace"
)

const (
	sessionsNP    = 3
	sessionsSteps = 40
)

// sessionsCalls are the MPI-4 functions the library wraps for the sessions
// model.
var sessionsCalls = []string{"MPI_Session_init", "MPI_Session_finalize", "MPI_Comm_create_from_group"}

func TestSessions_RecordedLikeMPIInit(t *testing.T) {
	lib, err := exec.Command("nm", "-D", "--defined-only", openMPI.Lib).Output()
	if err != nil {
		t.Fatalf("nm -D %s: %v", openMPI.Lib, err)
	}
	for _, f := range sessionsCalls {
		if strings.Contains(string(lib), " T "+f+"\n") {
			t.Errorf("the Open MPI 4.1 build defines %s (its mpi.h has no sessions)", f)
		}
	}
	m := mpich(t)
	lib, err = exec.Command("nm", "-D", "--defined-only", m.Lib).Output()
	if err != nil {
		t.Fatalf("nm -D %s: %v", m.Lib, err)
	}
	for _, f := range sessionsCalls {
		if !strings.Contains(string(lib), " T "+f+"\n") {
			t.Errorf("the MPICH build does not wrap %s", f)
		}
	}
	for _, mode := range []string{"session", "init-first", "session-first"} {
		t.Run(mode, func(t *testing.T) { testSessions(t, m, mode) })
	}
}

func testSessions(t *testing.T, m *mpiImpl, mode string) {
	args := []string{mode, fmt.Sprint(sessionsSteps)}
	plain := mpirun(t, run{MPI: m, NP: sessionsNP, Prog: "sessions", Args: args})
	if plain.Code != 0 || !strings.Contains(plain.Stdout, "second session sees 3 ranks") {
		t.Fatalf("sessions %s without the preload: exit %d\n%s\n%s", mode, plain.Code, plain.Stdout, plain.Stderr)
	}
	dir := t.TempDir()
	traced := mpirun(t, run{MPI: m, NP: sessionsNP, Prog: "sessions", Args: args, Preload: true,
		Env: []string{"GCLOCK_DIR=" + dir}})
	if traced.Code != 0 || traced.Stdout != plain.Stdout {
		t.Fatalf("sessions %s under the preload: exit %d, stdout\n%s\nwithout:\n%s\nstderr:\n%s", mode, traced.Code,
			traced.Stdout, plain.Stdout, traced.Stderr)
	}
	for _, l := range gclockLines(traced.Stderr) {
		if !strings.Contains(l, "sync epoch") {
			t.Errorf("unexpected recorder line: %s", l)
		}
	}
	traces := readTraces(t, dir, sessionsNP)
	all := make([]int32, sessionsNP)
	for i := range all {
		all[i] = int32(i)
	}
	var appID, libID uint64
	for rank, rt := range traces {
		meta := rt.Meta
		if meta.Header.Rank != rank || meta.Header.WorldSize != sessionsNP {
			t.Errorf("rank %d: header says rank %d of %d", rank, meta.Header.Rank, meta.Header.WorldSize)
		}
		if meta.Footer == nil || meta.Footer.Reason != "finalize" || meta.Footer.Dropped != 0 {
			t.Errorf("rank %d footer %+v", rank, meta.Footer)
		}
		if len(meta.Epochs) < 2 {
			t.Errorf("rank %d: %d sync epochs, want the start's and the finish's", rank, len(meta.Epochs))
		}
		got := map[trace.Op]int{}
		byComm := map[uint64]map[trace.Op]int{}
		for _, e := range withoutFlush(rt.Events) {
			got[e.Op]++
			c, ok := meta.CommByLocal(e.Comm)
			if !ok {
				t.Errorf("rank %d: %s on comm local %d, which has no definition", rank, e.Op, e.Comm)
				continue
			}
			if byComm[c.ID] == nil {
				byComm[c.ID] = map[trace.Op]int{}
			}
			byComm[c.ID][e.Op]++
		}
		want := map[trace.Op]int{trace.OpIsend: 2 * sessionsSteps, trace.OpIrecv: 2 * sessionsSteps,
			trace.OpWaitall: 4 * sessionsSteps, trace.OpAllreduce: sessionsSteps + 1, trace.OpReduce: 1}
		if rank%2 == 0 {
			want[trace.OpBarrier] = 1
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("rank %d: events per op\n got %v\nwant %v", rank, got, want)
		}
		// The program's two communicators of all ranks (its own session's
		// and the second session's) and the even ranks' one: each has an
		// id every member agrees on.
		var fromGroup []trace.Comm
		for _, c := range meta.Comms {
			if c.Kind == "from_group" {
				fromGroup = append(fromGroup, c)
			}
		}
		wantN := 2
		if rank%2 == 0 {
			wantN = 3
		}
		if len(fromGroup) != wantN {
			t.Errorf("rank %d: %d communicators of kind from_group %v, want %d", rank, len(fromGroup), fromGroup, wantN)
			continue
		}
		if !reflect.DeepEqual(fromGroup[0].Members, all) || !reflect.DeepEqual(fromGroup[len(fromGroup)-1].Members, all) {
			t.Errorf("rank %d: the sessions' communicators have members %v and %v, want %v", rank,
				fromGroup[0].Members, fromGroup[len(fromGroup)-1].Members, all)
		}
		if rank%2 == 0 && !reflect.DeepEqual(fromGroup[1].Members, []int32{0, 2}) {
			t.Errorf("rank %d: the even ranks' communicator has members %v", rank, fromGroup[1].Members)
		}
		a, l := fromGroup[0].ID, fromGroup[len(fromGroup)-1].ID
		if rank == 0 {
			appID, libID = a, l
		} else if a != appID || l != libID {
			t.Errorf("rank %d: communicator ids %#x, %#x; rank 0 has %#x, %#x", rank, a, l, appID, libID)
		}
		if a == l {
			t.Errorf("rank %d: the two sessions' communicators share id %#x", rank, a)
		}
		if n := byComm[l][trace.OpAllreduce]; n != 1 {
			t.Errorf("rank %d: %d MPI_Allreduce on the second session's communicator, want 1", rank, n)
		}
	}
	a := analyzeDir(t, dir)
	if a.Clock.Violations != 0 || len(a.Problems) != 0 {
		t.Errorf("%d clock-condition violations, problems %v", a.Clock.Violations, a.Problems)
	}
	if p := p2pOfDir(t, dir); p.Messages != 2*sessionsSteps*sessionsNP || p.UnmatchedSends != 0 || p.UnmatchedRecvs != 0 {
		t.Errorf("point-to-point: %d messages (want %d), %d sends and %d receives unmatched", p.Messages,
			2*sessionsSteps*sessionsNP, p.UnmatchedSends, p.UnmatchedRecvs)
	}
}

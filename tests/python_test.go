package tests

// Programs whose MPI library arrives by dlopen (issue 11): Python's mpi4py
// loads libmpi through its extension module with RTLD_LOCAL, so the
// preloaded wrappers must find the PMPI entry points among the loaded
// objects. And programs whose MPI binding bypasses MPI_Init are told so.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// pythonMPI is Debian's python3 with python3-mpi4py (the pyenv python3
// first on PATH has no mpi4py).
const pythonMPI = "/usr/bin/python3"

func needMPI4Py(t *testing.T) {
	t.Helper()
	needSetup(t)
	if out, err := exec.Command(pythonMPI, "-c", "import mpi4py; print(mpi4py.__version__)").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import mpi4py (%v: %s); these tests run real Python MPI programs: run `make test` as root "+
			"(scripts/setup.sh installs python3-mpi4py) or `sudo apt-get install -y python3-mpi4py`", pythonMPI, err, out)
	}
}

// outputLines picks the programs' "rank N ..." result lines out of mpirun's
// merged output (lines of different ranks may arrive glued together) and
// sorts them.
func outputLines(s string) string {
	l := regexp.MustCompile(`rank \d+ [^\n]*?(done|sub \d+)`).FindAllString(s, -1)
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// TestPython_MPI4PyUnderMpirunRecordedLikeC: an mpi4py program under mpirun
// is recorded like a C program: the same output, exactly its calls per op,
// the communicator from Comm.Split with an agreed id, every ring message
// matched by the point-to-point pass, no clock-condition violation.
func TestPython_MPI4PyUnderMpirunRecordedLikeC(t *testing.T) {
	needMPI4Py(t)
	const np, iters = 3, 10
	script := filepath.Join(repoRoot, "tests", "progs", "mpi4py_ring.py")
	argv := []string{"mpirun", "-np", fmt.Sprint(np)}
	plain := runCmd(t, t.TempDir(), nil, append(argv, pythonMPI, script, fmt.Sprint(iters))...)
	dir := filepath.Join(t.TempDir(), "tr")
	env := []string{"LD_PRELOAD=" + libPath, "GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}
	targv := append([]string(nil), argv...)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		targv = append(targv, "-x", k)
	}
	traced := runCmd(t, t.TempDir(), env, append(targv, pythonMPI, script, fmt.Sprint(iters))...)
	if plain.Code != 0 || traced.Code != 0 || outputLines(plain.Stdout) != outputLines(traced.Stdout) {
		t.Fatalf("without preload: code %d\n%s\nwith: code %d\n%s\n%s", plain.Code, plain.Stdout, traced.Code, traced.Stdout, traced.Stderr)
	}
	if l := gclockLines(traced.Stderr); len(l) != 0 {
		t.Errorf("recorder warnings: %v", l)
	}
	// comm.send / comm.recv (pickled): MPI_Send and MPI_Mprobe + MPI_Mrecv
	want := map[trace.Op]int{trace.OpAllreduce: 2, trace.OpBarrier: 2, trace.OpIsend: iters, trace.OpIrecv: iters, trace.OpWaitall: 2 * iters,
		trace.OpSend: iters, trace.OpMprobe: iters, trace.OpMrecv: iters}
	for rank, rt := range readTraces(t, dir, np) {
		got := map[trace.Op]int{}
		for _, e := range rt.Events {
			if !e.Op.IsRecorder() {
				got[e.Op]++
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rank %d: events per op %v, want %v", rank, got, want)
		}
		var split *trace.Comm
		for i, c := range rt.Meta.Comms {
			if c.Kind == "split" {
				split = &rt.Meta.Comms[i]
			}
		}
		var members []int32
		for r := rank % 2; r < np; r += 2 {
			members = append(members, int32(r))
		}
		if split == nil || fmt.Sprint(split.Members) != fmt.Sprint(members) || split.ID == 0 {
			t.Errorf("rank %d: Comm.Split's communicator %+v, want members %v with an agreed id", rank, split, members)
		}
	}
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	p2p, err := merge.AnalyzeP2P(run, merge.P2POptions{Clock: correct.ClockInterp})
	if err != nil {
		t.Fatal(err)
	}
	if p2p.Messages != 2*np*iters || p2p.UnmatchedSends != 0 || p2p.UnmatchedRecvs != 0 || p2p.Violations != 0 {
		t.Errorf("point-to-point: %d messages (want %d), unmatched %d/%d, clock violations %d",
			p2p.Messages, 2*np*iters, p2p.UnmatchedSends, p2p.UnmatchedRecvs, p2p.Violations)
	}
	res, err := merge.Analyze(run, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Analysis.Clock.Violations != 0 || len(res.Analysis.Problems) != 0 {
		t.Errorf("collectives: %d clock-condition violations, problems %v", res.Analysis.Clock.Violations, res.Analysis.Problems)
	}
}

// TestPython_SingletonImportUnderPreload: `python3 -c "from mpi4py import
// MPI"` with the library preloaded and no mpirun (a singleton MPI process)
// runs unchanged and leaves a one-rank trace (it crashed with SIGSEGV when
// the shim called its NULL weak PMPI_Init_thread).
func TestPython_SingletonImportUnderPreload(t *testing.T) {
	needMPI4Py(t)
	dir := filepath.Join(t.TempDir(), "tr")
	prog := "from mpi4py import MPI; c = MPI.COMM_WORLD; c.Barrier(); print(c.Get_size(), c.Get_rank())"
	r := runCmd(t, t.TempDir(), []string{"LD_PRELOAD=" + libPath, "GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}, pythonMPI, "-c", prog)
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "1 0" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	rt := readTraces(t, dir, 1)[0]
	n := 0
	for _, e := range rt.Events {
		if e.Op == trace.OpBarrier {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d MPI_Barrier events, want 1: %+v", n, rt.Events)
	}
}

// TestUncoveredBinding_WarnsOnceAtExit: a program that initialises MPI
// through PMPI_Init (as a binding gclock does not wrap would) runs
// unchanged, records nothing, and each rank says so once at exit.
func TestUncoveredBinding_WarnsOnceAtExit(t *testing.T) {
	needSetup(t)
	plain := mpirun(t, run{NP: 2, Prog: "pmpi_only"})
	dir := filepath.Join(t.TempDir(), "tr")
	traced := mpirun(t, run{NP: 2, Preload: true, Prog: "pmpi_only", Env: []string{"GCLOCK_DIR=" + dir}})
	if plain.Code != 0 || traced.Code != 0 || outputLines(plain.Stdout) != outputLines(traced.Stdout) {
		t.Fatalf("without preload: code %d %q; with: code %d %q\n%s", plain.Code, plain.Stdout, traced.Code, traced.Stdout, traced.Stderr)
	}
	n := strings.Count(traced.Stderr, "the recorder never saw MPI_Init")
	if n != 2 {
		t.Errorf("%d warnings for 2 ranks, want one each:\n%s", n, traced.Stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s written although nothing was recorded: %v", dir, listDir(t, dir))
	}
	// A normal program is not warned.
	ok := mpirun(t, run{NP: 2, Preload: true, Prog: "collectives", Env: []string{"GCLOCK_DIR=" + filepath.Join(t.TempDir(), "ok"), "GCLOCK_QUIET=1"}})
	if strings.Contains(ok.Stderr, "never saw MPI_Init") {
		t.Errorf("a program whose MPI_Init was seen is warned:\n%s", ok.Stderr)
	}
}

package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gclock/gclock/trace"
)

// expected is one line of a collectives expect-<rank>.txt file.
type expected struct {
	Op         string
	Label      string
	Root       int32
	Sent, Recv uint64
}

// readExpect reads the calls; "# key value" lines go to notes.
func readExpect(t *testing.T, path string, notes map[string]string) []expected {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("expectations: %v", err)
	}
	defer f.Close()
	var out []expected
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " "); ok && strings.HasPrefix(sc.Text(), "# ") {
			notes[k] = v
			continue
		}
		var e expected
		if _, err := fmt.Sscan(sc.Text(), &e.Op, &e.Label, &e.Root, &e.Sent, &e.Recv); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// wantMembers returns the world ranks of a labelled communicator of the
// collectives program (see progs/collectives.c) as seen by rank.
func wantMembers(label string, rank, np int) []int32 {
	var m []int32
	for r := 0; r < np; r++ {
		switch label {
		case "world", "dup", "dup2", "shared", "cart", "withinfo", "behind":
			m = append(m, int32(r))
		case "half0", "half1":
			if r%2 == rank%2 {
				m = append(m, int32(r))
			}
		case "create":
			if r < (np+1)/2 {
				m = append(m, int32(r))
			}
		case "self":
			if r == rank {
				m = append(m, int32(r))
			}
		}
	}
	return m
}

// TestCollectives_TraceHoldsExactlyTheCalls runs progs/collectives.c (every
// wrapped collective on world, split, dup, create, split_type, a re-dup
// after free, a Cartesian comm, MPI_Comm_dup_with_info, one made through PMPI_Comm_dup
// (unknown to the recorder) and self; in-place variants, a user
// op and datatype, uneven v-variants) and checks the trace against the
// program's own list of calls: op, root, byte counts, sequence numbers,
// comm ids agreed across members, members, and unchanged output.
func TestCollectives_TraceHoldsExactlyTheCalls(t *testing.T) {
	for _, m := range mpis(t) {
		for _, tc := range []struct {
			np     int
			buffer string // small buffers force many mid-run flushes
		}{{2, "16"}, {4, ""}} {
			t.Run(fmt.Sprintf("%s/np%d", m.Name, tc.np), func(t *testing.T) {
				testCollectives(t, m, tc.np, tc.buffer)
			})
		}
	}
}

func testCollectives(t *testing.T, m *mpiImpl, np int, buffer string) {
	expectDir, traceDir := runWithAndWithout(t, m, np, "collectives", buffer)
	traces := readTraces(t, traceDir, np)
	checkCollectives(t, m, traces, expectDir, np)
}

// runWithAndWithout runs prog (which takes the directory for its own
// expect-<rank>.txt files) on np ranks of m without and with the preload
// (GCLOCK_BUFFER=buffer unless empty) and checks that its output is the
// same. It returns the traced run's expect directory and trace directory.
func runWithAndWithout(t *testing.T, m *mpiImpl, np int, prog, buffer string) (expectDir, traceDir string) {
	t.Helper()
	plainDir, tracedDir := t.TempDir(), t.TempDir()
	plain := mpirun(t, run{MPI: m, NP: np, Prog: prog, Args: []string{plainDir}})
	if plain.Code != 0 {
		t.Fatalf("%s without preload exited %d:\n%s", prog, plain.Code, plain.Stderr)
	}
	traceDir = filepath.Join(tracedDir, "tr")
	env := []string{"GCLOCK_DIR=" + traceDir}
	if buffer != "" {
		env = append(env, "GCLOCK_BUFFER="+buffer)
	}
	traced := mpirun(t, run{MPI: m, NP: np, Preload: true, Env: env, Prog: prog, Args: []string{tracedDir}})
	if traced.Code != 0 {
		t.Fatalf("%s under the preload exited %d:\n%s", prog, traced.Code, traced.Stderr)
	}
	if traced.Stdout != plain.Stdout || plain.Stdout == "" {
		t.Errorf("stdout differs with the preload:\nwithout:\n%s\nwith:\n%s", plain.Stdout, traced.Stdout)
	}
	return tracedDir, traceDir
}

func checkCollectives(t *testing.T, m *mpiImpl, traces []rankTrace, expectDir string, np int) {
	labelID := map[string]map[int]uint64{} // label -> rank -> comm id
	job := traces[0].Meta.Header.JobID
	for rank, rt := range traces {
		meta := rt.Meta
		h := meta.Header
		if h.Rank != rank || h.WorldSize != np || h.JobID != job || h.JobID == "" {
			t.Errorf("rank %d header: rank %d size %d job %q (rank 0 job %q)", rank, h.Rank, h.WorldSize, h.JobID, job)
		}
		if h.Timer.Name != defaultTimer(t) || h.MPILib == "" || len(h.Objects) == 0 || len(h.Args) == 0 {
			t.Errorf("rank %d header incomplete: timer %q mpi %q %d objects args %v", rank, h.Timer.Name, h.MPILib, len(h.Objects), h.Args)
		}
		if meta.Footer == nil || meta.Footer.Reason != "finalize" || meta.Footer.Dropped != 0 || meta.Footer.Events != uint64(len(rt.Events)) {
			t.Errorf("rank %d footer %+v, %d events read", rank, meta.Footer, len(rt.Events))
		}
		// init and finalize; between them the resync that opens
		// MPI_Finalize when the init knot is half a resync interval old
		// (a slow start-up under MPICH took that long)
		switch n := len(meta.Epochs); {
		case n == 3 && meta.Epochs[1].Params["trigger"] == "MPI_Finalize":
		case n != 2:
			var second map[string]string
			if n > 1 {
				second = meta.Epochs[1].Params
			}
			t.Errorf("rank %d has %d sync epochs, want 2 (init, finalize) or 3 (and MPI_Finalize's resync); the second's params %v", rank, n, second)
		}
		rt.Events = withoutFlush(rt.Events) // the recorder's own gclock_flush markers are no calls of the program
		notes := map[string]string{}
		want := readExpect(t, filepath.Join(expectDir, fmt.Sprintf("expect-%d.txt", rank)), notes)
		if m == openMPI && notes["handle-reused"] != "1" {
			// The dup/dup2 pair exercises a freed handle coming back;
			// Open MPI hands the freed communicator out again.
			t.Errorf("rank %d: MPI_Comm_dup after MPI_Comm_free did not reuse the handle (%q): the reuse case is not exercised", rank, notes["handle-reused"])
		}
		if len(rt.Events) != len(want) {
			t.Fatalf("rank %d: %d events recorded, program made %d calls", rank, len(rt.Events), len(want))
		}
		exe := h.Objects[0]
		localOf := map[string]uint32{}
		labelOf := map[uint32]string{}
		nextSeq := map[uint32]uint32{}
		for i, ev := range rt.Events {
			w := want[i]
			where := fmt.Sprintf("rank %d event %d (%s on %s)", rank, i, w.Op, w.Label)
			if ev.Op.String() != w.Op || ev.Root != w.Root || ev.Sent != w.Sent || ev.Recv != w.Recv {
				t.Errorf("%s: recorded %s root %d sent %d recv %d; want root %d sent %d recv %d",
					where, ev.Op, ev.Root, ev.Sent, ev.Recv, w.Root, w.Sent, w.Recv)
			}
			if l, ok := localOf[w.Label]; ok && l != ev.Comm {
				t.Errorf("%s: comm local %d, earlier calls on %s used %d", where, ev.Comm, w.Label, l)
			}
			if l, ok := labelOf[ev.Comm]; ok && l != w.Label {
				t.Errorf("%s: comm local %d also used for %s", where, ev.Comm, l)
			}
			localOf[w.Label], labelOf[ev.Comm] = ev.Comm, w.Label
			if ev.Seq != nextSeq[ev.Comm] {
				t.Errorf("%s: seq %d, want %d", where, ev.Seq, nextSeq[ev.Comm])
			}
			nextSeq[ev.Comm] = ev.Seq + 1
			if ev.ExitNS < ev.EnterNS || ev.EnterNS < h.StartNS {
				t.Errorf("%s: times enter %d exit %d start %d", where, ev.EnterNS, ev.ExitNS, h.StartNS)
			}
			if ev.Callsite < exe.Lo || ev.Callsite >= exe.Hi {
				t.Errorf("%s: call site %#x outside the program's text [%#x,%#x) (%s)", where, ev.Callsite, exe.Lo, exe.Hi, exe.Path)
			}
		}
		for label, local := range localOf {
			c, ok := meta.CommByLocal(local)
			if !ok {
				t.Errorf("rank %d: no comm definition for local %d (%s)", rank, local, label)
				continue
			}
			if wm := wantMembers(label, rank, np); !reflect.DeepEqual(c.Members, wm) {
				t.Errorf("rank %d comm %s: members %v, want %v", rank, label, c.Members, wm)
			}
			wantKind := map[string]string{"world": "world", "self": "self", "dup": "dup", "dup2": "dup",
				"half0": "split", "half1": "split", "create": "create", "shared": "split_type", "cart": "cart", "withinfo": "dup", "behind": "unknown"}[label]
			if c.Kind != wantKind {
				t.Errorf("rank %d comm %s: kind %q, want %q", rank, label, c.Kind, wantKind)
			}
			if label == "dup" && c.FreedNS == 0 {
				t.Errorf("rank %d: freed comm dup has no FreedNS", rank)
			}
			if labelID[label] == nil {
				labelID[label] = map[int]uint64{}
			}
			labelID[label][rank] = c.ID
		}
	}
	// Ids: agreed by all members, distinct between distinct communicators.
	owner := map[uint64]string{}
	for label, byRank := range labelID {
		if label == "self" {
			for r, id := range byRank {
				if id != trace.CommSelfID {
					t.Errorf("rank %d: MPI_COMM_SELF id %d, want %d", r, id, trace.CommSelfID)
				}
			}
			continue
		}
		var first uint64
		for r := 0; r < np; r++ {
			id, ok := byRank[r]
			if !ok {
				continue
			}
			if first == 0 {
				first = id
			} else if id != first {
				t.Errorf("comm %s: rank %d has id %#x, another member %#x", label, r, id, first)
			}
		}
		if label == "world" && first != trace.CommWorldID {
			t.Errorf("MPI_COMM_WORLD id %d, want %d", first, trace.CommWorldID)
		}
		if o, dup := owner[first]; dup {
			t.Errorf("comms %s and %s share id %#x", o, label, first)
		}
		owner[first] = label
	}
	// Matching: instance n of a comm is the same op and root on all members.
	type key struct {
		id  uint64
		seq uint32
	}
	inst := map[key]trace.Event{}
	for rank, rt := range traces {
		for _, ev := range rt.Events {
			c, _ := rt.Meta.CommByLocal(ev.Comm)
			if c == nil || c.ID == trace.CommSelfID {
				continue
			}
			k := key{c.ID, ev.Seq}
			if o, ok := inst[k]; ok && (o.Op != ev.Op || o.Root != ev.Root) {
				t.Errorf("rank %d: comm %#x instance %d is %s root %d, another member recorded %s root %d",
					rank, c.ID, ev.Seq, ev.Op, ev.Root, o.Op, o.Root)
			}
			inst[k] = ev
		}
	}
}

// TestPreload_InertOutsideMPI: loaded into /bin/true, a shell and mpirun
// itself, the library changes nothing and writes nothing.
func TestPreload_InertOutsideMPI(t *testing.T) {
	needSetup(t)
	dir := t.TempDir()
	pre := []string{"LD_PRELOAD=" + libPath}
	if r := runCmd(t, dir, pre, "/bin/true"); r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
		t.Errorf("/bin/true under the preload: code %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCmd(t, dir, pre, "/bin/sh", "-c", "echo hello; exit 3"); r.Code != 3 || r.Stdout != "hello\n" || r.Stderr != "" {
		t.Errorf("sh under the preload: code %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if files := listDir(t, dir); len(files) != 0 {
		t.Errorf("non-MPI processes under the preload left files: %v", files)
	}

	// LD_PRELOAD on mpirun itself: mpirun, orted and the ranks all load it.
	plain := mpirun(t, run{NP: 2, Prog: "exitcode", Args: []string{"exit", "0"}})
	runDir := t.TempDir()
	outer := mpirun(t, run{NP: 2, Outer: true, Prog: "exitcode", Args: []string{"exit", "0"}, Dir: runDir,
		Env: []string{"GCLOCK_QUIET=1"}})
	if outer.Code != 0 || outer.Stdout != plain.Stdout {
		t.Errorf("LD_PRELOAD=lib mpirun: code %d stdout %q (without: %q)\n%s", outer.Code, outer.Stdout, plain.Stdout, outer.Stderr)
	}
	if g := gclockLines(outer.Stderr); len(g) != 0 {
		t.Errorf("unexpected recorder messages: %q", g)
	}
	// Only the two ranks write, into ./gclock-trace/<job>/.
	files, _ := filepath.Glob(filepath.Join(runDir, "gclock-trace", "*", "rank-*.gct"))
	if len(files) != 2 {
		t.Errorf("want 2 rank files under %s/gclock-trace/<job>/, found %v (all: %v)", runDir, files, listDir(t, runDir))
	} else {
		readTraces(t, filepath.Dir(files[0]), 2)
	}

	// GCLOCK_DISABLE=1: fully inert in an MPI program too.
	offDir := t.TempDir()
	off := mpirun(t, run{NP: 2, Preload: true, Prog: "exitcode", Args: []string{"exit", "0"}, Dir: offDir,
		Env: []string{"GCLOCK_DISABLE=1"}})
	if off.Code != 0 || off.Stdout != plain.Stdout || len(gclockLines(off.Stderr)) != 0 {
		t.Errorf("GCLOCK_DISABLE=1: code %d stdout %q stderr %q", off.Code, off.Stdout, off.Stderr)
	}
	if files := listDir(t, offDir); len(files) != 0 {
		t.Errorf("GCLOCK_DISABLE=1 left files: %v", files)
	}
}

// TestUnwritableDir_AppCompletesWithOneWarningPerRank: when the trace
// directory cannot be created the program's results are unchanged and
// every rank says so once.
func TestUnwritableDir_AppCompletesWithOneWarningPerRank(t *testing.T) {
	needSetup(t)
	const np = 2
	expectDir := t.TempDir()
	plain := mpirun(t, run{NP: np, Prog: "collectives", Args: []string{expectDir}})
	for _, dir := range []string{"/proc/gclock-no-such-dir/x", "/dev/null/traces"} {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			r := mpirun(t, run{NP: np, Preload: true, Prog: "collectives", Args: []string{expectDir},
				Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
			if r.Code != 0 || r.Stdout != plain.Stdout {
				t.Fatalf("code %d, stdout %q (without preload %q)\n%s", r.Code, r.Stdout, plain.Stdout, r.Stderr)
			}
			lines := gclockLines(r.Stderr)
			if len(lines) != np {
				t.Fatalf("want one warning per rank (%d), got %d:\n%s", np, len(lines), strings.Join(lines, "\n"))
			}
			for rank := 0; rank < np; rank++ {
				n := 0
				for _, l := range lines {
					if strings.HasPrefix(l, "gclock: rank "+strconv.Itoa(rank)+": ") && strings.Contains(l, dir[:10]) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("rank %d: %d warnings naming the directory, want 1:\n%s", rank, n, strings.Join(lines, "\n"))
				}
			}
		})
	}
}

// TestFullDisk_AppCompletesWithWarnings: the trace directory is on a file
// system with too little room (a 1 MiB tmpfs: less than one thread
// buffer's sidecar region, less than both ranks' traces). Before, a store
// to a sidecar page the file system could not back killed the rank with
// SIGBUS. Now the program's results and exit code are those of the run
// without the preload; every rank says once that its buffers are not
// durable, and at least one rank stops recording with a warning when its
// rank file cannot grow.
func TestFullDisk_AppCompletesWithWarnings(t *testing.T) {
	needSetup(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mounting a 1 MiB tmpfs on %s (this test needs root): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	const np = 2
	args := []string{"300000"}
	plain := mpirun(t, run{NP: np, Prog: "loopsum", Args: args})
	if plain.Code != 0 || !strings.Contains(plain.Stdout, "300000 of 300000 calls right") {
		t.Fatalf("without preload: code %d, stdout %q", plain.Code, plain.Stdout)
	}
	r := mpirun(t, run{NP: np, Preload: true, Prog: "loopsum", Args: args,
		Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
	if r.Code != plain.Code || r.Stdout != plain.Stdout {
		t.Fatalf("with preload on a full file system: code %d, stdout %q (without %d, %q)\n%s",
			r.Code, r.Stdout, plain.Code, plain.Stdout, r.Stderr)
	}
	lines := gclockLines(r.Stderr)
	stopped := 0
	for rank := 0; rank < np; rank++ {
		prefix := "gclock: rank " + strconv.Itoa(rank) + ": "
		reserve := 0
		for _, l := range lines {
			if !strings.HasPrefix(l, prefix) {
				continue
			}
			if strings.Contains(l, "cannot reserve") && strings.Contains(l, dir) {
				reserve++
			}
			if strings.Contains(l, "recording stopped") {
				stopped++
			}
		}
		if reserve != 1 {
			t.Errorf("rank %d: %d warnings about the sidecar, want 1:\n%s", rank, reserve, strings.Join(lines, "\n"))
		}
	}
	if stopped == 0 {
		t.Errorf("no rank said it stopped recording, though the traces cannot fit:\n%s", strings.Join(lines, "\n"))
	}
}

// runTracedLikePlain runs prog on np ranks without and with the preload
// (GCLOCK_DIR a fresh directory, returned), and fails unless both exit 0
// with the same output lines (sorted: forked or spawned children print in
// any order).
func runTracedLikePlain(t *testing.T, np int, prog string, args ...string) string {
	t.Helper()
	plain := mpirun(t, run{NP: np, Prog: prog, Args: args})
	dir := filepath.Join(t.TempDir(), "tr")
	r := mpirun(t, run{NP: np, Preload: true, Prog: prog, Args: args,
		Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
	if plain.Code != 0 || r.Code != 0 || sortedLines(r.Stdout) != sortedLines(plain.Stdout) {
		t.Fatalf("without preload: code %d stdout %q; with: code %d stdout %q\n%s",
			plain.Code, plain.Stdout, r.Code, r.Stdout, r.Stderr)
	}
	return dir
}

// countOp counts the events of op.
func countOp(evs []trace.Event, op trace.Op) int {
	k := 0
	for _, e := range evs {
		if e.Op == op {
			k++
		}
	}
	return k
}

// TestFork_ChildWritesNothing: a rank forks after MPI_Init and the child
// ends with exit(0), which runs the atexit handlers. The child is not the
// rank: its exit must not write into the rank's trace (before, it wrote
// the events buffered at the fork a second time). The output equals the
// untraced run's and each rank's trace holds exactly its 2N calls.
func TestFork_ChildWritesNothing(t *testing.T) {
	needSetup(t)
	const np, n = 2, 1000
	dir := runTracedLikePlain(t, np, "forkchild", strconv.Itoa(n))
	for rank, rt := range readTraces(t, dir, np) {
		if calls := countOp(rt.Events, trace.OpAllreduce); calls != 2*n {
			t.Errorf("rank %d: %d MPI_Allreduce events, want %d (the child's exit wrote into the trace?)", rank, calls, 2*n)
		}
		if rt.Meta.Footer == nil || rt.Meta.Footer.Events != uint64(len(rt.Events)) {
			t.Errorf("rank %d: footer %+v for %d events", rank, rt.Meta.Footer, len(rt.Events))
		}
	}
}

// TestFork_BeforeMPIInit_ChildRunsUnrecorded: a program that forks
// (without exec) before MPI_Init; parent and child each initialise MPI as
// a singleton. The child has none of the Go runtime's threads (they start
// when the library loads): before, its MPI_Init waited for them forever.
// Now the child runs unrecorded and says so once, the parent is recorded,
// and the output is the untraced run's.
func TestFork_BeforeMPIInit_ChildRunsUnrecorded(t *testing.T) {
	needSetup(t)
	prog := openMPI.prog(t, "forkchild")
	args := []string{prog, "100", "before"}
	plain := runCmd(t, t.TempDir(), nil, args...)
	tr := filepath.Join(t.TempDir(), "tr")
	r := runCmd(t, t.TempDir(), []string{"LD_PRELOAD=" + libPath, "GCLOCK_DIR=" + tr, "GCLOCK_QUIET=1"}, args...)
	if plain.Code != 0 || r.Code != 0 || sortedLines(r.Stdout) != sortedLines(plain.Stdout) ||
		!strings.Contains(plain.Stdout, "child status 0") {
		t.Fatalf("without preload: code %d stdout %q; with: code %d stdout %q\n%s",
			plain.Code, plain.Stdout, r.Code, r.Stdout, r.Stderr)
	}
	warned := 0
	for _, l := range gclockLines(r.Stderr) {
		if strings.Contains(l, "was forked, without exec") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings about the forked child, want 1:\n%s", warned, r.Stderr)
	}
	rt := readTraces(t, tr, 1)[0]
	if rt.Meta.Footer == nil || len(rt.Events) != 100 {
		t.Errorf("the parent's trace: footer %+v, %d events (want 100 MPI_Allreduce)", rt.Meta.Footer, len(rt.Events))
	}
}

// TestChdirBeforeInit_RelativePreloadFindsItsGoHalf: LD_PRELOAD names the
// library relatively (build/libgclock.so, from the repository) and the
// program changes its directory before MPI_Init, where the library loads
// its Go half from its own directory: that directory was taken as given
// ("build", now relative to the wrong place) and nothing was recorded.
// It is made absolute when the library loads.
func TestChdirBeforeInit_RelativePreloadFindsItsGoHalf(t *testing.T) {
	needSetup(t)
	rel, err := filepath.Rel(repoRoot, libPath)
	if err != nil || filepath.IsAbs(rel) {
		t.Fatalf("%s relative to %s: %q, %v", libPath, repoRoot, rel, err)
	}
	dir := filepath.Join(t.TempDir(), "tr")
	r := mpirun(t, run{NP: 2, Prog: "chdir", Args: []string{t.TempDir(), "before"}, Dir: repoRoot,
		Env: []string{"LD_PRELOAD=" + rel, "GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
	if r.Code != 0 || r.Stdout != "sum 1\n" || len(gclockLines(r.Stderr)) != 0 {
		t.Fatalf("code %d stdout %q\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for rank, rt := range readTraces(t, dir, 2) {
		if rt.Meta.Footer == nil || len(rt.Events) != 100 {
			t.Errorf("rank %d: footer %+v, %d events (want 100 MPI_Allreduce)", rank, rt.Meta.Footer, len(rt.Events))
		}
	}
}

// TestChdir_TraceAndSidecarsWhereTheProgramStarted: a program that changes
// its working directory after MPI_Init, with the default relative
// GCLOCK_DIR: the rank files are complete in ./gclock-trace/<job>/ of the
// directory it started in, and their sidecars are removed at the end
// (before, they were removed by the relative name, in the new directory,
// and stayed behind).
func TestChdir_TraceAndSidecarsWhereTheProgramStarted(t *testing.T) {
	needSetup(t)
	start, elsewhere := t.TempDir(), t.TempDir()
	r := mpirun(t, run{NP: 2, Preload: true, Prog: "chdir", Args: []string{elsewhere}, Dir: start,
		Env: []string{"GCLOCK_QUIET=1"}})
	if r.Code != 0 || r.Stdout != "sum 1\n" {
		t.Fatalf("code %d stdout %q\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if files := listDir(t, elsewhere); len(files) != 0 {
		t.Errorf("files in the directory the program moved to: %v", files)
	}
	files := listDir(t, start)
	var jobs []string
	for _, f := range files {
		if strings.HasSuffix(f, trace.LiveSuffix) {
			t.Errorf("sidecar left behind: %s", f)
		}
		if strings.HasSuffix(f, trace.RankFileName(0)) {
			jobs = append(jobs, filepath.Dir(f))
		}
	}
	if len(jobs) != 1 {
		t.Fatalf("want one job directory holding rank-00000.gct under %s, found %v (all: %v)", start, jobs, files)
	}
	dir := jobs[0]
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(start, dir)
	}
	for rank, rt := range readTraces(t, dir, 2) {
		if rt.Meta.Footer == nil || rt.Meta.Footer.Reason != "finalize" || len(rt.Events) != 100 {
			t.Errorf("rank %d: footer %+v, %d events (want 100 MPI_Allreduce)", rank, rt.Meta.Footer, len(rt.Events))
		}
	}
}

// TestSpawn_ChildJobInItsOwnDirectory: a job started by MPI_Comm_spawn
// with an explicit GCLOCK_DIR writes into GCLOCK_DIR/spawned-<job>/; before,
// its rank-00000.gct replaced the spawning job's (tracemerge then refused
// the directory: "mixes runs"). The parent's traces hold exactly their
// calls, the child's its own, and the output is the untraced run's.
func TestSpawn_ChildJobInItsOwnDirectory(t *testing.T) {
	needSetup(t)
	const np, n = 2, 100
	dir := runTracedLikePlain(t, np, "spawn", strconv.Itoa(n))
	parent := readTraces(t, dir, np)
	for rank, rt := range parent {
		if got := countOp(rt.Events, trace.OpAllreduce); got != 2*n || rt.Meta.Footer == nil {
			t.Errorf("parent rank %d: %d MPI_Allreduce events (want %d), footer %+v", rank, got, 2*n, rt.Meta.Footer)
		}
	}
	subs, _ := filepath.Glob(filepath.Join(dir, "spawned-*"))
	if len(subs) != 1 {
		t.Fatalf("want one spawned-<job> directory in %s, found %v (all: %v)", dir, subs, listDir(t, dir))
	}
	child := readTraces(t, subs[0], 1)
	if got := countOp(child[0].Events, trace.OpAllreduce); got != n/2 {
		t.Errorf("spawned rank 0: %d MPI_Allreduce events, want %d", got, n/2)
	}
	if child[0].Meta.Header.JobID == parent[0].Meta.Header.JobID {
		t.Errorf("the spawned job has the parent's job id %q", child[0].Meta.Header.JobID)
	}
}

// TestCrash_ApplicationHandlerStillRuns: an application that installs its
// own SIGSEGV handler before MPI_Init keeps it under the preload. Before,
// the shim reset the crash signals to SIG_DFL around PMPI_Init, so Open MPI
// installed its own handler where it otherwise keeps the application's:
// the handler never ran, its exit code 42 became a death by SIGSEGV.
func TestCrash_ApplicationHandlerStillRuns(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			plain := mpirun(t, run{MPI: m, NP: 2, Prog: "apphandler"})
			r := mpirun(t, run{MPI: m, NP: 2, Preload: true, Prog: "apphandler",
				Env: []string{"GCLOCK_DIR=" + filepath.Join(t.TempDir(), "tr"), "GCLOCK_QUIET=1"}})
			const said = "apphandler: caught SIGSEGV"
			if !strings.Contains(plain.Stderr, said) || plain.Code == 0 {
				t.Fatalf("without preload: code %d, the handler did not run\n%s", plain.Code, plain.Stderr)
			}
			// The launcher's exit code is the handler's 42 or, from
			// hydra now and then, 9 (the other rank killed): compare
			// that the handler ran, and that the job failed.
			if r.Code == 0 || !strings.Contains(r.Stderr, said) {
				t.Fatalf("with preload: code %d (without %d); the application's handler said %q: %v\n%s",
					r.Code, plain.Code, said, strings.Contains(r.Stderr, said), r.Stderr)
			}
		})
	}
}

// TestExitInsideRecorderMPICall_NoHang: the MPI library ends the process
// with exit() inside an MPI call the recorder makes in Go (here sync epoch
// 0 of MPI_Init; GCLOCK_TEST_FAULT=exit stands for a fatal error on the
// private communicator). The exit handlers call into Go again on that
// thread; the job must end with the exit code, not hang.
func TestExitInsideRecorderMPICall_NoHang(t *testing.T) {
	needSetup(t)
	dir := filepath.Join(t.TempDir(), "tr")
	r := mpirun(t, run{NP: 2, Preload: true, Prog: "loopsum", Args: []string{"1000"},
		Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "GCLOCK_TEST_FAULT=exit"}})
	if r.Code != 3 || strings.Contains(r.Stdout, "calls right") {
		t.Fatalf("code %d (want 3, the exit's), stdout %q\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestExitCodes_PassThrough: exit status, MPI_Abort's code and a program
// that never calls MPI_Finalize behave as without the recorder; the last
// still leaves a complete, readable trace (flushed at exit).
func TestExitCodes_PassThrough(t *testing.T) {
	needSetup(t)
	for _, tc := range []struct{ mode, code string }{{"exit", "3"}, {"abort", "7"}, {"nofinalize", "0"}, {"nofinalize", "5"}} {
		t.Run(tc.mode+tc.code, func(t *testing.T) {
			args := []string{tc.mode, tc.code}
			plain := mpirun(t, run{NP: 2, Prog: "exitcode", Args: args})
			dir := filepath.Join(t.TempDir(), "tr")
			traced := mpirun(t, run{NP: 2, Preload: true, Prog: "exitcode", Args: args, Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
			if plain.Code != traced.Code || plain.Stdout != traced.Stdout {
				t.Fatalf("without preload: code %d stdout %q; with: code %d stdout %q\n%s",
					plain.Code, plain.Stdout, traced.Code, traced.Stdout, traced.Stderr)
			}
			if tc.mode == "exit" && plain.Code != 3 || tc.mode == "abort" && plain.Code != 7 {
				t.Errorf("%s %s: mpirun exit code %d", tc.mode, tc.code, plain.Code)
			}
			if tc.mode == "abort" {
				// Rank 0 aborts: its buffered events are written first.
				r, err := trace.Open(filepath.Join(dir, trace.RankFileName(0)))
				if err != nil {
					t.Fatalf("rank 0's trace after MPI_Abort: %v", err)
				}
				defer r.Close()
				evs, err := r.ReadAll()
				if f := r.Meta().Footer; err != nil || f == nil || f.Reason != "abort" || len(evs) != 6 {
					t.Errorf("rank 0 after MPI_Abort: footer %+v, %d events (want 6), err %v", f, len(evs), err)
				}
				return
			}
			if tc.mode != "nofinalize" {
				return
			}
			for rank, rt := range readTraces(t, dir, 2) {
				if rt.Meta.Footer == nil || rt.Meta.Footer.Reason != "exit" {
					t.Errorf("rank %d: footer %+v, want reason exit", rank, rt.Meta.Footer)
				}
				if len(rt.Events) != 6 {
					t.Errorf("rank %d: %d events, want 6 (5 Allreduce + Barrier)", rank, len(rt.Events))
				}
			}
		})
	}
}

// TestCrash_MPIBacktraceKeptAndGoFaultsRecovered: an application segfault
// under the preload still gets Open MPI's "Process received signal" report
// (the Go runtime's handlers would otherwise hide it), and a fault inside
// the library's Go code is still turned into a recovered panic.
func TestCrash_MPIBacktraceKeptAndGoFaultsRecovered(t *testing.T) {
	needSetup(t)
	args := []string{"segv", "1"}
	plain := mpirun(t, run{NP: 2, Prog: "exitcode", Args: args})
	traced := mpirun(t, run{NP: 2, Preload: true, Prog: "exitcode", Args: args,
		Env: []string{"GCLOCK_DIR=" + filepath.Join(t.TempDir(), "tr"), "GCLOCK_QUIET=1"}})
	const report = "*** Process received signal ***"
	if !strings.Contains(plain.Stderr, report) {
		t.Fatalf("without the preload Open MPI printed no crash report; stderr:\n%s", plain.Stderr)
	}
	if !strings.Contains(traced.Stderr, report) || traced.Code != plain.Code {
		t.Errorf("under the preload: exit code %d (without %d), stderr:\n%s", traced.Code, plain.Code, traced.Stderr)
	}

	faulted := mpirun(t, run{NP: 2, Preload: true, Prog: "exitcode", Args: []string{"exit", "0"},
		Env: []string{"GCLOCK_DIR=" + filepath.Join(t.TempDir(), "tr"), "GCLOCK_TEST_FAULT=go"}})
	if faulted.Code != 0 || !strings.Contains(faulted.Stderr, "gclock: internal error in MPI_Init") {
		t.Errorf("a nil dereference in the Go side: exit code %d, stderr:\n%s", faulted.Code, faulted.Stderr)
	}
}

// TestThreads_EachThreadsEventsRecorded: under MPI_THREAD_MULTIPLE two
// threads per rank call collectives concurrently on their own
// communicators with tiny buffers (concurrent flushes); every call is in
// the trace with gap-free sequence numbers per communicator.
func TestThreads_EachThreadsEventsRecorded(t *testing.T) {
	needSetup(t)
	const n = 300
	plain := mpirun(t, run{NP: 2, Prog: "threads", Args: []string{fmt.Sprint(n)}})
	dir := filepath.Join(t.TempDir(), "tr")
	traced := mpirun(t, run{NP: 2, Preload: true, Prog: "threads", Args: []string{fmt.Sprint(n)},
		Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_BUFFER=16", "GCLOCK_QUIET=1"}})
	if plain.Code != 0 || traced.Code != 0 || traced.Stdout != plain.Stdout {
		t.Fatalf("without preload: code %d %q; with: code %d %q\n%s", plain.Code, plain.Stdout, traced.Code, traced.Stdout, traced.Stderr)
	}
	for rank, rt := range readTraces(t, dir, 2) {
		// With MPI_THREAD_MULTIPLE only MPI_COMM_WORLD's collectives open
		// resync meetings; this program's threads use duplicates.
		for _, e := range rt.Meta.Epochs {
			if c, ok := e.Params["trigger_comm"]; ok {
				t.Errorf("rank %d: resync epoch %d at communicator %s instance %s in an MPI_THREAD_MULTIPLE program whose threads call collectives on their own communicators", rank, e.Index, c, e.Params["trigger_seq"])
			}
		}
		seqs := map[uint32][]uint32{}
		for _, ev := range withoutFlush(rt.Events) {
			if ev.Op != trace.OpAllreduce {
				t.Fatalf("rank %d: unexpected %s", rank, ev.Op)
			}
			seqs[ev.Comm] = append(seqs[ev.Comm], ev.Seq)
		}
		if len(seqs) != 2 {
			t.Fatalf("rank %d: events on %d communicators, want 2", rank, len(seqs))
		}
		for comm, s := range seqs {
			if len(s) != n {
				t.Errorf("rank %d comm %d: %d events, want %d", rank, comm, len(s), n)
			}
			for i, v := range s {
				if v != uint32(i) {
					t.Errorf("rank %d comm %d: event %d has seq %d", rank, comm, i, v)
					break
				}
			}
		}
	}
}

// TestTimers_EachChoiceRecordedInHeader: every GCLOCK_TIMER value gives a
// complete trace whose header names the timer (with the TSC frequency for
// tsc) and whose events are ordered in time; a bad value is reported and
// leaves the program alone.
func TestTimers_EachChoiceRecordedInHeader(t *testing.T) {
	needSetup(t)
	for _, timer := range []string{"monotonic", "monotonic_raw", "realtime", "tsc", "mpi_wtime"} {
		t.Run(timer, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tr")
			r := mpirun(t, run{NP: 2, Preload: true, Prog: "exitcode", Args: []string{"exit", "0"},
				Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_TIMER=" + timer, "GCLOCK_QUIET=1"}})
			if r.Code != 0 || len(gclockLines(r.Stderr)) != 0 {
				t.Fatalf("code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			hz := map[float64]bool{}
			for rank, rt := range readTraces(t, dir, 2) {
				h := rt.Meta.Header
				if h.Timer.Name != timer || h.Timer.CostNS <= 0 || (timer == "tsc") != (h.Timer.TSCHz > 0) {
					t.Errorf("rank %d: timer %+v", rank, h.Timer)
				}
				hz[h.Timer.TSCHz] = true
				if h.Config["GCLOCK_TIMER"] != timer {
					t.Errorf("rank %d: config echo %v", rank, h.Config)
				}
				prev := h.StartNS
				for i, ev := range rt.Events {
					if ev.EnterNS < prev || ev.ExitNS < ev.EnterNS {
						t.Errorf("rank %d event %d: enter %d exit %d after %d", rank, i, ev.EnterNS, ev.ExitNS, prev)
					}
					prev = ev.ExitNS
				}
				if len(rt.Events) != 6 {
					t.Errorf("rank %d: %d events, want 6", rank, len(rt.Events))
				}
			}
			// Ranks on one machine share one TSC calibration (ClockPropSync
			// treats them as one clock); separate ones differed by ~0.5 ppm.
			if len(hz) != 1 {
				t.Errorf("ranks on one machine use different TSC frequencies: %v", hz)
			}
		})
	}
	t.Run("invalid", func(t *testing.T) {
		dir := t.TempDir()
		r := mpirun(t, run{NP: 2, Preload: true, Prog: "exitcode", Args: []string{"exit", "0"}, Dir: dir,
			Env: []string{"GCLOCK_TIMER=sundial"}})
		if r.Code != 0 || r.Stdout != "sum 1\n" || len(gclockLines(r.Stderr)) != 2 {
			t.Errorf("code %d stdout %q stderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if files := listDir(t, dir); len(files) != 0 {
			t.Errorf("invalid GCLOCK_TIMER left files: %v", files)
		}
	})
}

// defaultTimer is the timer GCLOCK_TIMER=auto (the default) picks here:
// tsc where the CPU's TSC is invariant (cpuinfo flags constant_tsc and
// nonstop_tsc) and the kernel's clocksource is the TSC, else monotonic.
func defaultTimer(t *testing.T) string {
	t.Helper()
	cs, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil || strings.TrimSpace(string(cs)) != "tsc" {
		return "monotonic"
	}
	ci, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatalf("reading /proc/cpuinfo: %v", err)
	}
	for _, l := range strings.Split(string(ci), "\n") {
		if strings.HasPrefix(l, "flags") {
			f := " " + l + " "
			if strings.Contains(f, " constant_tsc ") && strings.Contains(f, " nonstop_tsc ") {
				return "tsc"
			}
			return "monotonic"
		}
	}
	return "monotonic"
}

// TestCodec_EachChoiceReadable: every GCLOCK_CODEC value gives complete
// traces whose event chunks carry its codec: by default and with zstd the
// chunks are written in C with zstd (cshim/cwrite.c); with GCLOCK_CWRITE=0
// or GCLOCK_FLUSH_SYNC=0 by Go with S2, as with s2.
func TestCodec_EachChoiceReadable(t *testing.T) {
	needSetup(t)
	for _, tc := range []struct {
		env       string
		cwrite    string
		flushSync string // GCLOCK_FLUSH_SYNC=0 queues halves for Go's goroutine: no C writer
		want      trace.Codec
	}{{"", "", "", trace.CodecZstd}, {"zstd", "", "", trace.CodecZstd}, {"s2", "", "", trace.CodecS2},
		{"", "0", "", trace.CodecS2}, {"", "", "0", trace.CodecS2}} {
		t.Run("codec="+tc.env+",cwrite="+tc.cwrite+",flushsync="+tc.flushSync, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tr")
			r := mpirun(t, run{NP: 2, Preload: true, Prog: "exitcode", Args: []string{"exit", "0"},
				Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_CODEC=" + tc.env, "GCLOCK_CWRITE=" + tc.cwrite,
					"GCLOCK_FLUSH_SYNC=" + tc.flushSync, "GCLOCK_QUIET=1"}})
			if r.Code != 0 || len(gclockLines(r.Stderr)) != 0 {
				t.Fatalf("code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			for rank, rt := range readTraces(t, dir, 2) {
				if len(rt.Events) != 6 || len(rt.Meta.Chunks) == 0 {
					t.Errorf("rank %d: %d events in %d chunks, want 6", rank, len(rt.Events), len(rt.Meta.Chunks))
				}
				for _, c := range rt.Meta.Chunks {
					if c.Codec != tc.want {
						t.Errorf("rank %d chunk %d: codec %v, want %v", rank, c.Index, c.Codec, tc.want)
					}
				}
			}
		})
	}
}

// TestCWriter_WithoutLibzstdGoWritesTheChunks: where the system's
// libzstd cannot be loaded (GCLOCK_TEST_FAULT=nozstd), rank 0 says so
// once and the Go half writes every chunk with S2: the same events as
// the C writer's run (all zstd), every call of the loop recorded. Both
// MPIs.
func TestCWriter_WithoutLibzstdGoWritesTheChunks(t *testing.T) {
	const calls = 20000
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			counts := map[string][]int{}
			for _, tc := range []struct {
				fault string
				want  trace.Codec
				warns int
			}{{"", trace.CodecZstd, 0}, {"nozstd", trace.CodecS2, 1}} {
				dir := filepath.Join(t.TempDir(), "tr")
				r := mpirun(t, run{NP: 2, Preload: true, MPI: m, Prog: "loopsum", Args: []string{strconv.Itoa(calls)},
					Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_BUFFER=1024", "GCLOCK_TEST_FAULT=" + tc.fault, "GCLOCK_QUIET=1"}})
				want := fmt.Sprintf("%d of %d calls right", calls, calls)
				if r.Code != 0 || !strings.Contains(r.Stdout, want) {
					t.Fatalf("fault %q: code %d, stdout %q\n%s", tc.fault, r.Code, r.Stdout, r.Stderr)
				}
				warns := 0
				for _, l := range gclockLines(r.Stderr) {
					if strings.Contains(l, "libzstd.so.1 cannot be loaded") && strings.HasPrefix(l, "gclock: rank 0: ") {
						warns++
					} else {
						t.Errorf("fault %q: unexpected line %q", tc.fault, l)
					}
				}
				if warns != tc.warns {
					t.Errorf("fault %q: %d warnings from rank 0, want %d:\n%s", tc.fault, warns, tc.warns, r.Stderr)
				}
				for rank, rt := range readTraces(t, dir, 2) {
					allreduce := 0
					for _, e := range rt.Events {
						if e.Op == trace.OpAllreduce {
							allreduce++
						}
					}
					if allreduce != calls || len(rt.Meta.Chunks) < calls/1024 {
						t.Errorf("fault %q rank %d: %d MPI_Allreduce events in %d chunks, want %d in at least %d",
							tc.fault, rank, allreduce, len(rt.Meta.Chunks), calls, calls/1024)
					}
					for _, c := range rt.Meta.Chunks {
						if c.Codec != tc.want {
							t.Errorf("fault %q rank %d chunk %d: codec %v, want %v", tc.fault, rank, c.Index, c.Codec, tc.want)
						}
					}
					counts[tc.fault] = append(counts[tc.fault], len(rt.Events))
				}
			}
			if fmt.Sprint(counts[""]) != fmt.Sprint(counts["nozstd"]) {
				t.Errorf("events per rank: %v with the C writer, %v through Go", counts[""], counts["nozstd"])
			}
		})
	}
}

// TestDlopenedMPI_Recorded: a program that loads libmpi with dlopen after
// start-up (as mpi4py does) is recorded too, although the library's weak
// references to MPI's predefined handles were resolved before libmpi
// existed in the process.
// TestDlopenedMPI_Recorded: a program without MPI dlopen()s libmpi and an
// MPI extension, with RTLD_GLOBAL and with RTLD_LOCAL (as Python opens
// mpi4py: libmpi's symbols are then in no global scope, and a wrapper that
// called its weak PMPI reference would jump to address 0).
func TestDlopenedMPI_Recorded(t *testing.T) {
	needSetup(t)
	for _, scope := range []string{"global", "local"} {
		t.Run(scope, func(t *testing.T) {
			args := []string{libmpiPath(t), filepath.Join(binDir, "dlopen_ext.so"), scope}
			plain := mpirun(t, run{NP: 2, Prog: "dlopen_main", Args: args})
			dir := filepath.Join(t.TempDir(), "tr")
			traced := mpirun(t, run{NP: 2, Preload: true, Prog: "dlopen_main", Args: args, Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
			if plain.Code != 0 || traced.Code != 0 || traced.Stdout != plain.Stdout {
				t.Fatalf("without preload: code %d %q; with: code %d %q\n%s", plain.Code, plain.Stdout, traced.Code, traced.Stdout, traced.Stderr)
			}
			if l := gclockLines(traced.Stderr); len(l) != 0 {
				t.Errorf("recorder warnings: %v", l)
			}
			for rank, rt := range readTraces(t, dir, 2) {
				if len(rt.Events) != 2 || rt.Events[0].Op != trace.OpBarrier || rt.Events[1].Op != trace.OpAllreduce {
					t.Errorf("rank %d: events %+v, want Barrier, Allreduce", rank, rt.Events)
				}
			}
		})
	}
}

package tests

// Limits a batch system or the application puts on the process (file size,
// address space, descriptors): under each the application runs as it does
// without the recorder, and the recorder either records or says once why
// not.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace"
)

// loopsumUnder returns Open MPI's mpirun command line for loopsum calls on
// np ranks, each started by /bin/sh, which runs shell (a ulimit, applying to
// the ranks only: mpirun and its daemon need more) and then execs it.
func loopsumUnder(t *testing.T, np int, env []string, shell string, calls int) []string {
	return openMPI.argv(np, env, "/bin/sh", "-c", shell+`; exec "$0" "$@"`, openMPI.prog(t, "loopsum"), strconv.Itoa(calls))
}

// TestFileSizeLimit_AppCompletesAndTraceEndsWithinIt: the ranks run
// under "ulimit -f" (RLIMIT_FSIZE, as a batch system may set it) of 8 MiB,
// enough for MPI's own shared-memory files. Growing a file past the limit
// sends SIGXFSZ, which killed the application (before: mpirun reported
// signal 25). Two ways past it:
//   - the traces of 7,000,000 MPI_Allreduce: each rank stops recording with
//     one warning naming the limit, its file stays within the limit and ends
//     with a footer saying why, and tracemerge names the rank and the reason;
//   - a GCLOCK_BUFFER whose sidecar region (9 MiB) exceeds the limit: one
//     warning per rank, the buffer is ordinary memory, the trace complete.
func TestFileSizeLimit_AppCompletesAndTraceEndsWithinIt(t *testing.T) {
	needSetup(t)
	const np, limitBlocks = 2, 16384 // sh counts 512-byte blocks: 8 MiB
	const limit = limitBlocks * 512
	m := openMPI
	// The limit is set in the ranks only (sh then execs the program):
	// mpirun's and its daemon's own files need more.
	rankArgv := func(env []string, calls int) []string {
		return loopsumUnder(t, np, env, "ulimit -f "+strconv.Itoa(limitBlocks), calls)
	}
	for _, c := range []struct {
		name    string
		env     []string
		calls   int
		stopped bool // the traces reach the limit
	}{
		{"trace", nil, 7_000_000, true},
		{"sidecar", []string{"GCLOCK_BUFFER=65536"}, 100_000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			plain := runCmd(t, t.TempDir(), nil, rankArgv(nil, c.calls)...)
			want := fmt.Sprintf("%d of %d calls right", c.calls, c.calls)
			if plain.Code != 0 || !strings.Contains(plain.Stdout, want) {
				t.Fatalf("without preload under ulimit -f %d: code %d, stdout %q\n%s", limitBlocks, plain.Code, plain.Stdout, plain.Stderr)
			}
			dir := filepath.Join(t.TempDir(), "tr")
			env := append([]string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "LD_PRELOAD=" + m.Lib}, c.env...)
			r := runCmd(t, t.TempDir(), env, rankArgv(env, c.calls)...)
			if r.Code != plain.Code || r.Stdout != plain.Stdout {
				t.Fatalf("with preload under ulimit -f %d: code %d, stdout %q (without %d, %q)\n%s",
					limitBlocks, r.Code, r.Stdout, plain.Code, plain.Stdout, r.Stderr)
			}
			lines := gclockLines(r.Stderr)
			for rank, rt := range readTraces(t, dir, np) {
				prefix := "gclock: rank " + strconv.Itoa(rank) + ": "
				stops, reserves := 0, 0
				for _, l := range lines {
					if !strings.HasPrefix(l, prefix) || !strings.Contains(l, "file size limit") {
						continue
					}
					if strings.Contains(l, "recording stopped") {
						stops++
					}
					if strings.Contains(l, "cannot reserve") {
						reserves++
					}
				}
				if stops != b2i(c.stopped) || reserves != 1-b2i(c.stopped) {
					t.Errorf("rank %d: %d warnings about stopping and %d about the sidecar at the file size limit:\n%s",
						rank, stops, reserves, strings.Join(lines, "\n"))
				}
				if rt.Meta.Size > limit {
					t.Errorf("rank %d: file of %d bytes past the limit of %d", rank, rt.Meta.Size, limit)
				}
				f, n := rt.Meta.Footer, countOp(rt.Events, trace.OpAllreduce)
				switch {
				case f == nil || len(rt.Meta.Damage) != 0:
					t.Errorf("rank %d: footer %+v, damage %v", rank, f, rt.Meta.Damage)
				case c.stopped && (f.Reason != "error" || !strings.Contains(f.Stopped, "file size limit")):
					t.Errorf("rank %d: footer %+v, want one saying recording stopped at the limit", rank, f)
				case c.stopped && (n < 1_000_000 || n >= c.calls):
					t.Errorf("rank %d: %d MPI_Allreduce recorded, want the first million or more and not all", rank, n)
				case !c.stopped && (f.Reason != "finalize" || n != c.calls):
					t.Errorf("rank %d: footer %+v, %d MPI_Allreduce recorded, want all %d", rank, f, n, c.calls)
				}
			}
			if !c.stopped {
				return
			}
			o, err := exec.Command(filepath.Join(repoRoot, "build", "tracemerge"), "info", dir).CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
				t.Fatalf("tracemerge info: %v, want exit code 3 (partial data)\n%s", err, o)
			}
			for rank := 0; rank < np; rank++ {
				if !strings.Contains(string(o), fmt.Sprintf("rank %d's recording stopped early", rank)) {
					t.Errorf("tracemerge info does not say rank %d stopped early:\n%s", rank, o)
				}
			}
			if !strings.Contains(string(o), "files:     0 clean, 0 with damage or without footer, 2 whose recording stopped early") {
				t.Errorf("tracemerge info's files line does not count the stopped files:\n%s", o)
			}
		})
	}
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestClosedDescriptors_AppFilesIntactAndTraceComplete: after MPI_Init
// each rank closes the descriptors of the recorder's rank file and sidecar
// (an application closing descriptors it does not own), opens two files of
// its own (which get those numbers), writes them during 100,000
// MPI_Allreduce and while a new thread makes 10,000 MPI_Barrier calls (a
// new thread buffer), and checks them. Before, the recorder wrote trace
// frames into the first and grew the second by a thread's buffer region:
// "own files intact: NO". Now the files are intact, the output equals the
// untraced run's, nothing is said, and every call is in the trace (the
// recorder reopened its files by path).
func TestClosedDescriptors_AppFilesIntactAndTraceComplete(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const np, n = 2, 100000
			args := []string{strconv.Itoa(n)}
			plain := mpirun(t, run{MPI: m, NP: np, Prog: "closefd", Args: args})
			want := fmt.Sprintf("%d of %d calls right, %d lines per file, own files intact: yes", n, n, n/1000)
			if plain.Code != 0 || !strings.Contains(plain.Stdout, want) {
				t.Fatalf("without preload: code %d, stdout %q\n%s", plain.Code, plain.Stdout, plain.Stderr)
			}
			dir := filepath.Join(t.TempDir(), "tr")
			r := mpirun(t, run{MPI: m, NP: np, Preload: true, Prog: "closefd", Args: args,
				Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
			if r.Code != plain.Code || r.Stdout != plain.Stdout {
				t.Fatalf("with preload: code %d, stdout %q (without %d, %q)\n%s", r.Code, r.Stdout, plain.Code, plain.Stdout, r.Stderr)
			}
			for rank := 0; rank < np; rank++ {
				if !strings.Contains(r.Stderr, fmt.Sprintf("closefd: rank %d closed 2\n", rank)) {
					t.Errorf("rank %d did not close the rank file's and the sidecar's descriptors:\n%s", rank, r.Stderr)
				}
			}
			if lines := gclockLines(r.Stderr); len(lines) != 0 {
				t.Errorf("the recorder said something:\n%s", strings.Join(lines, "\n"))
			}
			for rank, rt := range readTraces(t, dir, np) {
				f := rt.Meta.Footer
				if f == nil || f.Reason != "finalize" || len(rt.Meta.Damage) != 0 {
					t.Errorf("rank %d: footer %+v, damage %v", rank, f, rt.Meta.Damage)
				}
				if a, b := countOp(rt.Events, trace.OpAllreduce), countOp(rt.Events, trace.OpBarrier); a != n+1 || b != n/10 {
					t.Errorf("rank %d: %d MPI_Allreduce and %d MPI_Barrier recorded, want %d and %d", rank, a, b, n+1, n/10)
				}
			}
		})
	}
}

// TestAddressSpaceLimit_AppRunsAndRecordsWhereThereIsRoom: the ranks run
// under an address-space limit (ulimit -v, RLIMIT_AS: Grid Engine's
// h_vmem sets one) of 400 MB, where the untraced program runs. The Go
// runtime reserves ≈ 1.6 GiB of address space when it starts and ends the
// process when it cannot (before: "fatal error: failed to reserve page
// summary memory", exit code 2, at library load, before main). Now the Go
// half is loaded only at MPI_Init, and only with room:
//   - soft and hard limit 400 MB: nothing recorded, rank 0 says why once;
//   - soft 400 MB, hard unlimited: the soft limit is raised by what the Go
//     half takes (rank 0 says so) and the run is recorded;
//   - soft and hard limit 12 GiB (a generous h_vmem): the Go half takes its
//     2 GiB of the room (rank 0 says so) and the run is recorded.
func TestAddressSpaceLimit_AppRunsAndRecordsWhereThereIsRoom(t *testing.T) {
	needSetup(t)
	const np, calls = 2, 100000
	m := openMPI
	rankArgv := func(env []string, ulimit string) []string { return loopsumUnder(t, np, env, ulimit, calls) }
	for _, c := range []struct {
		name, ulimit string
		records      bool
		say          string // rank 0's one line
	}{
		{"hard", "ulimit -v 390625", false, "leaves too little room for the recorder's Go runtime"}, // 400 MB
		{"soft", "ulimit -S -v 390625", true, "the soft address-space limit (ulimit -v) was raised by"},
		{"ample", "ulimit -v 12582912", true, "the recorder's Go runtime takes 2048 MiB of the address-space limit"}, // 12 GiB
	} {
		t.Run(c.name, func(t *testing.T) {
			plain := runCmd(t, t.TempDir(), nil, rankArgv(nil, c.ulimit)...)
			want := fmt.Sprintf("%d of %d calls right", calls, calls)
			if plain.Code != 0 || !strings.Contains(plain.Stdout, want) {
				t.Fatalf("without preload under %s: code %d, stdout %q\n%s", c.ulimit, plain.Code, plain.Stdout, plain.Stderr)
			}
			dir := filepath.Join(t.TempDir(), "tr")
			env := []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "LD_PRELOAD=" + m.Lib}
			r := runCmd(t, t.TempDir(), env, rankArgv(env, c.ulimit)...)
			if r.Code != plain.Code || r.Stdout != plain.Stdout {
				t.Fatalf("with preload under %s: code %d, stdout %q (without %d, %q)\n%s",
					c.ulimit, r.Code, r.Stdout, plain.Code, plain.Stdout, r.Stderr)
			}
			lines := gclockLines(r.Stderr)
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "gclock: rank 0: ") || !strings.Contains(lines[0], c.say) {
				t.Fatalf("the recorder said %q, want one line from rank 0 with %q", lines, c.say)
			}
			if !c.records {
				if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 0 {
					t.Fatalf("not recording, yet %s holds %v", dir, names)
				}
				return
			}
			for rank, rt := range readTraces(t, dir, np) {
				if f := rt.Meta.Footer; f == nil || f.Reason != "finalize" || countOp(rt.Events, trace.OpAllreduce) != calls {
					t.Errorf("rank %d: footer %+v, %d MPI_Allreduce recorded, want all %d", rank, f, countOp(rt.Events, trace.OpAllreduce), calls)
				}
			}
		})
	}
}

// TestDescriptorLimit_AppRunsAtItsTightestLimit: at the lowest descriptor
// limit (ulimit -n) under which the untraced program runs, the traced one
// runs too, with the same output. Before: the Go runtime's first file open
// created its network poller (an epoll instance and an eventfd), and the
// runtime ended the process when that failed ("fatal error: runtime:
// netpollinit failed") at 20 descriptors; and it kept two cgroup files open
// for the whole run, so at 16 Open MPI's own start failed. Now the Go half
// opens files without the poller and keeps no descriptor of its own; the
// recorder may do without its sidecar there (one line per rank).
func TestDescriptorLimit_AppRunsAtItsTightestLimit(t *testing.T) {
	needSetup(t)
	const np, calls = 2, 1000
	m := openMPI
	rankArgv := func(env []string, n int) []string {
		return loopsumUnder(t, np, env, "ulimit -n "+strconv.Itoa(n), calls)
	}
	want := fmt.Sprintf("%d of %d calls right", calls, calls)
	limit := 0
	var plain result
	for n := 8; n <= 64 && limit == 0; n++ {
		if plain = runCmd(t, t.TempDir(), nil, rankArgv(nil, n)...); plain.Code == 0 && strings.Contains(plain.Stdout, want) {
			limit = n
		}
	}
	if limit == 0 {
		t.Fatalf("the untraced program does not run under ulimit -n 8 ... 64")
	}
	dir := filepath.Join(t.TempDir(), "tr")
	env := []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "LD_PRELOAD=" + m.Lib}
	r := runCmd(t, t.TempDir(), env, rankArgv(env, limit)...)
	if r.Code != plain.Code || r.Stdout != plain.Stdout || strings.Contains(r.Stderr, "fatal error") {
		t.Fatalf("with preload under ulimit -n %d (the lowest the untraced run takes): code %d, stdout %q (without %d, %q)\n%s",
			limit, r.Code, r.Stdout, plain.Code, plain.Stdout, r.Stderr)
	}
	t.Logf("ulimit -n %d; the recorder said: %q", limit, gclockLines(r.Stderr))
}

// TestThreadLimit_AppRunsAndRecordsWhereThereIsRoom: the ranks run as user
// nobody (root is not held to RLIMIT_NPROC) under the lowest thread limit
// (ulimit -u) the untraced program runs with. The Go runtime, started in
// MPI_Init before PMPI_Init, took the threads Open MPI then needed for its
// progress threads ("OPAL ERROR: Error in file ... opal_progress_threads.c",
// the job failed). Now:
//   - soft and hard limit equal: nothing recorded, rank 0 says why once;
//   - only the soft limit: it is raised by what the Go half adds (rank 0
//     says so) and the run is recorded.
func TestThreadLimit_AppRunsAndRecordsWhereThereIsRoom(t *testing.T) {
	needSetup(t)
	const np, calls = 2, 1000
	// Everything the user nobody runs or writes must be open to it.
	share, err := os.MkdirTemp("", "gclock-nobody-") // t.TempDir's parent is private
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(share) })
	if err := os.Chmod(share, 0o777); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(share, "loopsum")
	if b, err := os.ReadFile(openMPI.prog(t, "loopsum")); err != nil || os.WriteFile(prog, b, 0o755) != nil {
		t.Fatalf("copying loopsum to %s: %v", share, err)
	}
	asNobody := func(ulimit string, env []string) result {
		var x []string
		for _, kv := range env {
			x = append(x, "-x", strings.SplitN(kv, "=", 2)[0])
		}
		script := ulimit + "; exec mpirun -np " + strconv.Itoa(np) + " " + strings.Join(x, " ") + " " + prog + " " + strconv.Itoa(calls)
		return runCmd(t, share, env, "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/bash", "-c", script)
	}
	want := fmt.Sprintf("%d of %d calls right", calls, calls)
	limit := 0
	var plain result
	for n := 6; n <= 64 && limit == 0; n += 2 {
		if plain = asNobody("ulimit -u "+strconv.Itoa(n), nil); plain.Code == 0 && strings.Contains(plain.Stdout, want) {
			limit = n
		}
	}
	if limit == 0 {
		t.Fatalf("the untraced program does not run as nobody under ulimit -u 6 ... 64:\n%s", plain.Stderr)
	}
	for _, c := range []struct {
		name, ulimit string
		records      bool
		say          string
	}{
		{"hard", "ulimit -u", false, "leaves no room for the recorder's Go runtime"},
		{"soft", "ulimit -Su", true, "the soft thread limit (ulimit -u) was raised by"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(share, "tr-"+c.name)
			env := []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "LD_PRELOAD=" + libPath}
			r := asNobody(c.ulimit+" "+strconv.Itoa(limit), env)
			if r.Code != plain.Code || r.Stdout != plain.Stdout {
				t.Fatalf("with preload as nobody under %s %d: code %d, stdout %q (without %d, %q)\n%s",
					c.ulimit, limit, r.Code, r.Stdout, plain.Code, plain.Stdout, r.Stderr)
			}
			lines := gclockLines(r.Stderr)
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "gclock: rank 0: ") || !strings.Contains(lines[0], c.say) {
				t.Fatalf("the recorder said %q, want one line from rank 0 with %q\n%s", lines, c.say, r.Stderr)
			}
			names, _ := filepath.Glob(filepath.Join(dir, "rank-*.gct"))
			if c.records != (len(names) == np) || !c.records && len(names) != 0 {
				t.Fatalf("%s holds %v (recording: %v)", dir, names, c.records)
			}
		})
	}
}

// TestOneRankWithoutGoHalf_NoRankRecordsNoHang: only rank 1 runs under an
// address-space limit that leaves no room for the Go half. The recorder's
// start is collective (sync epoch 0), so rank 0, which has the Go half,
// would wait for rank 1 forever; the ranks agree first (one reduction in
// MPI_Init) and none records: same output, rank 1 says why, rank 0 that
// no rank records, no file.
func TestOneRankWithoutGoHalf_NoRankRecordsNoHang(t *testing.T) {
	needSetup(t)
	const np, calls = 2, 1000
	m := openMPI
	dir := filepath.Join(t.TempDir(), "tr")
	env := []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "LD_PRELOAD=" + m.Lib}
	r := runCmd(t, t.TempDir(), env, loopsumUnder(t, np, env, `[ "$OMPI_COMM_WORLD_RANK" = 1 ] && ulimit -v 390625`, calls)...)
	if want := fmt.Sprintf("%d of %d calls right", calls, calls); r.Code != 0 || !strings.Contains(r.Stdout, want) {
		t.Fatalf("code %d, stdout %q\n%s", r.Code, r.Stdout, r.Stderr)
	}
	lines := gclockLines(r.Stderr)
	says := strings.Join(lines, "\n")
	if len(lines) != 2 || !strings.Contains(says, "gclock: rank 1: the address-space limit") ||
		!strings.Contains(says, "gclock: rank 1 cannot record (it says why); no rank records") {
		t.Fatalf("the recorder said:\n%s", says)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 0 {
		t.Fatalf("no rank records, yet %s holds %v", dir, names)
	}
}

// nofileUnder runs progs/nofile.c on 2 ranks of m under a soft descriptor
// limit of soft, without the preload: the launcher command for a given
// environment, the untraced run and the hard limit, which must be above
// soft+1.
func nofileUnder(t *testing.T, m *mpiImpl, soft int) (func(env []string) []string, result, uint64) {
	t.Helper()
	argv := func(env []string) []string {
		return m.argv(2, env, "/bin/sh", "-c", "ulimit -Sn "+strconv.Itoa(soft)+`; exec "$0" "$@"`, m.prog(t, "nofile"))
	}
	plain := runCmd(t, t.TempDir(), nil, argv(nil)...)
	var hard uint64
	if _, err := fmt.Sscanf(plain.Stdout, "nofile before %d %d", new(uint64), &hard); err != nil || plain.Code != 0 {
		t.Fatalf("nofile without the preload: exit %d, %v, stdout %q\n%s", plain.Code, err, plain.Stdout, plain.Stderr)
	}
	if hard <= uint64(soft)+1 {
		t.Fatalf("the hard descriptor limit here is %d: the test needs one above %d (raise it with ulimit -Hn)", hard, soft+1)
	}
	return argv, plain, hard
}

// TestDescriptorLimit_SoftLimitKeptForTheApp: the ranks run under a soft
// descriptor limit of 256 below a higher hard one (as systemd gives every
// session: soft 1,024, hard 524,288, so that descriptors stay below
// select()'s FD_SETSIZE). The Go runtime's start raised the soft limit to
// one below the hard one for the whole application and every child it
// started (before: "nofile init 19999" here). Now the application and its
// children keep the limit they were given, and the run is recorded.
func TestDescriptorLimit_SoftLimitKeptForTheApp(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const soft = 256
			argv, plain, hard := nofileUnder(t, m, soft)
			want := fmt.Sprintf("nofile before %d %d\nnofile init %d %d\nnofile child %d\nnofile finalize %d %d\n", soft, hard, soft, hard, soft, soft, hard)
			if plain.Stdout != want {
				t.Fatalf("nofile without the preload: stdout %q, want %q", plain.Stdout, want)
			}
			dir := filepath.Join(t.TempDir(), "tr")
			env := []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "LD_PRELOAD=" + m.Lib}
			r := runCmd(t, t.TempDir(), env, argv(env)...)
			if r.Code != 0 || r.Stdout != want {
				t.Fatalf("nofile with the preload: exit %d, stdout %q, want %q\n%s", r.Code, r.Stdout, want, r.Stderr)
			}
			for rank, rt := range readTraces(t, dir, 2) {
				if rt.Meta.Footer == nil || len(rt.Events) == 0 {
					t.Errorf("rank %d: footer %v, %d events: want a complete recording\n%s", rank, rt.Meta.Footer, len(rt.Events), r.Stderr)
				}
			}
		})
	}
}

// foreignGoHalf is a libgclock-go.so that is not the recorder's: it has no
// gclockGoReady, and its constructor raises the soft descriptor limit to
// the hard one, as a Go runtime's start does.
const foreignGoHalf = `#include <sys/resource.h>
__attribute__((constructor)) static void raise_nofile(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}
`

// TestDescriptorLimit_KeptWhenTheGoHalfIsForeign: beside libgclock.so sits
// a libgclock-go.so that is not the recorder's (a stale or foreign file).
// Loading it ran its constructors, which raise the descriptor limit as a Go
// runtime does, before the recorder found the file unusable; the
// application kept the raised limit (found 2026-11-27). Now it gets its own
// limit back, and rank 0 says once why nothing is recorded.
func TestDescriptorLimit_KeptWhenTheGoHalfIsForeign(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const soft = 256
			lib := t.TempDir()
			src := filepath.Join(lib, "foreign.c")
			if err := os.WriteFile(src, []byte(foreignGoHalf), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := compile("cc", "-shared", "-fPIC", "-o", filepath.Join(lib, "libgclock-go.so"), src); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(m.Lib)
			if err != nil {
				t.Fatal(err)
			}
			preload := filepath.Join(lib, "libgclock.so")
			if err := os.WriteFile(preload, data, 0o755); err != nil {
				t.Fatal(err)
			}
			argv, plain, _ := nofileUnder(t, m, soft)
			dir := filepath.Join(t.TempDir(), "tr")
			env := []string{"GCLOCK_DIR=" + dir, "LD_PRELOAD=" + preload}
			r := runCmd(t, t.TempDir(), env, argv(env)...)
			if r.Code != 0 || r.Stdout != plain.Stdout {
				t.Fatalf("nofile with a foreign Go half: exit %d, stdout %q, want %q (as without the preload)\n%s",
					r.Code, r.Stdout, plain.Stdout, r.Stderr)
			}
			says := strings.Join(gclockLines(r.Stderr), "\n")
			if !strings.Contains(says, "has no gclockGoReady") || strings.Count(says, "gclockGoReady") != 1 {
				t.Errorf("the recorder said %q: want one line that the Go half has no gclockGoReady", says)
			}
			if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 0 {
				t.Errorf("nothing is recorded, yet %s holds %v", dir, names)
			}
		})
	}
}

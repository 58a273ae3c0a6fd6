package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gclock/gclock/internal/launch"
	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// Set by TestMain.
var (
	repoRoot string // repository root
	libPath  string // absolute path of build/libgclock.so
	binDir   string // compiled test programs
	setupErr error  // why setup failed; every test reports it
)

// progs are the C test programs, compiled once by TestMain.
var progs = []string{"collectives", "exitcode", "clockprog", "threads", "pmpi_only", "pcontrol"}

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Clean(filepath.Join(filepath.Dir(file), ".."))
	libPath = filepath.Join(repoRoot, "build", "libgclock.so")
	openMPI.Lib = libPath
	dir, err := os.MkdirTemp("", "gclock-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		os.Exit(1)
	}
	binDir = dir
	openMPI.binDir = dir
	setupErr = setup()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func setup() error {
	for _, tool := range []string{"mpirun", "mpicc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found on PATH: these tests run real MPI programs; run `make setup` as root or `sudo apt-get install -y openmpi-bin libopenmpi-dev make`", tool)
		}
	}
	if out, err := exec.Command("make", "-C", repoRoot, "lib").CombinedOutput(); err != nil {
		return fmt.Errorf("`make -C %s lib` failed: %v\n%s", repoRoot, err, out)
	}
	if _, err := os.Stat(libPath); err != nil {
		return fmt.Errorf("make lib succeeded but the library is missing: %w", err)
	}
	cflags := []string{"-std=c11", "-O2", "-g", "-pthread", "-Wall", "-Wextra", "-Werror"}
	src := func(p string) string { return filepath.Join(repoRoot, "tests", "progs", p+".c") }
	for _, p := range progs {
		err := compile("mpicc", append(cflags, "-o", filepath.Join(binDir, p), src(p))...)
		openMPI.built[p] = err
		if err != nil {
			return err
		}
	}
	// The dlopen case: a host program without MPI and an MPI extension.
	if err := compile("mpicc", append(cflags, "-shared", "-fPIC", "-o", filepath.Join(binDir, "dlopen_ext.so"), src("dlopen_ext"))...); err != nil {
		return err
	}
	// Without libmpi: registered so that run{Prog: "dlopen_main"} finds it.
	err := compile("cc", append(cflags, "-o", filepath.Join(binDir, "dlopen_main"), src("dlopen_main"), "-ldl")...)
	openMPI.built["dlopen_main"] = err
	return err
}

func compile(cc string, args ...string) error {
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return nil
}

// libmpiPath returns the libmpi the extension was linked against (ldd).
func libmpiPath(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ldd", filepath.Join(binDir, "dlopen_ext.so")).Output()
	if err != nil {
		t.Fatalf("ldd dlopen_ext.so: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && strings.HasPrefix(f[0], "libmpi.so") {
			return f[2]
		}
	}
	t.Fatalf("dlopen_ext.so does not link libmpi:\n%s", out)
	return ""
}

func needSetup(t *testing.T) {
	t.Helper()
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

// result is what one command left behind.
type result struct {
	Stdout, Stderr string
	Code           int
}

// mpiBaseEnv allows running as root and oversubscribing the 2 cores.
func mpiBaseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		// The caller's GCLOCK_* or LD_PRELOAD must not leak into runs, nor
		// the job of a Slurm allocation the tests may run in (the recorder
		// names runs after SLURM_JOB_ID; slurm_test.go starts its own).
		if strings.HasPrefix(kv, "GCLOCK_") || strings.HasPrefix(kv, "LD_PRELOAD=") || strings.HasPrefix(kv, "SLURM_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1")
}

// runCmd runs argv in dir with the extra environment, with a timeout.
func runCmd(t *testing.T, dir string, env []string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(mpiBaseEnv(), env...)
	// A hung child of argv that holds its output pipes must not hold the
	// test after the timeout killed argv.
	cmd.WaitDelay = 10 * time.Second
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	release, err := launch.HoldStdin(cmd)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Run()
	release()
	res := result{Stdout: so.String(), Stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Code = 128 + int(ws.Signal())
		}
	default:
		t.Fatalf("running %v: %v", argv, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%v timed out after 90s; stderr:\n%s", argv, res.Stderr)
	}
	return res
}

// run describes one mpirun invocation.
type run struct {
	NP      int
	Preload bool     // mpirun -x LD_PRELOAD=lib (the ranks only)
	Outer   bool     // LD_PRELOAD=lib mpirun ... (mpirun itself too)
	Env     []string // KEY=VALUE passed to the ranks with -x
	Prog    string
	Args    []string
	Dir     string   // working directory (default: a fresh temp dir)
	MPI     *mpiImpl // nil: Open MPI
}

func mpirun(t *testing.T, r run) result {
	t.Helper()
	m := r.MPI
	if m == nil {
		m = openMPI
	}
	env := append([]string(nil), r.Env...)
	if r.Preload {
		env = append(env, "LD_PRELOAD="+m.Lib)
	}
	argv := m.argv(r.NP, env, m.prog(t, r.Prog), r.Args...)
	if r.Outer {
		env = append(env, "LD_PRELOAD="+m.Lib)
	}
	dir := r.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	return runCmd(t, dir, env, argv...)
}

// rankTrace is one rank's file, fully read.
type rankTrace struct {
	Meta   *trace.Meta
	Events []trace.Event
}

// readTraces opens rank-00000.gct ... for n ranks in dir.
func readTraces(t *testing.T, dir string, n int) []rankTrace {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "rank-*.gct"))
	sort.Strings(names)
	if len(names) != n {
		t.Fatalf("%s holds %d trace files %v, want %d", dir, len(names), names, n)
	}
	out := make([]rankTrace, n)
	for rank := 0; rank < n; rank++ {
		p := filepath.Join(dir, trace.RankFileName(rank))
		r, err := trace.Open(p)
		if err != nil {
			t.Fatalf("trace.Open(%s): %v", p, err)
		}
		evs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("reading events of %s: %v", p, err)
		}
		m := r.Meta()
		if len(m.Damage) > 0 {
			t.Errorf("%s: damage %+v", p, m.Damage)
		}
		// The footer counts the calls among the records (the C encoder's
		// count, trace.Footer.Calls; tracemerge's per-event limit).
		if f := m.Footer; f != nil && f.Events == uint64(len(evs)) {
			calls := uint64(0)
			for _, e := range evs {
				if !e.Op.Continues(e.Seq) {
					calls++
				}
			}
			if f.Calls != calls {
				t.Errorf("%s: footer counts %d calls in %d records, the records hold %d", p, f.Calls, f.Events, calls)
			}
		}
		out[rank] = rankTrace{Meta: m, Events: evs}
		r.Close()
	}
	return out
}

// gclockLines returns the stderr lines the recorder printed.
func gclockLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "gclock:") {
			out = append(out, l)
		}
	}
	return out
}

// listDir returns the names in dir (recursively), for "no files" checks.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// loadRun opens the run in dir for the analysis; closed when the test ends.
func loadRun(t *testing.T, dir string) *rundir.Run {
	t.Helper()
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return run
}

// analyzeDir is tracemerge's analysis of the run in dir (default options).
func analyzeDir(t *testing.T, dir string) *datamodel.Analysis {
	t.Helper()
	res, err := merge.Analyze(loadRun(t, dir), merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Analysis
}

// p2pOfDir is tracemerge's point-to-point analysis of the run in dir.
func p2pOfDir(t *testing.T, dir string) *datamodel.P2PResult {
	t.Helper()
	p, err := merge.AnalyzeP2P(loadRun(t, dir), merge.P2POptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

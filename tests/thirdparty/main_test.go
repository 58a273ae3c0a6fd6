package thirdparty

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	mpilaunch "github.com/gclock/gclock/internal/launch"
)

// Set by TestMain.
var (
	repoRoot string // repository root (contains go.mod)
	libPath  string // absolute path of build/libgclock.so
	setupErr error  // why the library could not be built, reported by every test
)

// Emulated cluster used for the traced runs: 2 ranks per node, node 0 is 3 ms
// ahead and 25 ppm fast, node 1 1.5 ms behind and 40 ppm slow (the same
// setting the demo uses).
const (
	fakeNodeSize = "2"
	fakeClock    = "3000000:25,-1500000:-40"
)

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	libPath = filepath.Join(repoRoot, "build", "libgclock.so")
	if _, err := exec.LookPath("make"); err != nil {
		setupErr = fmt.Errorf("make not found on PATH: %w", err)
	} else {
		cmd := exec.Command("make", "-C", repoRoot, "lib")
		out, err := cmd.CombinedOutput()
		if err != nil {
			setupErr = fmt.Errorf("`make -C %s lib` failed (%v); build/libgclock.so is needed to run programs under the preload:\n%s",
				repoRoot, err, out)
		} else if _, err := os.Stat(libPath); err != nil {
			setupErr = fmt.Errorf("`make -C %s lib` succeeded but %s is missing: %w", repoRoot, libPath, err)
		}
	}
	os.Exit(m.Run())
}

// needPreload fails the test when the library could not be built or MPI is
// missing.
func needPreload(t *testing.T) {
	t.Helper()
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	needMPI(t)
}

func needMPI(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Fatalf("mpirun not found on PATH: these tests need Open MPI; run `make setup` as root or `sudo apt-get install -y openmpi-bin libopenmpi-dev`")
	}
}

// mpiEnv is the environment for mpirun: running as root is allowed (CI and
// these machines run as root) and more ranks than cores are allowed.
func mpiEnv() []string {
	env := os.Environ()
	env = append(env,
		"OMPI_ALLOW_RUN_AS_ROOT=1",
		"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1",
	)
	return env
}

// runResult is what one mpirun left behind.
type runResult struct {
	Stdout, Stderr string
	Elapsed        time.Duration
}

// launcher is one MPI's job launcher and the recorder built for it.
type launcher struct {
	Name     string // "openmpi", "mpich"
	Cmd      string // mpirun, mpiexec.mpich
	Fixed    []string
	Lib      string
	NodeSize string // GCLOCK_NODE_SIZE of traced runs (emulated nodes)
	// Var passes KEY=VALUE to the ranks.
	Var func(kv string) []string
}

var openMPILauncher = launcher{
	Name: "openmpi", Cmd: "mpirun", Fixed: []string{"--oversubscribe"}, NodeSize: fakeNodeSize,
	Var: func(kv string) []string { return []string{"-x", kv} },
}

// mpichLauncher builds build/mpich/libgclock.so (once per test binary) and
// returns MPICH's launcher; a machine without MPICH fails the test.
func mpichLauncher(t *testing.T) launcher {
	t.Helper()
	for _, tool := range []string{"mpiexec.mpich", "mpicc.mpich"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found on PATH: this test runs on MPICH too; run `make setup` as root (installs mpich libmpich-dev)", tool)
		}
	}
	if out, err := exec.Command("make", "-C", repoRoot, "MPI=mpich", "lib").CombinedOutput(); err != nil {
		t.Fatalf("`make MPI=mpich lib` failed: %v\n%s", err, out)
	}
	return launcher{
		Name: "mpich", Cmd: "mpiexec.mpich", Lib: filepath.Join(repoRoot, "build", "mpich", "libgclock.so"), NodeSize: "1",
		Var: func(kv string) []string {
			k, v, _ := strings.Cut(kv, "=")
			return []string{"-genv", k, v}
		},
	}
}

// mpirun runs `mpirun --oversubscribe -np np [preload flags] prog args...`
// in dir. With traceDir != "" the ranks get LD_PRELOAD=libgclock.so,
// GCLOCK_DIR=traceDir and the emulated-cluster clock error.
func mpirun(t *testing.T, dir string, timeout time.Duration, np int, traceDir string, prog string, args ...string) runResult {
	t.Helper()
	l := openMPILauncher
	l.Lib = libPath
	return launch(t, l, dir, timeout, np, traceDir, prog, args...)
}

// launch is mpirun for any launcher.
func launch(t *testing.T, l launcher, dir string, timeout time.Duration, np int, traceDir string, prog string, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	argv := append(append([]string(nil), l.Fixed...), "-np", fmt.Sprint(np))
	if traceDir != "" {
		for _, kv := range []string{"LD_PRELOAD=" + l.Lib, "GCLOCK_DIR=" + traceDir,
			"GCLOCK_NODE_SIZE=" + l.NodeSize, "GCLOCK_FAKE_CLOCK=" + fakeClock} {
			argv = append(argv, l.Var(kv)...)
		}
	}
	argv = append(argv, prog)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, l.Cmd, argv...)
	cmd.Dir = dir
	cmd.Env = mpiEnv()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.WaitDelay = 5 * time.Second
	release, err := mpilaunch.HoldStdin(cmd)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = cmd.Run()
	release()
	res := runResult{Stdout: so.String(), Stderr: se.String(), Elapsed: time.Since(start)}
	what := "without preload"
	if traceDir != "" {
		what = "with LD_PRELOAD=" + l.Lib
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s %s %s: still running after %v (killed)\nstdout:\n%s\nstderr:\n%s",
			l.Cmd, strings.Join(argv, " "), what, timeout, tail(res.Stdout, 40), tail(res.Stderr, 40))
	}
	if err != nil {
		t.Fatalf("%s %s %s: %v\nstdout:\n%s\nstderr:\n%s",
			l.Cmd, strings.Join(argv, " "), what, err, tail(res.Stdout, 40), tail(res.Stderr, 40))
	}
	t.Logf("%s -np %d %s %s: %.2f s", l.Cmd, np, filepath.Base(prog), what, res.Elapsed.Seconds())
	return res
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines cut)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

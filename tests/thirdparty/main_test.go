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

// mpirun runs `mpirun --oversubscribe -np np [preload flags] prog args...`
// in dir. With traceDir != "" the ranks get LD_PRELOAD=libgclock.so,
// GCLOCK_DIR=traceDir and the emulated-cluster clock error.
func mpirun(t *testing.T, dir string, timeout time.Duration, np int, traceDir string, prog string, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	argv := []string{"--oversubscribe", "-np", fmt.Sprint(np)}
	if traceDir != "" {
		argv = append(argv,
			"-x", "LD_PRELOAD="+libPath,
			"-x", "GCLOCK_DIR="+traceDir,
			"-x", "GCLOCK_NODE_SIZE="+fakeNodeSize,
			"-x", "GCLOCK_FAKE_CLOCK="+fakeClock,
		)
	}
	argv = append(argv, prog)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "mpirun", argv...)
	cmd.Dir = dir
	cmd.Env = mpiEnv()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := runResult{Stdout: so.String(), Stderr: se.String(), Elapsed: time.Since(start)}
	what := "without preload"
	if traceDir != "" {
		what = "with LD_PRELOAD=" + libPath
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("mpirun %s %s: still running after %v (killed)\nstdout:\n%s\nstderr:\n%s",
			strings.Join(argv, " "), what, timeout, tail(res.Stdout, 40), tail(res.Stderr, 40))
	}
	if err != nil {
		t.Fatalf("mpirun %s %s: %v\nstdout:\n%s\nstderr:\n%s",
			strings.Join(argv, " "), what, err, tail(res.Stdout, 40), tail(res.Stderr, 40))
	}
	t.Logf("mpirun -np %d %s %s: %.2f s", np, filepath.Base(prog), what, res.Elapsed.Seconds())
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

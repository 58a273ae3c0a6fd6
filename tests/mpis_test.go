package tests

// MPI implementations (issue 11): the core integration tests run on Open
// MPI (mpirun, build/libgclock.so) and on MPICH (mpiexec.mpich,
// build/mpich/libgclock.so, programs compiled with mpicc.mpich). MPICH's ABI
// is the one Intel MPI, MVAPICH and Cray MPICH share.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// mpiImpl is one MPI installation the tests run on.
type mpiImpl struct {
	Name     string // "openmpi", "mpich": subtest names
	Launcher string // mpirun / mpiexec.mpich
	Mpicc    string
	Lib      string // the libgclock.so built for it
	// CFlags are added for this MPI's headers: MPICH's MPI_STATUSES_IGNORE
	// is (MPI_Status *)1, which GCC 12 takes for a zero-size array
	// (-Wstringop-overflow, a false positive).
	CFlags []string
	binDir string
	mu     sync.Mutex
	built  map[string]error // programs compiled (or why not)
	// VarFlag passes one KEY=VALUE to the ranks: Open MPI `-x KEY` (the
	// value from the launcher's environment), MPICH `-genv KEY VALUE`.
	VarFlag func(kv string) []string
}

var openMPI = &mpiImpl{
	Name: "openmpi", Launcher: "mpirun", Mpicc: "mpicc",
	built: map[string]error{},
	VarFlag: func(kv string) []string {
		k, _, _ := strings.Cut(kv, "=")
		return []string{"-x", k}
	},
}

var (
	mpichOnce sync.Once
	mpichImpl *mpiImpl
	mpichErr  error
)

// mpich returns MPICH, building the library for it once; a machine
// without MPICH fails the test with what to install.
func mpich(t *testing.T) *mpiImpl {
	t.Helper()
	mpichOnce.Do(func() {
		for _, tool := range []string{"mpiexec.mpich", "mpicc.mpich"} {
			if _, err := exec.LookPath(tool); err != nil {
				mpichErr = fmt.Errorf("%s not found on PATH: the MPICH runs need MPICH; run `make setup` as root (installs mpich libmpich-dev)", tool)
				return
			}
		}
		if out, err := exec.Command("make", "-C", repoRoot, "MPI=mpich", "lib").CombinedOutput(); err != nil {
			mpichErr = fmt.Errorf("`make MPI=mpich lib` failed: %v\n%s", err, out)
			return
		}
		dir := filepath.Join(binDir, "mpich")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			mpichErr = err
			return
		}
		mpichImpl = &mpiImpl{
			Name: "mpich", Launcher: "mpiexec.mpich", Mpicc: "mpicc.mpich",
			Lib:    filepath.Join(repoRoot, "build", "mpich", "libgclock.so"),
			CFlags: []string{"-Wno-stringop-overflow"},
			binDir: dir, built: map[string]error{},
			VarFlag: func(kv string) []string {
				k, v, _ := strings.Cut(kv, "=")
				return []string{"-genv", k, v}
			},
		}
	})
	if mpichErr != nil {
		t.Fatal(mpichErr)
	}
	return mpichImpl
}

// mpis returns every MPI the core tests run on.
func mpis(t *testing.T) []*mpiImpl {
	t.Helper()
	needSetup(t)
	return []*mpiImpl{openMPI, mpich(t)}
}

// prog returns tests/progs/<name>.c compiled for m (once).
func (m *mpiImpl) prog(t *testing.T, name string) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := filepath.Join(m.binDir, name)
	err, done := m.built[name]
	if !done {
		args := append([]string{"-std=c11", "-O2", "-g", "-pthread", "-Wall", "-Wextra", "-Werror"}, m.CFlags...)
		err = compile(m.Mpicc, append(args, "-o", out, filepath.Join(repoRoot, "tests", "progs", name+".c"))...)
		m.built[name] = err
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// argv is the launcher command for np ranks of prog with env exported.
func (m *mpiImpl) argv(np int, env []string, prog string, args ...string) []string {
	a := []string{m.Launcher, "-np", fmt.Sprint(np)}
	for _, kv := range env {
		a = append(a, m.VarFlag(kv)...)
	}
	return append(append(a, prog), args...)
}

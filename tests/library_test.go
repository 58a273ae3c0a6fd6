package tests

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibrary_ExportsEveryTableRowAndNeverNeedsLibmpi: every MPI function of
// cshim/collectives.tbl (and the lifecycle/comm wrappers) is a defined
// dynamic symbol of libgclock.so, and every MPI reference is weak, so the
// library loads in processes without libmpi; libmpi is not a NEEDED entry.
func TestLibrary_ExportsEveryTableRowAndNeverNeedsLibmpi(t *testing.T) {
	needSetup(t)
	out, err := exec.Command("nm", "-D", libPath).Output()
	if err != nil {
		t.Fatalf("nm -D %s: %v", libPath, err)
	}
	// Every weak MPI reference is one the resolution layer (pmpi_gen.h)
	// looks up when libmpi was dlopen()ed; any other would stay NULL there.
	gen, err := os.ReadFile(filepath.Join(repoRoot, "cshim", "pmpi_gen.h"))
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[1] == "T" {
			defined[f[2]] = true
		}
		if len(f) == 2 && f[0] == "w" && (strings.HasPrefix(f[1], "PMPI_") || strings.HasPrefix(f[1], "ompi_")) &&
			!strings.Contains(string(gen), "*gck_p_"+f[1]+";") {
			t.Errorf("weak reference %s is not resolved through cshim/pmpi_gen.h: it would be NULL when libmpi is dlopen()ed", f[1])
		}
		if len(f) == 2 && f[0] == "U" {
			name := strings.SplitN(f[1], "@", 2)[0]
			if strings.HasPrefix(name, "MPI_") || strings.HasPrefix(name, "PMPI_") || strings.HasPrefix(name, "ompi_") || strings.HasPrefix(name, "MPIR_") {
				t.Errorf("strong undefined reference %s: the library would not load without libmpi", name)
			}
		}
	}
	want := []string{"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Comm_dup", "MPI_Comm_split",
		"MPI_Comm_split_type", "MPI_Comm_create", "MPI_Comm_free", "MPI_Abort"}
	f, err := os.Open(filepath.Join(repoRoot, "cshim", "collectives.tbl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows := 0
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		want = append(want, strings.TrimSpace(strings.SplitN(l, "|", 2)[0]))
		rows++
	}
	if rows < 17 {
		t.Errorf("table has %d rows, want the 17 blocking collectives of MPI-3", rows)
	}
	for _, name := range want {
		if !defined[name] {
			t.Errorf("%s is not exported by %s", name, libPath)
		}
	}
	rd, err := exec.Command("readelf", "-d", libPath).Output()
	if err != nil {
		t.Fatalf("readelf -d: %v", err)
	}
	if strings.Contains(string(rd), "libmpi") {
		t.Errorf("libgclock.so has libmpi as NEEDED:\n%s", rd)
	}
}

// TestCShim_CompilesCleanAsC11: the shim (with the generated wrappers)
// compiles with -std=c11 -Wall -Wextra -Werror against this MPI's mpi.h.
func TestCShim_CompilesCleanAsC11(t *testing.T) {
	needSetup(t)
	obj := filepath.Join(t.TempDir(), "cshim.o")
	out, err := exec.Command("mpicc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-fPIC",
		"-I", filepath.Join(repoRoot, "cshim"), "-c", filepath.Join(repoRoot, "cshim", "libgclock.c"), "-o", obj).CombinedOutput()
	if err != nil {
		t.Fatalf("cshim does not compile cleanly: %v\n%s", err, out)
	}
}

// TestLibrary_NoGoRuntimeBeforeMPIInit: the preloaded libgclock.so is C
// only and loads its Go half (libgclock-go.so, beside it) at MPI_Init, so a
// process that never calls MPI_Init (a shell, mpirun, its daemons) runs no
// Go runtime: it keeps one thread (the one-library recorder started six).
func TestLibrary_NoGoRuntimeBeforeMPIInit(t *testing.T) {
	needSetup(t)
	goHalf := filepath.Join(filepath.Dir(libPath), "libgclock-go.so")
	if _, err := os.Stat(goHalf); err != nil {
		t.Fatalf("the Go half is not beside %s: %v", libPath, err)
	}
	rd, err := exec.Command("readelf", "-d", "--dyn-syms", libPath).Output()
	if err != nil {
		t.Fatalf("readelf %s: %v", libPath, err)
	}
	for _, goName := range []string{"libgclock-go", "crosscall2", "_cgo_", "runtime."} {
		if strings.Contains(string(rd), goName) {
			t.Errorf("%s refers to %q: the Go runtime is linked into the preloaded library", libPath, goName)
		}
	}
	r := runCmd(t, t.TempDir(), []string{"LD_PRELOAD=" + libPath}, "/bin/sh", "-c", `ls /proc/$$/task | wc -l`)
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "1" {
		t.Errorf("a shell under the preload has %q threads (code %d), want 1\n%s", r.Stdout, r.Code, r.Stderr)
	}
}

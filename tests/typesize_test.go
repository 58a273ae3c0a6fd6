package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTypeSize_MPICHBuiltinSizeReadFromHandle: on MPICH-family MPIs the
// recorder reads a builtin datatype's size from its handle instead of
// calling PMPI_Type_size (cshim/bytes.h, gclock_builtin_size). Every
// datatype constant of MPICH's mpi.h (taken from the preprocessor, not a
// list of ours) must get either the size MPI_Type_size reports or a
// deferral to it; most named scalar types must be read from the handle.
func TestTypeSize_MPICHBuiltinSizeReadFromHandle(t *testing.T) {
	m := mpich(t)
	cmd := exec.Command(m.Mpicc, "-E", "-dM", "-x", "c", "-")
	cmd.Stdin = strings.NewReader("#include <mpi.h>\n")
	macros, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -E -dM: %v", m.Mpicc, err)
	}
	def := regexp.MustCompile(`^#define (MPIX?_[A-Z0-9_]+) \(\(MPI_Datatype\)0x[0-9a-fA-F]+\)$`)
	var names []string
	for _, l := range strings.Split(string(macros), "\n") {
		if d := def.FindStringSubmatch(strings.TrimSpace(l)); d != nil && d[1] != "MPI_DATATYPE_NULL" {
			names = append(names, d[1])
		}
	}
	if len(names) < 50 {
		t.Fatalf("found %d datatype constants in MPICH's mpi.h, want at least 50:\n%s", len(names), macros)
	}
	var src strings.Builder
	fmt.Fprintf(&src, "#define _GNU_SOURCE\n#include <stdio.h>\n#include %q\n", filepath.Join(repoRoot, "cshim", "gclock.h"))
	src.WriteString("static const struct { const char *name; MPI_Datatype t; } types[] = {\n")
	for _, n := range names {
		fmt.Fprintf(&src, "\t{%q, %s},\n", n, n)
	}
	src.WriteString(`};
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int fast = 0, bad = 0, n = (int)(sizeof types / sizeof types[0]);
	for (int i = 0; i < n; i++) {
		int sz = -1;
		int rc = MPI_Type_size(types[i].t, &sz);
		int b = gclock_builtin_size(types[i].t);
		if (b >= 0) {
			fast++;
			if (rc != MPI_SUCCESS || b != sz) {
				bad++;
				printf("MISMATCH %s: handle says %d, MPI_Type_size %d (rc %d)\n", types[i].name, b, sz, rc);
			}
		}
	}
	printf("typesize: %d types, %d read from the handle, %d mismatches\n", n, fast, bad);
	MPI_Finalize();
	return bad != 0;
}
`)
	dir := t.TempDir()
	cfile, bin := filepath.Join(dir, "typesize.c"), filepath.Join(dir, "typesize")
	if err := os.WriteFile(cfile, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"}, m.CFlags...)
	if err := compile(m.Mpicc, append(args, "-o", bin, cfile)...); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(m.Launcher, "-np", "1", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("typesize: %v\n%s", err, out)
	}
	sum := regexp.MustCompile(`typesize: (\d+) types, (\d+) read from the handle, (\d+) mismatches`).FindSubmatch(out)
	if sum == nil {
		t.Fatalf("typesize printed no summary:\n%s", out)
	}
	total, _ := strconv.Atoi(string(sum[1]))
	fast, _ := strconv.Atoi(string(sum[2]))
	if string(sum[3]) != "0" {
		t.Errorf("sizes read from handles differ from MPI_Type_size:\n%s", out)
	}
	if total != len(names) || fast < 40 {
		t.Errorf("%d of %d datatype constants read from the handle, want at least 40:\n%s", fast, total, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

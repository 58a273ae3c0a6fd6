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

// mpichDatatypeDef matches a datatype constant of MPICH's mpi.h in the
// preprocessor's macro list.
var mpichDatatypeDef = regexp.MustCompile(`^#define (MPIX?_[A-Z0-9_]+) \(\(MPI_Datatype\)0x[0-9a-fA-F]+\)$`)

// TestTypeSize_MPICHBuiltinSizeReadFromHandle: on MPICH-family MPIs the
// recorder reads a builtin datatype's size from its handle instead of
// calling PMPI_Type_size (cshim/typesize.h, gclock_builtin_size). Every
// datatype constant of MPICH's mpi.h (taken from the preprocessor, not a
// list of ours) must get either the size MPI_Type_size reports or a
// deferral to it; most named scalar types must be read from the handle.
func TestTypeSize_MPICHBuiltinSizeReadFromHandle(t *testing.T) {
	m := mpich(t)
	names := datatypeConstants(t, m, mpichDatatypeDef)
	var src strings.Builder
	fmt.Fprintf(&src, "#define _GNU_SOURCE\n#include <stdio.h>\n#include %q\n", filepath.Join(repoRoot, "cshim", "typesize.h"))
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

// TestTypeSize_RecordedBytesMatchMPITypeSize: the bytes recorded for a
// send and a receive are count × MPI_Type_size for every datatype constant
// of the MPI's mpi.h (taken from the preprocessor), each sent twice (on
// Open MPI the second send reads the size cached by handle, cshim/bytes.c
// gclock_type_size), and for derived datatypes freed and re-created, so
// that one handle comes back with another size (a cache that kept a
// derived datatype's size would record the old one).
func TestTypeSize_RecordedBytesMatchMPITypeSize(t *testing.T) {
	defs := map[string]*regexp.Regexp{
		"openmpi": regexp.MustCompile(`^#define (MPIX?_[A-Z0-9_]+) OMPI_PREDEFINED_GLOBAL\( *MPI_Datatype *, *\w+ *\)$`),
		"mpich":   mpichDatatypeDef,
	}
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			names := datatypeConstants(t, m, defs[m.Name])
			dir := t.TempDir()
			bin := filepath.Join(dir, "typesizes")
			cfile := bin + ".c"
			if err := os.WriteFile(cfile, []byte(typeSizesProgram(names)), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"}, m.CFlags...)
			if err := compile(m.Mpicc, append(args, "-o", bin, cfile)...); err != nil {
				t.Fatal(err)
			}
			env := []string{"LD_PRELOAD=" + m.Lib, "GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}
			res := runCmd(t, dir, env, m.argv(1, env, bin)...)
			if res.Code != 0 {
				t.Fatalf("typesizes exited %d:\n%s\n%s", res.Code, res.Stdout, res.Stderr)
			}
			var want []uint64
			var labels []string
			for _, l := range strings.Split(res.Stdout, "\n") {
				var name string
				var b uint64
				if n, _ := fmt.Sscanf(l, "xfer %s %d", &name, &b); n == 2 {
					want = append(want, b)
					labels = append(labels, name)
				}
			}
			sum := regexp.MustCompile(`typesizes: (\d+) transfers, (\d+) derived handles re-used`).FindStringSubmatch(res.Stdout)
			if sum == nil {
				t.Fatalf("typesizes printed no summary:\n%s", res.Stdout)
			}
			if n, _ := strconv.Atoi(sum[1]); n != len(want) || n < 2*40 {
				t.Fatalf("%s transfers reported, %d listed; want the same and at least 80 (40 datatypes twice)", sum[1], len(want))
			}
			if sum[2] == "0" {
				t.Errorf("no derived datatype handle came back after MPI_Type_free: the re-use case was not exercised")
			}
			evs := readTraces(t, dir, 1)[0].Events
			var sends, recvs []uint64
			for _, e := range evs {
				switch e.Op.String() {
				case "MPI_Isend":
					sends = append(sends, e.Sent)
				case "MPI_Irecv":
					recvs = append(recvs, e.Recv)
				}
			}
			if len(sends) != len(want) || len(recvs) != len(want) {
				t.Fatalf("trace holds %d MPI_Isend and %d MPI_Irecv events, the program made %d of each", len(sends), len(recvs), len(want))
			}
			bad := 0
			for i := range want {
				if sends[i] != want[i] || recvs[i] != want[i] {
					if bad++; bad <= 10 {
						t.Errorf("transfer %d (%s): recorded sent %d, recv %d; MPI_Type_size says %d", i, labels[i], sends[i], recvs[i], want[i])
					}
				}
			}
			t.Logf("%d transfers over %d datatype constants; %s derived handles re-used", len(want), len(names), sum[2])
		})
	}
}

// datatypeConstants returns the names of the datatype constants m's mpi.h
// defines (the lines def matches), MPI_DATATYPE_NULL left out.
func datatypeConstants(t *testing.T, m *mpiImpl, def *regexp.Regexp) []string {
	t.Helper()
	cmd := exec.Command(m.Mpicc, "-E", "-dM", "-x", "c", "-")
	cmd.Stdin = strings.NewReader("#include <mpi.h>\n")
	macros, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -E -dM: %v", m.Mpicc, err)
	}
	var names []string
	for _, l := range strings.Split(string(macros), "\n") {
		if d := def.FindStringSubmatch(strings.TrimSpace(l)); d != nil && d[1] != "MPI_DATATYPE_NULL" {
			names = append(names, d[1])
		}
	}
	if len(names) < 50 {
		t.Fatalf("found %d datatype constants in %s's mpi.h, want at least 50", len(names), m.Name)
	}
	return names
}

// typeSizesProgram is a one-rank program that sends 3 elements of each
// datatype to itself twice (MPI_Irecv, MPI_Isend, MPI_Waitall) and then
// derived datatypes of 1..16 ints, each freed before the next is made,
// printing "xfer NAME BYTES" per transfer in order.
func typeSizesProgram(names []string) string {
	var src strings.Builder
	src.WriteString("#define _GNU_SOURCE\n#include <mpi.h>\n#include <stdio.h>\n")
	src.WriteString("static const struct { const char *name; MPI_Datatype t; } types[] = {\n")
	for _, n := range names {
		fmt.Fprintf(&src, "\t{%q, %s},\n", n, n)
	}
	src.WriteString(`};
static char sbuf[4096], rbuf[4096];
static int transfers;

static void xfer(const char *name, MPI_Datatype t, int count, int size)
{
	MPI_Request r[2];
	MPI_Irecv(rbuf, count, t, 0, 7, MPI_COMM_WORLD, &r[0]);
	MPI_Isend(sbuf, count, t, 0, 7, MPI_COMM_WORLD, &r[1]);
	MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	printf("xfer %s %lld\n", name, (long long)count * size);
	transfers++;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int n = (int)(sizeof types / sizeof types[0]);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++) {
			int sz = -1;
			MPI_Aint lb = 0, ext = 0;
			if (MPI_Type_size(types[i].t, &sz) != MPI_SUCCESS || sz <= 0 ||
			    MPI_Type_get_extent(types[i].t, &lb, &ext) != MPI_SUCCESS || lb != 0 || ext <= 0 ||
			    3 * ext > (MPI_Aint)sizeof sbuf)
				continue;
			xfer(types[i].name, types[i].t, 3, sz);
		}
	MPI_Datatype prev = MPI_DATATYPE_NULL;
	int reused = 0;
	for (int k = 1; k <= 16; k++) {
		MPI_Datatype d;
		int sz = -1;
		MPI_Type_contiguous(k, MPI_INT, &d);
		MPI_Type_commit(&d);
		MPI_Type_size(d, &sz);
		reused += d == prev;
		prev = d;
		xfer("contiguous", d, 3, sz);
		xfer("contiguous", d, 3, sz);
		MPI_Type_free(&d);
	}
	printf("typesizes: %d transfers, %d derived handles re-used\n", transfers, reused);
	MPI_Finalize();
	return 0;
}
`)
	return src.String()
}

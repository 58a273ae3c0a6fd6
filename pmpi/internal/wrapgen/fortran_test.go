package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestFortran_EveryRowBecomesAFortranWrapperRecordingItsOp parses the
// generated cshim/fortran_gen.c: each table row has exactly one Fortran
// wrapper body, exported under the four mpif.h manglings and Open MPI's
// f08 name (GCK_F_WRAP), which records the row's op (collectives:
// gclock_record; the others: cx.op) and calls the real entry point on
// every path.
func TestFortran_EveryRowBecomesAFortranWrapperRecordingItsOp(t *testing.T) {
	rows := readTable(t)
	gen, err := GenerateFortran(rows)
	if err != nil {
		t.Fatal(err)
	}
	src := string(gen)
	bodyRe := regexp.MustCompile(`(?m)^GCK_F_INLINE void body_(\w+)\(`)
	bodies := map[string]string{}
	locs := bodyRe.FindAllStringSubmatchIndex(src, -1)
	for i, l := range locs {
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := src[l[2]:l[3]]
		if _, dup := bodies[name]; dup {
			t.Errorf("body_%s defined twice", name)
		}
		bodies[name] = src[l[0]:end]
	}
	var fortranRows []Row
	for _, r := range rows {
		if !r.LargeCount { // MPI-4 `_c` variants: C only
			fortranRows = append(fortranRows, r)
		}
	}
	if len(bodies) != len(fortranRows) {
		t.Errorf("%d Fortran wrappers generated for %d rows", len(bodies), len(fortranRows))
	}
	for _, r := range fortranRows {
		lower := FortranName(r.Name)
		body, ok := bodies[lower]
		if !ok {
			t.Errorf("row %s (line %d): no Fortran wrapper", r.Name, r.Line)
			continue
		}
		if !strings.Contains(body, "\nGCK_F_WRAP("+lower+", "+strings.ToUpper(lower)+", (") &&
			!strings.Contains(body, "\nGCK_F_WRAP_BUF("+lower+", "+strings.ToUpper(lower)+", (") {
			t.Errorf("%s: not exported under its manglings (GCK_F_WRAP)", r.Name)
		}
		var m [][]string
		if r.P2P {
			m = regexp.MustCompile(`cx\.op = (GCK_OP_\w+);`).FindAllStringSubmatch(body, -1)
		} else {
			m = regexp.MustCompile(`gclock_record\((GCK_OP_\w+),`).FindAllStringSubmatch(body, -1)
		}
		if len(m) != 1 || m[0][1] != OpConst(r.Op) {
			t.Errorf("%s: records %v, want exactly %s", r.Name, m, OpConst(r.Op))
		}
		// Paths: pass-through when not recording, the recorded call, and
		// for collectives the unknown-communicator path.
		want := 2
		if !r.P2P {
			want = 3
		}
		if n := strings.Count(body, "\t\treal(") + strings.Count(body, "\treal("); n < want {
			t.Errorf("%s: calls the real entry point on %d paths, want %d", r.Name, n, want)
		}
	}
}

// TestFortran_GeneratedUpToDate: the checked-in cshim/fortran_gen.c is what
// the tables produce now (run `go generate ./pmpi` if this fails).
func TestFortran_GeneratedUpToDate(t *testing.T) {
	gen, err := GenerateFortran(readTable(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../cshim/fortran_gen.c")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(gen) {
		t.Error("cshim/fortran_gen.c is stale: run `go generate ./pmpi`")
	}
}

// TestFortranKind_EveryParameterMapped: an unknown C parameter type is an
// error naming it, not a silently wrong wrapper.
func TestFortranKind_EveryParameterMapped(t *testing.T) {
	for _, c := range []struct {
		decl string
		want fkind
		ok   bool
	}{
		{"const void *sendbuf", fkBuf, true},
		{"MPI_Comm comm", fkComm, true},
		{"MPI_Datatype datatype", fkType, true},
		{"const MPI_Datatype sendtypes[]", fkTypeArr, true},
		{"MPI_Status *status", fkStatus, true},
		{"MPI_Status array_of_statuses[]", fkStatuses, true},
		{"MPI_Request *request", fkRequest, true},
		{"MPI_Request array_of_requests[]", fkRequests, true},
		{"const int recvcounts[]", fkIntArr, true},
		{"int array_of_indices[]", fkIndices, true},
		{"int *index", fkIndex, true},
		{"int *flag", fkIntOut, true},
		{"int count", fkInt, true},
		{"MPI_Win win", fkWin, true},
		{"MPI_Win *win", fkWinPtr, true},
		{"MPI_Aint target_disp", fkAint, true},
		{"MPI_Group group", fkGroup, true},
		{"MPI_Info info", fkHandle, true},
		{"MPI_File fh", 0, false},
	} {
		m := identRe.FindStringSubmatch(c.decl)
		k, err := fortranKind(Param{Decl: c.decl, Name: m[1]})
		if (err == nil) != c.ok || (c.ok && k != c.want) {
			t.Errorf("fortranKind(%q) = %v, %v; want %v (ok %v)", c.decl, k, err, c.want, c.ok)
		}
	}
}

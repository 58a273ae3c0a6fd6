package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace"
)

func readTable(t *testing.T) []Row {
	t.Helper()
	text, err := os.ReadFile("../../../cshim/collectives.tbl")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseTable(string(text))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestGenerated_UpToDate: the checked-in cshim files are what the table
// and trace/ops.go produce now (run `go generate ./pmpi` if this fails).
func TestGenerated_UpToDate(t *testing.T) {
	rows := readTable(t)
	for path, want := range map[string][]byte{
		"../../../cshim/wrappers_gen.c": GenerateWrappers(rows),
		"../../../cshim/ops_gen.h":      GenerateOps(),
	} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate ./pmpi`", path)
		}
	}
}

// TestTable_EveryRowBecomesAWrapperRecordingItsOp parses the generated C:
// each table row has exactly one wrapper definition, which calls its own
// PMPI function and records the op constant whose value is the row's
// trace.Op; and every collective op of trace/ops.go has a row.
func TestTable_EveryRowBecomesAWrapperRecordingItsOp(t *testing.T) {
	rows := readTable(t)
	src := string(GenerateWrappers(rows))
	consts := map[string]int{}
	for _, m := range regexp.MustCompile(`#define (GCLOCK_OP_\w+) (\d+)`).FindAllStringSubmatch(string(GenerateOps()), -1) {
		n := 0
		for _, c := range m[2] {
			n = n*10 + int(c-'0')
		}
		consts[m[1]] = n
	}
	funcRe := regexp.MustCompile(`(?m)^int (MPI_\w+)\(`)
	bodies := map[string]string{}
	locs := funcRe.FindAllStringSubmatchIndex(src, -1)
	for i, l := range locs {
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := src[l[2]:l[3]]
		if _, dup := bodies[name]; dup {
			t.Errorf("%s defined twice", name)
		}
		bodies[name] = src[l[0]:end]
	}
	if len(bodies) != len(rows) {
		t.Errorf("%d wrappers generated for %d rows", len(bodies), len(rows))
	}
	covered := map[trace.Op]bool{}
	for _, r := range rows {
		body, ok := bodies[r.Name]
		if !ok {
			t.Errorf("row %s (line %d): no wrapper generated", r.Name, r.Line)
			continue
		}
		m := regexp.MustCompile(`gclock_record\((GCLOCK_OP_\w+),`).FindAllStringSubmatch(body, -1)
		if len(m) != 1 {
			t.Errorf("%s: %d gclock_record calls, want 1", r.Name, len(m))
			continue
		}
		if v, ok := consts[m[0][1]]; !ok || trace.Op(v) != r.Op || trace.Op(v).String() != r.Name {
			t.Errorf("%s records %s = %d, want op %d (%s)", r.Name, m[0][1], v, r.Op, r.Op)
		}
		if strings.Count(body, "P"+r.Name+"(") != 3 {
			t.Errorf("%s: does not call P%s on each of its 3 paths", r.Name, r.Name)
		}
		covered[r.Op] = true
	}
	for _, op := range trace.Ops() {
		if op.IsCollective() && !covered[op] {
			t.Errorf("collective %s has no row in cshim/collectives.tbl", op)
		}
	}
}

func TestParseTable_RejectsBadRows(t *testing.T) {
	for name, text := range map[string]string{
		"unknown op":   "MPI_Foo | MPI_Comm comm | none()",
		"no comm":      "MPI_Barrier | int x | none()",
		"bad rule arg": "MPI_Bcast | void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm | bcast(cnt, datatype, root)",
		"columns":      "MPI_Barrier | MPI_Comm comm",
		"twice":        "MPI_Barrier | MPI_Comm comm | none()\nMPI_Barrier | MPI_Comm comm | none()",
	} {
		if _, err := ParseTable(text); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

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
	rows, err := ReadTables("../../../cshim/collectives.tbl", "../../../cshim/p2p.tbl", "../../../cshim/rma.tbl",
		"../../../cshim/largecount.tbl")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestLargeCountTable_RowsRecordTheirTwinsOpOnMPI4Only: every row of
// cshim/largecount.tbl is an MPI_*_c function recorded as its int-count
// twin's op, generated like the twin (a collective's single
// gclock_record, a p2p rule's helpers), inside `#if MPI_VERSION >= 4`
// together with its PMPI pointer, and without a Fortran wrapper.
func TestLargeCountTable_RowsRecordTheirTwinsOpOnMPI4Only(t *testing.T) {
	rows := readTable(t)
	src := string(GenerateWrappers(rows))
	bodies := wrapperBodies(t, src)
	names, err := PMPINames(rows, "../../../cshim")
	if err != nil {
		t.Fatal(err)
	}
	resolveH := string(GenerateResolveH(names))
	fortran, err := GenerateFortran(rows)
	if err != nil {
		t.Fatal(err)
	}
	twins := map[string]Row{}
	for _, r := range rows {
		if !r.LargeCount {
			twins[r.Name] = r
		}
	}
	n := 0
	for _, r := range rows {
		if r.Table != "largecount.tbl" {
			if r.LargeCount {
				t.Errorf("%s (%s) is a large-count row outside largecount.tbl", r.Name, r.Table)
			}
			continue
		}
		n++
		base, ok := strings.CutSuffix(r.Name, LargeCountSuffix)
		twin, has := twins[base]
		if !ok || !r.LargeCount || !has || r.Op != twin.Op || r.P2P != twin.P2P || r.Rule != twin.Rule {
			t.Errorf("%s: op %s, rule %q (p2p %v); its twin %s: op %s, rule %q (p2p %v)", r.Name, r.Op, r.Rule, r.P2P, base, twin.Op, twin.Rule, twin.P2P)
		}
		body := bodies[r.Name]
		at := strings.Index(src, "int "+r.Name+"(")
		if body == "" || at < 0 || !strings.HasSuffix(strings.TrimSpace(src[:at]), "*/") ||
			!strings.Contains(src[:at][strings.LastIndex(src[:at], "\n#")+1:], "#if MPI_VERSION >= 4") {
			t.Errorf("%s: wrapper missing or not inside #if MPI_VERSION >= 4", r.Name)
		}
		if !strings.Contains(body, OpConst(r.Op)) || strings.Count(body, "P"+r.Name+"(") < 2 {
			t.Errorf("%s: does not record %s or call P%s", r.Name, OpConst(r.Op), r.Name)
		}
		decl := "*gck_p_P" + r.Name + ";"
		if i := strings.Index(resolveH, decl); i < 0 || strings.LastIndex(resolveH[:i], "#if MPI_VERSION >= 4") < strings.LastIndex(resolveH[:i], "#endif") {
			t.Errorf("P%s: pointer not declared inside #if MPI_VERSION >= 4", r.Name)
		}
		if strings.Contains(string(fortran), strings.ToLower(r.Name)) {
			t.Errorf("%s has a Fortran wrapper", r.Name)
		}
	}
	if n < 72 {
		t.Errorf("largecount.tbl has %d rows, want the 72 variants of the wrapped int-count calls", n)
	}
}

// TestGenerated_UpToDate: the checked-in cshim files are what the table
// and trace/ops.go produce now (run `go generate ./pmpi` if this fails).
func TestGenerated_UpToDate(t *testing.T) {
	rows := readTable(t)
	names, err := PMPINames(rows, "../../../cshim")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]byte{
		"../../../cshim/wrappers_gen.c": GenerateWrappers(rows),
		"../../../cshim/ops_gen.h":      GenerateOps(),
		"../../../cshim/pmpi_gen.h":     GenerateResolveH(names),
		"../../../cshim/pmpi_gen.c":     GenerateResolveC(names),
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
	for _, m := range regexp.MustCompile(`#define (GCK_OP_\w+) (\d+)`).FindAllStringSubmatch(string(GenerateOps()), -1) {
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
		if r.P2P {
			continue // TestP2PTable_EveryRowBecomesAWrapperRecordingItsOp
		}
		body, ok := bodies[r.Name]
		if !ok {
			t.Errorf("row %s (line %d): no wrapper generated", r.Name, r.Line)
			continue
		}
		m := regexp.MustCompile(`gclock_record\((GCK_OP_\w+),`).FindAllStringSubmatch(body, -1)
		if len(m) != 1 {
			t.Errorf("%s: %d gclock_record calls, want 1", r.Name, len(m))
			continue
		}
		if v, ok := consts[m[0][1]]; !ok || trace.Op(v) != r.Op || trace.Op(v).String() != r.TwinName() {
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

// wrapperBodies splits generated C into wrapper bodies by function name.
func wrapperBodies(t *testing.T, src string) map[string]string {
	t.Helper()
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
	return bodies
}

// TestP2PTable_EveryRowBecomesAWrapperRecordingItsOp: every p2p.tbl row
// has one wrapper that sets the op constant whose value is the row's
// trace.Op, calls its own PMPI function on the pass-through and the
// recording path, runs its rule's _pre before and _post after the timed
// call, and hands PMPI the rule's statuses; every point-to-point and
// nonblocking-collective op of trace/ops.go (but gclock_polls) has a row.
func TestP2PTable_EveryRowBecomesAWrapperRecordingItsOp(t *testing.T) {
	rows := readTable(t)
	src := string(GenerateWrappers(rows))
	consts := map[string]int{}
	for _, m := range regexp.MustCompile(`#define (GCK_OP_\w+) (\d+)`).FindAllStringSubmatch(string(GenerateOps()), -1) {
		n := 0
		for _, c := range m[2] {
			n = n*10 + int(c-'0')
		}
		consts[m[1]] = n
	}
	bodies := wrapperBodies(t, src)
	covered := map[trace.Op]bool{}
	np := 0
	for _, r := range rows {
		if !r.P2P {
			continue
		}
		np++
		body, ok := bodies[r.Name]
		if !ok {
			t.Errorf("row %s (line %d): no wrapper generated", r.Name, r.Line)
			continue
		}
		m := regexp.MustCompile(`cx\.op = (GCK_OP_\w+);`).FindAllStringSubmatch(body, -1)
		if len(m) != 1 {
			t.Errorf("%s: %d op assignments, want 1", r.Name, len(m))
			continue
		}
		if v, ok := consts[m[0][1]]; !ok || trace.Op(v) != r.Op || trace.Op(v).String() != r.TwinName() {
			t.Errorf("%s records %s = %d, want op %d (%s)", r.Name, m[0][1], v, r.Op, r.Op)
		}
		if strings.Count(body, "P"+r.Name+"(") != 2 {
			t.Errorf("%s: does not call P%s on each of its 2 paths", r.Name, r.Name)
		}
		pre, post := "gclock_p2p_"+r.Rule+"_pre(&cx", "gclock_p2p_"+r.Rule+"_post(&cx, rc"
		if strings.HasPrefix(r.Rule, IcollPrefix) {
			pre, post = "gclock_bytes_"+strings.TrimPrefix(r.Rule, IcollPrefix)+"(cx.cs", "gclock_p2p_icoll_post(&cx, rc"
			if !strings.Contains(body, "gclock_p2p_icoll_pre(&cx, comm)") {
				t.Errorf("%s: no icoll_pre", r.Name)
			}
			if !r.Op.IsNonblockingCollective() {
				t.Errorf("%s: icoll rule on an op that is not a nonblocking collective", r.Name)
			}
		}
		ip, it0, ic, it1, ipo := strings.Index(body, pre), strings.Index(body, "cx.t0 = gclock_now()"),
			strings.LastIndex(body, "P"+r.Name+"("), strings.Index(body, "cx.t1 = gclock_now()"), strings.Index(body, post)
		if ip < 0 || ipo < 0 || !(ip < it0 && it0 < ic && ic < it1 && it1 < ipo) {
			t.Errorf("%s: want pre, t0, PMPI call, t1, post in this order:\n%s", r.Name, body)
		}
		for _, p := range r.Params {
			if p.Name == "status" && !strings.Contains(body[ic:it1], "cx.st") ||
				p.Name == "array_of_statuses" && !strings.Contains(body[ic:it1], "cx.sts") {
				t.Errorf("%s: %s not substituted in the timed call", r.Name, p.Name)
			}
		}
		covered[r.Op] = true
	}
	if np == 0 {
		t.Fatal("no p2p rows")
	}
	for _, op := range trace.Ops() {
		if (op.IsPointToPoint() || op.IsNonblockingCollective()) && op != trace.OpPolls && !covered[op] {
			t.Errorf("%s has no row in cshim/p2p.tbl", op)
		}
	}
}

func TestParseP2PTable_RejectsBadRows(t *testing.T) {
	for name, text := range map[string]string{
		"unknown op":         "MPI_Foo | MPI_Request *request | wait(request)",
		"bad rule arg":       "MPI_Wait | MPI_Request *request, MPI_Status *status | wait(req, status)",
		"icoll without req":  "MPI_Ibarrier | MPI_Comm comm | icoll_none()",
		"icoll without comm": "MPI_Ibarrier | MPI_Request *request | icoll_none()",
	} {
		if _, err := ParseP2PTable(text); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

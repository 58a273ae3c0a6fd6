// Command wrapgen generates gclock's MPI wrappers from ONE table.
//
// It reads cshim/collectives.tbl (one row per wrapped MPI function: name, C
// parameter list, byte-count rule), cshim/p2p.tbl (point-to-point, request
// and nonblocking-collective calls: name, C parameter list, recording rule),
// cshim/rma.tbl (one-sided calls, the same columns as p2p.tbl, rules in
// cshim/rma.h), cshim/largecount.tbl (MPI-4 large-count `_c` variants,
// recorded as the op of their int-count twin) and trace's op list, and writes cshim/wrappers_gen.c (one
// wrapper per row of the tables) and cshim/ops_gen.h (the trace.Op codes
// as C constants). Run it with `go generate ./pmpi`.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gclock/gclock/trace"
)

// Param is one C parameter of a wrapped function.
type Param struct {
	Decl string // as written, e.g. "const int recvcounts[]"
	Name string // e.g. "recvcounts"
}

// Row is one wrapped function.
type Row struct {
	Line     int
	Name     string // MPI function name, e.g. "MPI_Bcast"
	Op       trace.Op
	Params   []Param
	Rule     string   // byte-count rule name (gclock_bytes_<Rule>)
	RuleArgs []string // parameter names passed to the rule
	HasRoot  bool
	// P2P rows (cshim/p2p.tbl) call gclock_p2p_<Rule>_pre/_post; an
	// icoll_ rule is a nonblocking collective whose bytes come from the
	// collectives' byte rule Rule[len("icoll_"):].
	P2P bool
	// Table is the file the row came from ("collectives.tbl", "p2p.tbl",
	// "rma.tbl"), for the generated comments.
	Table string
	// LargeCount marks an MPI-4 large-count variant (MPI_Send_c): Op is
	// its int-count twin's, the wrapper is compiled only against an MPI-4
	// mpi.h, and it has no Fortran wrapper.
	LargeCount bool
}

// LargeCountSuffix ends the name of an MPI-4 large-count variant.
const LargeCountSuffix = "_c"

// CollPrefix marks a row of a point-to-point-style table as a blocking
// collective: bytes by the collectives' byte rule Rule[len("coll_"):],
// generated like a collectives.tbl row.
const CollPrefix = "coll_"

// IcollPrefix marks a p2p.tbl rule as a nonblocking collective.
const IcollPrefix = "icoll_"

// ParseP2PTable parses cshim/p2p.tbl: the same three columns as
// collectives.tbl, the third naming a rule of cshim/p2p_rules.h.
func ParseP2PTable(text string) ([]Row, error) {
	rows, err := parseRows(text, false)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		r := &rows[i]
		r.P2P = true
		if strings.HasPrefix(r.Rule, CollPrefix) {
			r.P2P = false
			r.Rule = strings.TrimPrefix(r.Rule, CollPrefix)
			if !hasParam(r, "comm") {
				return nil, fmt.Errorf("line %d: %s: a collective needs a parameter comm", r.Line, r.Name)
			}
			continue
		}
		if strings.HasPrefix(r.Rule, IcollPrefix) {
			have := map[string]bool{}
			for _, p := range r.Params {
				have[p.Name] = true
			}
			if !have["comm"] || !have["request"] {
				return nil, fmt.Errorf("line %d: %s: a nonblocking collective needs parameters comm and request", r.Line, r.Name)
			}
		}
	}
	return rows, nil
}

func hasParam(r *Row, name string) bool {
	for _, p := range r.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

var identRe = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(\[\s*\])?\s*$`)
var ruleRe = regexp.MustCompile(`^([a-z_]+)\((.*)\)$`)

// ParseTable parses the collectives table text. Every error names the line.
func ParseTable(text string) ([]Row, error) { return parseRows(text, true) }

func parseRows(text string, needComm bool) ([]Row, error) {
	var rows []Row
	seen := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		ln := i + 1
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "|")
		if len(cols) != 3 {
			return nil, fmt.Errorf("line %d: want 3 '|'-separated columns, got %d", ln, len(cols))
		}
		r := Row{Line: ln, Name: strings.TrimSpace(cols[0])}
		op, ok := trace.OpByName(r.Name)
		if base, large := strings.CutSuffix(r.Name, LargeCountSuffix); !ok && large {
			op, ok = trace.OpByName(base)
			r.LargeCount = ok
		}
		if !ok {
			return nil, fmt.Errorf("line %d: %s is not a trace.Op name (add it to trace/ops.go first)", ln, r.Name)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("line %d: %s listed twice", ln, r.Name)
		}
		seen[r.Name] = true
		r.Op = op
		names := map[string]bool{}
		for _, p := range strings.Split(cols[1], ",") {
			p = strings.TrimSpace(p)
			m := identRe.FindStringSubmatch(p)
			if m == nil || m[1] == p {
				return nil, fmt.Errorf("line %d: cannot parse parameter %q", ln, p)
			}
			r.Params = append(r.Params, Param{Decl: p, Name: m[1]})
			names[m[1]] = true
		}
		if needComm && !names["comm"] {
			return nil, fmt.Errorf("line %d: %s has no parameter named comm", ln, r.Name)
		}
		r.HasRoot = names["root"]
		m := ruleRe.FindStringSubmatch(strings.TrimSpace(cols[2]))
		if m == nil {
			return nil, fmt.Errorf("line %d: rule %q is not name(args)", ln, strings.TrimSpace(cols[2]))
		}
		r.Rule = m[1]
		if a := strings.TrimSpace(m[2]); a != "" {
			for _, arg := range strings.Split(a, ",") {
				arg = strings.TrimSpace(arg)
				if !names[arg] {
					return nil, fmt.Errorf("line %d: rule argument %q is not a parameter of %s", ln, arg, r.Name)
				}
				r.RuleArgs = append(r.RuleArgs, arg)
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("table has no rows")
	}
	return rows, nil
}

// OpConst is the C constant naming op, e.g. GCK_OP_MPI_BCAST.
func OpConst(op trace.Op) string {
	return "GCK_OP_" + strings.ToUpper(op.String())
}

// GenerateOps returns cshim/ops_gen.h.
func GenerateOps() []byte {
	var b bytes.Buffer
	b.WriteString("/* Code generated by pmpi/internal/wrapgen from trace/ops.go; DO NOT EDIT. */\n")
	b.WriteString("#ifndef GCK_OPS_GEN_H\n#define GCK_OPS_GEN_H\n\n")
	fmt.Fprintf(&b, "#define %s %d\n", "GCK_OP_UNKNOWN", int(trace.OpUnknown))
	for _, op := range trace.Ops() {
		fmt.Fprintf(&b, "#define %s %d\n", OpConst(op), int(op))
	}
	ops := trace.Ops()
	fmt.Fprintf(&b, "#define GCK_OP_COUNT %d /* one more than the largest code */\n", int(ops[len(ops)-1])+1)
	b.WriteString("\n#endif\n")
	return b.Bytes()
}

// wrapperIncludes are the headers the generated C and Fortran wrappers use:
// gclock.h's types, the hot path's timer read, communicator lookup and
// per-call writes, the byte rules and the point-to-point and RMA rules.
// The headers only declare; the rules' bodies are compiled into the one
// translation unit (cshim/libgclock.c) before the generated files.
const wrapperIncludes = "#include \"gclock.h\"\n#include \"hotpath.h\"\n#include \"bytes.h\"\n#include \"requests.h\"\n#include \"p2p_rules.h\"\n#include \"rma.h\"\n"

// GenerateWrappers returns cshim/wrappers_gen.c for the rows of
// collectives.tbl followed by those of p2p.tbl.
func GenerateWrappers(rows []Row) []byte {
	var b bytes.Buffer
	b.WriteString("/* Code generated by pmpi/internal/wrapgen from cshim/collectives.tbl, cshim/p2p.tbl and cshim/rma.tbl; DO NOT EDIT. */\n")
	b.WriteString(wrapperIncludes)
	b.WriteString("\n")
	b.WriteString("/* PMPI_* names are pointers resolved wherever libmpi is loaded (pmpi_gen.h). */\n\n")
	for _, r := range rows {
		if r.LargeCount {
			b.WriteString("#if MPI_VERSION >= 4 /* large-count variant: MPI-4 mpi.h only */\n")
		}
		if r.P2P {
			generateP2P(&b, r)
		} else {
			generateCollective(&b, r)
		}
		if r.LargeCount {
			b.WriteString("#endif\n\n")
		}
	}
	return b.Bytes()
}

// generateCollective writes the wrapper of one blocking collective: the
// byte rule, the timed PMPI call, one event.
func generateCollective(b *bytes.Buffer, r Row) {
	decls := make([]string, len(r.Params))
	args := make([]string, len(r.Params))
	for i, p := range r.Params {
		decls[i] = p.Decl
		args[i] = p.Name
	}
	call := fmt.Sprintf("P%s(%s)", r.Name, strings.Join(args, ", "))
	root := "-1"
	if r.HasRoot {
		root = "root"
	}
	ruleArgs := ""
	if len(r.RuleArgs) > 0 {
		ruleArgs = ", " + strings.Join(r.RuleArgs, ", ")
	}
	fmt.Fprintf(b, "/* %s: %s line %d, op %d */\n", r.Name, r.tableName(), r.Line, int(r.Op))
	fmt.Fprintf(b, "int %s(%s)\n{\n", r.Name, strings.Join(decls, ", "))
	fmt.Fprintf(b, "\tif (GCK_UNLIKELY(!gclock_active || gclock_tl_guard))\n\t\treturn %s;\n", call)
	b.WriteString("\tvoid *ra = __builtin_return_address(0);\n")
	b.WriteString("\tgclock_tl_guard++;\n")
	b.WriteString("\tgclock_comm_slot *cs = gclock_comm_get(comm);\n")
	b.WriteString("\tif (GCK_UNLIKELY(cs == NULL)) {\n")
	fmt.Fprintf(b, "\t\tint rc = %s;\n\t\tgclock_tl_guard--;\n\t\treturn rc;\n\t}\n", call)
	b.WriteString("\tuint64_t sent = 0, recv = 0;\n")
	fmt.Fprintf(b, "\tgclock_bytes_%s(cs, &sent, &recv%s);\n", r.Rule, ruleArgs)
	b.WriteString("\tint64_t t0 = gclock_now();\n")
	b.WriteString(InflightEnter(r, cName, OpConst(r.Op), "cs", "ra", "t0"))
	fmt.Fprintf(b, "\tint rc = %s;\n", call)
	b.WriteString("\tint64_t t1 = gclock_now();\n")
	fmt.Fprintf(b, "\tgclock_record(%s, cs, %s, sent, recv, t0, t1, ra);\n", OpConst(r.Op), root)
	b.WriteString("\tgclock_tl_guard--;\n\treturn rc;\n}\n\n")
}

// generateP2P writes the wrapper of one p2p.tbl row: the rule's _pre
// helper, the timed PMPI call (statuses substituted by the rule), the
// rule's _post helper, which writes the events.
func generateP2P(b *bytes.Buffer, r Row) {
	decls := make([]string, len(r.Params))
	args := make([]string, len(r.Params))
	pargs := make([]string, len(r.Params))
	for i, p := range r.Params {
		decls[i] = p.Decl
		args[i] = p.Name
		switch p.Name {
		case "status":
			pargs[i] = "cx.st"
		case "array_of_statuses":
			pargs[i] = "cx.sts"
		default:
			pargs[i] = p.Name
		}
	}
	if len(decls) == 0 {
		decls = []string{"void"}
	}
	call := fmt.Sprintf("P%s(%s)", r.Name, strings.Join(args, ", "))
	tcall := fmt.Sprintf("P%s(%s)", r.Name, strings.Join(pargs, ", "))
	ruleArgs := strings.Join(r.RuleArgs, ", ")
	pre, post := "", ""
	if strings.HasPrefix(r.Rule, IcollPrefix) {
		byteRule := strings.TrimPrefix(r.Rule, IcollPrefix)
		if ruleArgs != "" {
			ruleArgs = ", " + ruleArgs
		}
		root := "-1"
		if r.HasRoot {
			root = "root"
		}
		pre = fmt.Sprintf("\tgclock_p2p_icoll_pre(&cx, comm);\n\tif (cx.cs != NULL)\n\t\tgclock_bytes_%s(cx.cs, &cx.sent, &cx.recv%s);\n", byteRule, ruleArgs)
		post = fmt.Sprintf("\tgclock_p2p_icoll_post(&cx, rc, %s, request);\n", root)
	} else {
		sep := ""
		if ruleArgs != "" {
			sep = ", "
		}
		pre = fmt.Sprintf("\tgclock_p2p_%s_pre(&cx%s%s);\n", r.Rule, sep, ruleArgs)
		post = fmt.Sprintf("\tgclock_p2p_%s_post(&cx, rc%s%s);\n", r.Rule, sep, ruleArgs)
	}
	fmt.Fprintf(b, "/* %s: %s line %d, op %d */\n", r.Name, r.tableName(), r.Line, int(r.Op))
	fmt.Fprintf(b, "int %s(%s)\n{\n", r.Name, strings.Join(decls, ", "))
	fmt.Fprintf(b, "\tif (GCK_UNLIKELY(!gclock_active || gclock_tl_guard))\n\t\treturn %s;\n", call)
	b.WriteString("\tgclock_p2p cx;\n\tgclock_p2p_begin(&cx);\n")
	fmt.Fprintf(b, "\tcx.op = %s;\n", OpConst(r.Op))
	b.WriteString("\tcx.ra = __builtin_return_address(0);\n\tgclock_tl_guard++;\n")
	b.WriteString(pre)
	b.WriteString("\tcx.t0 = gclock_now();\n")
	b.WriteString(InflightEnterP2P(r, cName))
	fmt.Fprintf(b, "\tint rc = %s;\n", tcall)
	b.WriteString("\tcx.t1 = gclock_now();\n")
	b.WriteString(post)
	b.WriteString(InflightLeave)
	b.WriteString("\tgclock_tl_guard--;\n\treturn rc;\n}\n\n")
}

// InflightEnter is the statement that marks r's call in flight
// (gclock_fl_enter, cshim/gclock.h; docs/guide/crash-hang.md), written after
// the enter time is read and before the call into MPI: op, communicator
// slot cs, root, peer (as a world rank, gclock_fl_peer) and tag (source,
// else dest; MPI_Sendrecv's dest and send tag second), the number of
// requests of a wait or test call, call site ra and enter time t0. val gives the C value of a parameter (the
// Fortran wrappers dereference theirs).
func InflightEnter(r Row, val func(name string) string, op, cs, ra, t0 string) string {
	have := map[string]bool{}
	for _, p := range r.Params {
		have[p.Name] = true
	}
	none := "GCK_FL_NONE"
	arg := func(names ...string) string {
		for _, n := range names {
			if have[n] {
				return val(n)
			}
		}
		return none
	}
	rank := func(names ...string) string {
		if v := arg(names...); v != none {
			return "gclock_fl_peer(" + cs + ", " + v + ")"
		}
		return none
	}
	root, peer, tag := arg("root"), rank("source", "dest"), arg("tag", "recvtag")
	if r.P2P && peerInCx[r.Rule] && peer != none {
		peer = "cx.peer" // the same value, computed once
	}
	peer2, tag2 := none, none
	if have["source"] && have["dest"] {
		peer2, tag2 = rank("dest"), arg("sendtag")
	}
	count := "0"
	switch {
	case have["array_of_requests"] && have["incount"]:
		count = "(uint32_t)" + val("incount")
	case have["array_of_requests"] && have["count"]:
		count = "(uint32_t)" + val("count")
	case have["request"] && (strings.HasPrefix(r.Rule, "wait") || strings.HasPrefix(r.Rule, "test")):
		count = "1"
	}
	coll := "0"
	switch {
	case !r.P2P:
		coll = "1" // a blocking collective: cs is set, its instance is cs->seq
	case peerInCx[r.Rule]:
		coll = "2" // a send or request start: its record keeps what the marker stores
	}
	return fmt.Sprintf("\tgclock_fl_enter(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s);\n",
		op, coll, cs, root, peer, tag, peer2, tag2, count, ra, t0)
}

// noCommRules are the p2p.tbl rules whose _pre leaves cx.cs NULL (the
// request calls name no communicator).
var noCommRules = map[string]bool{"wait": true, "test": true, "waitall": true, "testall": true, "waitany": true,
	"testany": true, "waitsome": true, "testsome": true, "start": true, "startall": true, "request_free": true}

// InflightCS is the communicator slot a p2p row's marker is given: NULL,
// a constant the compiler folds, where the rule sets none, else cx.cs.
// The op is given as its constant too (OpConst): cx, whose address the
// rules take, is not one.
func InflightCS(r Row) string {
	if noCommRules[r.Rule] {
		return "NULL"
	}
	return "cx.cs"
}

// peerInCx are the p2p.tbl rules whose _pre sets cx.peer to
// gclock_fl_peer(cx.cs, dest or source) (cshim/p2p_rules.c): their
// marker takes it from there, and their first record keeps it
// (gclock_put_same's GCK_SAME_LOC).
var peerInCx = map[string]bool{"send": true, "isend": true, "irecv": true, "send_init": true, "recv_init": true}

// InflightEnterP2P is InflightEnter for a p2p row's wrapper (C or
// Fortran, val as InflightEnter's): a send or a request start keeps the
// marked record in cx.fl for its first record (gclock_put_same).
func InflightEnterP2P(r Row, val func(name string) string) string {
	s := InflightEnter(r, val, OpConst(r.Op), InflightCS(r), "cx.ra", "cx.t0")
	if peerInCx[r.Rule] {
		s = "\tcx.fl = " + strings.TrimPrefix(s, "\t")
	}
	return s
}

// cName is a C wrapper's parameter's value: its name.
func cName(n string) string { return n }

// InflightLeave is the statement that ends a point-to-point call's mark,
// after its rule's post: the call's first record took the marked record
// over, and a call that made none clears it. A blocking collective's
// gclock_record finishes its marked record itself.
const InflightLeave = "\tgclock_fl_leave(cx.nrec);\n"

func main() {
	table := flag.String("table", "../cshim/collectives.tbl", "wrapper table")
	p2p := flag.String("p2p", "../cshim/p2p.tbl", "point-to-point wrapper table")
	rma := flag.String("rma", "../cshim/rma.tbl", "one-sided (RMA) wrapper table")
	outC := flag.String("c", "../cshim/wrappers_gen.c", "generated wrappers")
	outH := flag.String("h", "../cshim/ops_gen.h", "generated op constants")
	resolveH := flag.String("resolve-h", "../cshim/pmpi_gen.h", "generated PMPI pointer macros")
	resolveC := flag.String("resolve-c", "../cshim/pmpi_gen.c", "generated PMPI pointers")
	outF := flag.String("fortran", "../cshim/fortran_gen.c", "generated Fortran wrappers")
	large := flag.String("largecount", "../cshim/largecount.tbl", "MPI-4 large-count variants")
	flag.Parse()
	if err := run(*table, []string{*p2p, *rma, *large}, *outC, *outH, *resolveH, *resolveC, *outF); err != nil {
		fmt.Fprintln(os.Stderr, "wrapgen:", err)
		os.Exit(1)
	}
}

func run(table string, p2pTables []string, outC, outH, resolveH, resolveC, outF string) error {
	rows, err := ReadTables(table, p2pTables...)
	if err != nil {
		return err
	}
	fortran, err := GenerateFortran(rows)
	if err != nil {
		return err
	}
	if err := os.WriteFile(outF, fortran, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", outF, err)
	}
	names, err := PMPINames(rows, filepath.Dir(outC))
	if err != nil {
		return err
	}
	if err := os.WriteFile(resolveH, GenerateResolveH(names), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", resolveH, err)
	}
	if err := os.WriteFile(resolveC, GenerateResolveC(names), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", resolveC, err)
	}
	if err := os.WriteFile(outH, GenerateOps(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", outH, err)
	}
	if err := os.WriteFile(outC, GenerateWrappers(rows), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", outC, err)
	}
	return nil
}

// TwinName is the MPI function whose op r records: r.Name without the
// large-count suffix for an MPI-4 `_c` variant, else r.Name.
func (r Row) TwinName() string {
	if r.LargeCount {
		return strings.TrimSuffix(r.Name, LargeCountSuffix)
	}
	return r.Name
}

// tableName is the table file r came from.
func (r Row) tableName() string {
	switch {
	case r.Table != "":
		return r.Table
	case r.P2P:
		return "p2p.tbl"
	}
	return "collectives.tbl"
}

// ReadTables parses the collectives table and the point-to-point-style
// tables (p2p.tbl, rma.tbl, ...) and checks that no function is listed
// twice.
func ReadTables(table string, p2pTables ...string) ([]Row, error) {
	text, err := os.ReadFile(table)
	if err != nil {
		return nil, fmt.Errorf("read table: %w", err)
	}
	rows, err := ParseTable(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", table, err)
	}
	seen := map[string]string{}
	for i := range rows {
		rows[i].Table = filepath.Base(table)
		seen[rows[i].Name] = table
	}
	for _, p2p := range p2pTables {
		text, err = os.ReadFile(p2p)
		if err != nil {
			return nil, fmt.Errorf("read table: %w", err)
		}
		prows, err := ParseP2PTable(string(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p2p, err)
		}
		for i, r := range prows {
			if other, ok := seen[r.Name]; ok {
				return nil, fmt.Errorf("%s: line %d: %s is also in %s", p2p, r.Line, r.Name, other)
			}
			seen[r.Name] = p2p
			prows[i].Table = filepath.Base(p2p)
		}
		rows = append(rows, prows...)
	}
	return rows, nil
}

package merge

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

var updateOutputs = flag.Bool("update", false, "rewrite docs/reference/outputs.md")

// outputRoots are the types written as JSON files, with the file.
var outputRoots = []struct{ file, typ string }{
	{"imbalance.json", "Analysis"},
	{"p2p.json", "P2PResult"},
	{"rma.json", "rma.Result"},
}

// fieldDocs parses the source of merge, of the reports' data model
// (merge/datamodel) and of the packages whose types are written as output
// files (docDirs): per struct type (qualified with its package but for
// merge's and the data model's own, e.g. rma.Result), per field, its doc or
// line comment, type expression and JSON name.
type fieldDoc struct{ name, json, typ, doc string }

// docDirs are the directories parsed, with the qualifier of their types.
var docDirs = []struct{ dir, qual string }{{".", ""}, {"datamodel", ""}, {"rma", "rma."}}

func structDocs(t *testing.T) map[string][]fieldDoc {
	out := map[string][]fieldDoc{}
	for _, d := range docDirs {
		structDocsOf(t, d.dir, d.qual, out)
	}
	return out
}

func structDocsOf(t *testing.T, dir, qual string, out map[string][]fieldDoc) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok || !ts.Name.IsExported() {
					return true
				}
				for _, fl := range st.Fields.List {
					doc := ""
					if fl.Doc != nil {
						doc = fl.Doc.Text()
					} else if fl.Comment != nil {
						doc = fl.Comment.Text()
					}
					doc = strings.Join(strings.Fields(doc), " ")
					tag := ""
					if fl.Tag != nil {
						tag = reflect.StructTag(strings.Trim(fl.Tag.Value, "`")).Get("json")
					}
					typ := types(fl.Type)
					name := qual + ts.Name.Name
					if len(fl.Names) == 0 { // embedded
						out[name] = append(out[name], fieldDoc{name: typ, json: tag, typ: typ, doc: doc})
					}
					for _, nm := range fl.Names {
						if nm.IsExported() {
							out[name] = append(out[name], fieldDoc{name: nm.Name, json: tag, typ: typ, doc: doc})
						}
					}
				}
				return true
			})
		}
	}
}

func types(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return "*" + types(x.X)
	case *ast.ArrayType:
		return "[]" + types(x.Elt)
	case *ast.MapType:
		return "map[" + types(x.Key) + "]" + types(x.Value)
	case *ast.SelectorExpr:
		return types(x.X) + "." + x.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}

// outputsDoc is docs/reference/outputs.md; undocumented lists the fields
// it shows without a meaning (Type.json_name), in page order.
func outputsDoc(t *testing.T) (page string, undocumented []string) {
	docs := structDocs(t)
	var b strings.Builder
	b.WriteString("<!-- Generated from the types of merge/datamodel and merge/rma and their comments by `go test ./merge -run TestOutputs_ReferencePageIsGenerated -update`. -->\n")
	b.WriteString(`# Output files and their fields

` + "`tracemerge RUN -o OUT`" + ` writes (select with ` + "`--formats`" + `, [tracemerge-cli.md](tracemerge-cli.md)):

| file | format | what |
| --- | --- | --- |
| ` + "`index.html`" + ` | html | self-contained report: root causes, critical path, tables, histograms, the Gantt chart |
| ` + "`gantt.svg`" + ` | svg | all ranks over time; waits hatched, root-cause delays orange, the critical path red |
| ` + "`imbalance.txt`" + ` | txt | the text report (also on stdout unless ` + "`-q`" + `) |
| ` + "`imbalance.json`" + ` | json | ` + "`datamodel.Analysis`" + ` (package ` + "`merge/datamodel`" + `), below |
| ` + "`p2p.json`" + ` | json | ` + "`datamodel.P2PResult`" + ` (package ` + "`merge/datamodel`" + `), below |
| ` + "`rma.json`" + ` | json | ` + "`rma.Result`" + ` (package ` + "`merge/rma`" + `), below (runs with one-sided calls) |
| ` + "`events.csv`" + ` (` + "`csvgz`" + `: ` + "`events.csv.gz`" + `) | csv | one row per event: ` + "`rank,op,comm,seq,root,bytes_sent,bytes_recv,local_enter_ns,local_exit_ns,global_enter_ns,global_exit_ns,callsite,enter_err_ns,exit_err_ns`" + ` (the last two: the estimated clock error of the global times, ns, empty where unknown) |
| ` + "`trace.pftrace`" + ` | perfetto | Perfetto protobuf: a process per rank with an MPI track, flow arrows per message, "root causes" and "critical path" tracks |
| ` + "`trace.json`" + ` | perfetto-json | legacy Chrome JSON (small runs) |
| ` + "`otf2/traces.otf2`" + ` | otf2 | OTF2 archive (Vampir, Scalasca/Cube), when built with libotf2 |
| ` + "`trace.prv/.pcf/.row`" + ` | paraver | Paraver trace |
| ` + "`instance-<comm>-<seq>.svg`" + ` | ` + "`--instance`" + ` | one collective, raw and corrected clocks side by side |

Times in the JSON files are ns, global (rank 0's timebase) and relative to
` + "`origin_ns`" + ` unless a field says otherwise. Fields may be added; none are
renamed.

`)
	seen := map[string]bool{}
	var emit func(typ string)
	emit = func(typ string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		fields, ok := docs[typ]
		if !ok {
			return
		}
		fmt.Fprintf(&b, "### %s\n\n| field | type | meaning |\n| --- | --- | --- |\n", typ)
		var next []string
		for _, f := range fields {
			name := strings.Split(f.json, ",")[0]
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.name
			}
			ftyp := f.typ
			if f.doc == "" {
				undocumented = append(undocumented, typ+"."+name)
			}
			base := strings.TrimLeft(f.typ, "[]*")
			if i := strings.LastIndex(base, "]"); i >= 0 {
				base = base[i+1:]
			}
			base = strings.TrimLeft(base, "*")
			if q, _, ok := strings.Cut(typ, "."); ok && !strings.Contains(base, ".") {
				if _, ok := docs[q+"."+base]; ok { // a type of the same package as typ, shown qualified
					ftyp = strings.TrimSuffix(ftyp, base) + q + "." + base
					base = q + "." + base
				}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, strings.ReplaceAll(ftyp, "|", "\\|"), strings.ReplaceAll(f.doc, "|", "\\|"))
			if _, ok := docs[base]; ok {
				next = append(next, base)
			}
		}
		b.WriteString("\n")
		sort.Strings(next)
		for _, n := range next {
			emit(n)
		}
	}
	for _, r := range outputRoots {
		fmt.Fprintf(&b, "## %s\n\n", r.file)
		emit(r.typ)
	}
	return b.String(), undocumented
}

// TestOutputs_ReferencePageIsGenerated: docs/reference/outputs.md lists
// every JSON field of the output files with its comment in the code
// (go test -update rewrites it), and every field listed has a comment.
func TestOutputs_ReferencePageIsGenerated(t *testing.T) {
	path := filepath.Join("..", "docs", "reference", "outputs.md")
	want, undocumented := outputsDoc(t)
	if len(undocumented) > 0 {
		t.Errorf("%d fields of the JSON outputs have no doc or line comment, so docs/reference/outputs.md gives no meaning for them: %s (comment each field in merge/datamodel/*.go or merge/rma/*.go: what it is, its unit, how it is computed)",
			len(undocumented), strings.Join(undocumented, ", "))
	}
	if *updateOutputs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./merge -run TestOutputs_ReferencePageIsGenerated -update)", err)
	}
	if string(got) != want {
		t.Error("docs/reference/outputs.md differs from the types of merge/datamodel and merge/rma: run go test ./merge -run TestOutputs_ReferencePageIsGenerated -update")
	}
}

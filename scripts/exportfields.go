//go:build ignore

// Command exportfields renames the engine's unexported fields (and
// PairWaits' method add) of the reports' data model to exported names,
// type-aware, in the packages given (default ./merge ./merge/datamodel):
// the declarations, every selector whose operand is of the field's type
// (merge.GEvent, merge.Instance, merge.ClockQuality, merge.PairWaits or
// their merge/datamodel originals, the aliases included) and every keyed
// composite literal of those types.
// A selector x.site on another struct is left alone, which a sed could
// not promise. A renamed field of a struct with JSON tags gets `json:"-"`,
// so the JSON outputs do not change.
//
// It type-checks each package with errors tolerated, so it also runs on a
// tree where the declarations are already renamed and some code still
// uses the old names (after a merge): it is idempotent.
//
//	go run scripts/exportfields.go [packages]
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const module = "github.com/gclock/gclock/"

// renames: type name -> old field -> new field. The types live in merge
// (before the move) or merge/datamodel (after it).
var renames = map[string]map[string]string{
	"GEvent":       {"commIdx": "CommIdx", "site": "Site", "ord": "Ord"},
	"Instance":     {"lastSite": "LastSiteIdx", "waitSite": "WaitSiteIdx", "causeSite": "CauseSiteIdx"},
	"ClockQuality": {"errBars": "ErrBarsByRank"},
	"PairWaits":    {"add": "Add"}, // a method
}

var homes = map[string]bool{module + "merge": true, module + "merge/datamodel": true}

type listed struct {
	ImportPath  string
	Dir         string
	Export      string
	GoFiles     []string
	TestGoFiles []string
	ForTest     string
}

func golist(args ...string) ([]listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %v: %w", args, err)
	}
	var l []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list %v: %w", args, err)
		}
		l = append(l, p)
	}
	return l, nil
}

// edit replaces the bytes [off, off+len(old)) of a file.
type edit struct {
	off      int
	old, new string
}

func main() {
	pkgs := os.Args[1:]
	if len(pkgs) == 0 {
		pkgs = []string{"./merge", "./merge/datamodel"}
	}
	deps, err := golist(append([]string{"-export", "-deps", "-test"}, pkgs...)...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exportfields:", err)
		os.Exit(1)
	}
	exports := map[string]string{}
	for _, d := range deps {
		if d.Export != "" && d.ForTest == "" && !strings.Contains(d.ImportPath, " ") {
			exports[d.ImportPath] = d.Export
		}
	}
	targets, err := golist(pkgs...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exportfields:", err)
		os.Exit(1)
	}
	changed := 0
	for _, p := range targets {
		n, err := rewrite(p, exports)
		if err != nil {
			fmt.Fprintln(os.Stderr, "exportfields:", err)
			os.Exit(1)
		}
		changed += n
	}
	fmt.Printf("exportfields: %d edits\n", changed)
}

// rewrite renames the fields in one package's files (its test files of
// the same package included); it returns the number of edits.
func rewrite(p listed, exports map[string]string) (int, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	names := append(append([]string{}, p.GoFiles...), p.TestGoFiles...)
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, n), nil, parser.ParseComments)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", n, err)
		}
		files = append(files, f)
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	conf := types.Config{Importer: imp, Error: func(error) {}}
	conf.Check(p.ImportPath, fset, files, info) // errors tolerated: old names in use

	// home returns the renames of t's named type when it is one of ours.
	home := func(t types.Type) map[string]string {
		if t == nil {
			return nil
		}
		if pt, ok := types.Unalias(t).(*types.Pointer); ok {
			t = pt.Elem()
		}
		n, ok := types.Unalias(t).(*types.Named)
		if !ok || n.Obj().Pkg() == nil || !homes[n.Obj().Pkg().Path()] {
			return nil
		}
		return renames[n.Obj().Name()]
	}
	// fields: the field objects to rename (found in the declarations of
	// the types wherever they are: this package or an import).
	fields := map[types.Object]string{}
	addFields := func(tn *types.TypeName) {
		m := renames[tn.Name()]
		st, ok := tn.Type().Underlying().(*types.Struct)
		if m == nil || !ok || !homes[tn.Pkg().Path()] {
			return
		}
		for i := 0; i < st.NumFields(); i++ {
			if nw, ok := m[st.Field(i).Name()]; ok {
				fields[st.Field(i)] = nw
			}
		}
		if n, ok := tn.Type().(*types.Named); ok {
			for i := 0; i < n.NumMethods(); i++ {
				if nw, ok := m[n.Method(i).Name()]; ok {
					fields[n.Method(i)] = nw
				}
			}
		}
	}
	for _, obj := range info.Defs {
		if tn, ok := obj.(*types.TypeName); ok && !tn.IsAlias() {
			addFields(tn)
		}
	}
	for _, obj := range info.Uses {
		if tn, ok := obj.(*types.TypeName); ok {
			if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
				addFields(n.Obj())
			}
		}
	}

	edits := map[string][]edit{}
	add := func(id *ast.Ident, nw string) {
		pos := fset.Position(id.Pos())
		edits[pos.Filename] = append(edits[pos.Filename], edit{off: pos.Offset, old: id.Name, new: nw})
	}
	var unsure []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncDecl:
				if x.Recv == nil || len(x.Recv.List) != 1 {
					return true
				}
				if fn, ok := info.Defs[x.Name].(*types.Func); ok {
					if m := home(fn.Type().(*types.Signature).Recv().Type()); m != nil {
						if nw, ok := m[x.Name.Name]; ok {
							add(x.Name, nw)
						}
					}
				}
			case *ast.TypeSpec:
				m := renames[x.Name.Name]
				st, ok := x.Type.(*ast.StructType)
				if m == nil || !ok || !homes[p.ImportPath] {
					return true
				}
				tagged := false
				for _, fl := range st.Fields.List {
					if fl.Tag != nil && strings.Contains(fl.Tag.Value, "json:") {
						tagged = true
					}
				}
				for _, fl := range st.Fields.List {
					for _, id := range fl.Names {
						if nw, ok := m[id.Name]; ok {
							add(id, nw)
						}
					}
					if tagged && fl.Tag == nil && len(fl.Names) > 0 && len(fl.Names) == len(namesIn(fl, m)) {
						pos := fset.Position(fl.Type.End())
						edits[pos.Filename] = append(edits[pos.Filename], edit{off: pos.Offset, old: "", new: " `json:\"-\"`"})
					}
				}
			case *ast.SelectorExpr:
				if sel, ok := info.Selections[x]; ok {
					if nw, ok := fields[sel.Obj()]; ok {
						add(x.Sel, nw)
					}
					return true
				}
				if m := home(info.TypeOf(x.X)); m != nil {
					if nw, ok := m[x.Sel.Name]; ok {
						add(x.Sel, nw)
						return true
					}
				}
				for _, m := range renames {
					if _, ok := m[x.Sel.Name]; ok && info.TypeOf(x.X) == nil {
						unsure = append(unsure, fset.Position(x.Pos()).String())
					}
				}
			case *ast.CompositeLit:
				m := home(info.TypeOf(x))
				if m == nil {
					return true
				}
				for _, el := range x.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok {
							if nw, ok := m[id.Name]; ok {
								add(id, nw)
							}
						}
					}
				}
			}
			return true
		})
	}
	if len(unsure) > 0 {
		sort.Strings(unsure)
		return 0, fmt.Errorf("selectors of an unknown type with a field name to rename (fix the package so it type-checks there, then re-run):\n  %s", strings.Join(unsure, "\n  "))
	}
	total := 0
	for name, es := range edits {
		src, err := os.ReadFile(name)
		if err != nil {
			return 0, err
		}
		sort.Slice(es, func(i, j int) bool { return es[i].off > es[j].off })
		for i, e := range es {
			if i > 0 && es[i-1].off == e.off && es[i-1].new == e.new {
				continue // one identifier found twice
			}
			if string(src[e.off:e.off+len(e.old)]) != e.old {
				return 0, fmt.Errorf("%s: offset %d: expected %q", name, e.off, e.old)
			}
			src = append(src[:e.off], append([]byte(e.new), src[e.off+len(e.old):]...)...)
			total++
		}
		out, err := format.Source(src)
		if err != nil {
			return 0, fmt.Errorf("%s: gofmt after the rename: %w", name, err)
		}
		if err := os.WriteFile(name, out, 0o644); err != nil {
			return 0, err
		}
		fmt.Printf("%s: %d\n", name, len(es))
	}
	return total, nil
}

// namesIn lists the names of fl that m renames.
func namesIn(fl *ast.Field, m map[string]string) []string {
	var out []string
	for _, id := range fl.Names {
		if _, ok := m[id.Name]; ok {
			out = append(out, id.Name)
		}
	}
	return out
}

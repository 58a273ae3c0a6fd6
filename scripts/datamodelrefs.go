//go:build ignore

// Command datamodelrefs makes the packages given name the reports' data
// model directly: every selector merge.X, where X is a name that
// merge/datamodel exports and merge only aliases (X = datamodel.X) or no
// longer declares, becomes datamodel.X, the file imports
// merge/datamodel, and it drops its import of merge when nothing else
// uses it. Test files are included (the package's own and its _test
// package).
//
// The selector's operand is resolved by the type checker's scopes, so a
// local variable called merge, or merge imported under another name, is
// handled as the compiler sees it, which a sed could not promise. Imports
// that cannot be loaded are tolerated (only the scopes matter), so it also
// runs after merge's aliases are gone and a merged branch still uses them:
// it is idempotent.
//
//	go run scripts/datamodelrefs.go [packages]   (default ./...)
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
	"strconv"
)

const (
	mergePath = "github.com/gclock/gclock/merge"
	dmPath    = "github.com/gclock/gclock/merge/datamodel"
)

type listed struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
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

func main() {
	pkgs := os.Args[1:]
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	moved, err := movedNames()
	if err != nil {
		fmt.Fprintln(os.Stderr, "datamodelrefs:", err)
		os.Exit(1)
	}
	targets, err := golist(pkgs...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "datamodelrefs:", err)
		os.Exit(1)
	}
	total := 0
	for _, p := range targets {
		if p.ImportPath == dmPath {
			continue // the home
		}
		sets := [][]string{append(append([]string{}, p.GoFiles...), p.TestGoFiles...), p.XTestGoFiles}
		if p.ImportPath == mergePath {
			sets = sets[1:] // merge keeps its aliases; its _test package does not need them
		}
		for _, files := range sets {
			n, err := rewrite(p, files, moved)
			if err != nil {
				fmt.Fprintln(os.Stderr, "datamodelrefs:", err)
				os.Exit(1)
			}
			total += n
		}
	}
	fmt.Printf("datamodelrefs: %d selectors\n", total)
}

// movedNames returns the names merge/datamodel exports that merge does not
// declare itself (it aliases them or has dropped them).
func movedNames() (map[string]bool, error) {
	l, err := golist(mergePath, dmPath)
	if err != nil {
		return nil, err
	}
	decls := map[string]map[string]bool{} // package -> own (non-alias) names
	for _, p := range l {
		own := map[string]bool{}
		fset := token.NewFileSet()
		for _, n := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, n), nil, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						own[d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if !(s.Assign.IsValid() && isDatamodel(s.Type, s.Name.Name)) {
								own[s.Name.Name] = true
							}
						case *ast.ValueSpec:
							for i, id := range s.Names {
								if !(i < len(s.Values) && isDatamodel(s.Values[i], id.Name)) {
									own[id.Name] = true
								}
							}
						}
					}
				}
			}
		}
		decls[p.ImportPath] = own
	}
	moved := map[string]bool{}
	for n := range decls[dmPath] {
		if ast.IsExported(n) && !decls[mergePath][n] {
			moved[n] = true
		}
	}
	if len(moved) == 0 {
		return nil, fmt.Errorf("no names of %s found", dmPath)
	}
	return moved, nil
}

// isDatamodel reports whether e is the selector datamodel.name.
func isDatamodel(e ast.Expr, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != name {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == "datamodel"
}

// rewrite edits one package's files (type-checked together); it returns the
// number of selectors rewritten.
func rewrite(p listed, names []string, moved map[string]bool) (int, error) {
	if len(names) == 0 {
		return 0, nil
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, n), nil, parser.ParseComments)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", n, err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	// Only the scopes matter: an import that fails becomes a fake package
	// whose PkgName still resolves.
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", func(string) (io.ReadCloser, error) {
			return nil, fmt.Errorf("not loaded")
		}),
		Error: func(error) {},
	}
	conf.Check(p.ImportPath, fset, files, info)

	total := 0
	for _, f := range files {
		name := fset.Position(f.Pos()).Filename
		var sels []*ast.SelectorExpr
		uses := 0 // uses of merge's PkgName in this file
		dmName := ""
		var mergeSpec *ast.ImportSpec
		for _, s := range f.Imports {
			path, _ := strconv.Unquote(s.Path.Value)
			switch path {
			case dmPath:
				dmName = "datamodel"
				if s.Name != nil {
					dmName = s.Name.Name
				}
			case mergePath:
				mergeSpec = s
			}
		}
		clash := false
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Ident:
				if pn, ok := info.Uses[x].(*types.PkgName); ok && pn.Imported().Path() == mergePath {
					uses++
				}
				if x.Name == "datamodel" && dmName == "" {
					clash = true
				}
			case *ast.SelectorExpr:
				id, ok := x.X.(*ast.Ident)
				if !ok {
					return true
				}
				if pn, ok := info.Uses[id].(*types.PkgName); ok && pn.Imported().Path() == mergePath && moved[x.Sel.Name] {
					sels = append(sels, x)
				}
			}
			return true
		})
		if len(sels) == 0 {
			continue
		}
		if clash {
			return 0, fmt.Errorf("%s: the name datamodel is taken; import %s by hand under another name, then re-run", name, dmPath)
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return 0, err
		}
		type edit struct {
			off, end int
			new      string
		}
		var es []edit
		to := dmName
		if to == "" {
			to = "datamodel"
		}
		for _, s := range sels {
			es = append(es, edit{fset.Position(s.X.Pos()).Offset, fset.Position(s.X.End()).Offset, to})
		}
		addImport := dmName == ""
		if uses == len(sels) {
			// merge is no longer used: its import spec becomes datamodel's
			// (or goes, when datamodel is imported already).
			nw := ""
			if addImport {
				nw = strconv.Quote(dmPath)
				addImport = false
			}
			off, end := fset.Position(mergeSpec.Pos()).Offset, fset.Position(mergeSpec.End()).Offset
			if nw == "" && importBlock(f, mergeSpec) {
				off, end = wholeLine(src, off, end)
			}
			es = append(es, edit{off, end, nw})
		}
		if addImport && !importBlock(f, mergeSpec) {
			return 0, fmt.Errorf("%s: merge is imported outside an import block; add %s by hand", name, dmPath)
		}
		if addImport {
			// beside merge's import, in its block; gofmt sorts it.
			end := fset.Position(mergeSpec.End()).Offset
			es = append(es, edit{end, end, "\n" + strconv.Quote(dmPath)})
		}
		sort.Slice(es, func(i, j int) bool { return es[i].off > es[j].off })
		for _, e := range es {
			src = append(src[:e.off:e.off], append([]byte(e.new), src[e.end:]...)...)
		}
		out, err := format.Source(src)
		if err != nil {
			return 0, fmt.Errorf("%s: gofmt after the rewrite: %w", name, err)
		}
		if err := os.WriteFile(name, out, 0o644); err != nil {
			return 0, err
		}
		fmt.Printf("%s: %d\n", name, len(sels))
		total += len(sels)
	}
	return total, nil
}

// importBlock reports whether s sits in a parenthesised import declaration.
func importBlock(f *ast.File, s *ast.ImportSpec) bool {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT && g.Lparen.IsValid() {
			for _, sp := range g.Specs {
				if sp == s {
					return true
				}
			}
		}
	}
	return false
}

// wholeLine widens [off, end) to its whole line, newline included, when
// nothing but blanks shares the line.
func wholeLine(src []byte, off, end int) (int, int) {
	a := off
	for a > 0 && (src[a-1] == ' ' || src[a-1] == '\t') {
		a--
	}
	b := end
	for b < len(src) && (src[b] == ' ' || src[b] == '\t') {
		b++
	}
	if (a == 0 || src[a-1] == '\n') && b < len(src) && src[b] == '\n' {
		return a, b + 1
	}
	return off, end
}

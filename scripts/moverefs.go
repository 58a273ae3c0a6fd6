//go:build ignore

// Command moverefs makes code name the package that names moved to. When
// declarations move from package FROM to package TO (merge's data model
// to merge/datamodel, its loading to merge/rundir), every reference to a
// moved name is rewritten:
//
//   - in the other packages, the selector FROM.X becomes TO.X;
//   - in FROM itself (its _test package included), an identifier X that no
//     longer resolves becomes TO.X;
//
// where X is a name TO exports and FROM does not declare itself (an alias
// X = TO.X counts as not declared: such names can be moved off too, and
// FROM keeps the alias until its own code stops using it). Each edited
// file imports TO, and drops its import of FROM when nothing else uses it.
//
// Identifiers are resolved by the type checker's scopes, so a local
// variable called merge, a package imported under another name, a field or
// a composite literal's key of the same name are told apart as the
// compiler tells them, which a sed could not promise. Packages that do
// not compile are imported as fake packages (only the scopes matter), so
// it runs on a tree that does not compile: after a merge that brought code
// still using the old names, re-run it. It is idempotent. It lists the
// identifiers of FROM that still resolve nowhere (unexported names that
// moved, to export or move by hand).
//
//	go run scripts/moverefs.go -from ./merge -to ./merge/rundir [packages]   (default ./...)
package main

import (
	"bytes"
	"encoding/json"
	"flag"
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
	"strings"
)

type listed struct {
	ImportPath   string
	Name         string
	Export       string
	ForTest      string
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

// move is one move's packages and names.
type move struct {
	from, to listed
	moved    map[string]bool   // names to rewrite
	exports  map[string]string // import path -> export data file
}

func main() {
	from := flag.String("from", "", "the package the names moved out of (a go list pattern, e.g. ./merge)")
	to := flag.String("to", "", "the package they moved to (e.g. ./merge/rundir)")
	flag.Parse()
	if *from == "" || *to == "" {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/moverefs.go -from PKG -to PKG [packages]")
		os.Exit(2)
	}
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	if err := run(*from, *to, pkgs); err != nil {
		fmt.Fprintln(os.Stderr, "moverefs:", err)
		os.Exit(1)
	}
}

func run(from, to string, pkgs []string) error {
	l, err := golist(from, to)
	if err != nil {
		return err
	}
	if len(l) != 2 {
		return fmt.Errorf("-from %s -to %s: want two packages, go list found %d", from, to, len(l))
	}
	mv := &move{from: l[0], to: l[1]}
	if mv.moved, err = movedNames(mv); err != nil {
		return err
	}
	targets, err := golist(pkgs...)
	if err != nil {
		return err
	}
	// Export data of what compiles resolves the imports, so that the
	// names left unresolved are the ones to look at; a package that does
	// not compile is imported as a fake package (its name resolves).
	deps, err := golist(append([]string{"-export", "-deps", "-test"}, pkgs...)...)
	if err != nil {
		return err
	}
	mv.exports = map[string]string{}
	for _, d := range deps {
		if d.Export != "" && d.ForTest == "" {
			mv.exports[d.ImportPath] = d.Export
		}
	}
	total := 0
	for _, p := range targets {
		if p.ImportPath == mv.to.ImportPath {
			continue // the names' home
		}
		for _, files := range [][]string{append(append([]string{}, p.GoFiles...), p.TestGoFiles...), p.XTestGoFiles} {
			n, err := rewrite(mv, p, files)
			if err != nil {
				return err
			}
			total += n
		}
	}
	fmt.Printf("moverefs: %d references now name %s\n", total, mv.to.ImportPath)
	return nil
}

// movedNames returns the names TO exports that FROM does not declare (it
// aliases them or does not have them).
func movedNames(mv *move) (map[string]bool, error) {
	decls := func(p listed) (map[string]bool, error) {
		own := map[string]bool{}
		fset := token.NewFileSet()
		for _, n := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, n), nil, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			alias := func(e ast.Expr, name string) bool {
				s, ok := e.(*ast.SelectorExpr)
				if !ok || s.Sel.Name != name {
					return false
				}
				id, ok := s.X.(*ast.Ident)
				return ok && id.Name == mv.to.Name
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
							if !(s.Assign.IsValid() && alias(s.Type, s.Name.Name)) {
								own[s.Name.Name] = true
							}
						case *ast.ValueSpec:
							for i, id := range s.Names {
								if !(i < len(s.Values) && alias(s.Values[i], id.Name)) {
									own[id.Name] = true
								}
							}
						}
					}
				}
			}
		}
		return own, nil
	}
	fromOwn, err := decls(mv.from)
	if err != nil {
		return nil, err
	}
	toOwn, err := decls(mv.to)
	if err != nil {
		return nil, err
	}
	moved := map[string]bool{}
	for n := range toOwn {
		if ast.IsExported(n) && !fromOwn[n] {
			moved[n] = true
		}
	}
	if len(moved) == 0 {
		return nil, fmt.Errorf("%s exports no name that %s lacks", mv.to.ImportPath, mv.from.ImportPath)
	}
	return moved, nil
}

// rewrite edits one package's files (type-checked together); it returns the
// number of references rewritten.
func rewrite(mv *move, p listed, names []string) (int, error) {
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
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	// The scopes are what matters: an import that fails becomes a fake
	// package whose package name still resolves.
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			if f, ok := mv.exports[path]; ok {
				return os.Open(f)
			}
			return nil, fmt.Errorf("not loaded")
		}),
		Error: func(error) {},
	}
	conf.Check(p.ImportPath, fset, files, info)
	inFrom := p.ImportPath == mv.from.ImportPath && len(files) > 0 && files[0].Name.Name == mv.from.Name

	total := 0
	var unresolved []string
	for _, f := range files {
		name := fset.Position(f.Pos()).Filename
		toName, fromSpec := "", (*ast.ImportSpec)(nil)
		for _, s := range f.Imports {
			path, _ := strconv.Unquote(s.Path.Value)
			switch path {
			case mv.to.ImportPath:
				toName = mv.to.Name
				if s.Name != nil {
					toName = s.Name.Name
				}
			case mv.from.ImportPath:
				fromSpec = s
			}
		}
		var quals []*ast.Ident // FROM in FROM.X
		var bare []*ast.Ident  // X in FROM
		fromUses, clash := 0, false
		skip := map[*ast.Ident]bool{}     // selectors' names, literals' keys, labels
		embedded := map[*ast.Ident]bool{} // struct{ X }: the field's type
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.StructType:
				for _, fl := range x.Fields.List {
					t := fl.Type
					if st, ok := t.(*ast.StarExpr); ok {
						t = st.X
					}
					if id, ok := t.(*ast.Ident); ok && len(fl.Names) == 0 {
						embedded[id] = true
					}
				}
			case *ast.SelectorExpr:
				skip[x.Sel] = true
				if id, ok := x.X.(*ast.Ident); ok {
					if pn, ok := info.Uses[id].(*types.PkgName); ok && pn.Imported().Path() == mv.from.ImportPath && mv.moved[x.Sel.Name] {
						quals = append(quals, id)
					}
				}
			case *ast.CompositeLit:
				for _, e := range x.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok && info.Uses[id] == nil {
							skip[id] = true // a field of a type the checker could not see
						}
					}
				}
			case *ast.TypeSwitchStmt:
				if as, ok := x.Assign.(*ast.AssignStmt); ok && len(as.Lhs) == 1 {
					if id, ok := as.Lhs[0].(*ast.Ident); ok {
						skip[id] = true // x in switch x := v.(type)
					}
				}
			case *ast.LabeledStmt:
				skip[x.Label] = true
			case *ast.BranchStmt:
				if x.Label != nil {
					skip[x.Label] = true
				}
			case *ast.Ident:
				if pn, ok := info.Uses[x].(*types.PkgName); ok && pn.Imported().Path() == mv.from.ImportPath {
					fromUses++
				}
				if obj := info.Defs[x]; obj != nil && x.Name == mv.to.Name && toName == "" {
					clash = true
				}
				if inFrom && x != f.Name && !skip[x] && (info.Defs[x] == nil || embedded[x]) && info.Uses[x] == nil && x.Name != "_" {
					if mv.moved[x.Name] {
						bare = append(bare, x)
					} else {
						unresolved = append(unresolved, fmt.Sprintf("%s: %s", fset.Position(x.Pos()), x.Name))
					}
				}
			}
			return true
		})
		if len(quals)+len(bare) == 0 {
			continue
		}
		if clash {
			return 0, fmt.Errorf("%s: the name %s is taken; import %s by hand under another name, then re-run", name, mv.to.Name, mv.to.ImportPath)
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
		qual := toName
		if qual == "" {
			qual = mv.to.Name
		}
		for _, id := range quals {
			es = append(es, edit{fset.Position(id.Pos()).Offset, fset.Position(id.End()).Offset, qual})
		}
		for _, id := range bare {
			off := fset.Position(id.Pos()).Offset
			es = append(es, edit{off, off, qual + "."})
		}
		imp := strconv.Quote(mv.to.ImportPath)
		addImport := toName == ""
		if fromSpec != nil && fromUses == len(quals) {
			// FROM is no longer used here: its import becomes TO's, or goes.
			off, end := fset.Position(fromSpec.Pos()).Offset, fset.Position(fromSpec.End()).Offset
			nw := ""
			if addImport {
				nw, addImport = imp, false
			} else if inBlock(f, fromSpec) {
				off, end = wholeLine(src, off, end)
			}
			es = append(es, edit{off, end, nw})
		}
		if addImport {
			off, end, nw := importEdit(fset, f, src, imp)
			es = append(es, edit{off, end, nw})
		}
		sort.SliceStable(es, func(i, j int) bool { return es[i].off > es[j].off })
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
		fmt.Printf("%s: %d\n", name, len(quals)+len(bare))
		total += len(quals) + len(bare)
	}
	if len(unresolved) > 0 {
		sort.Strings(unresolved)
		fmt.Fprintf(os.Stderr, "moverefs: %s: names that resolve nowhere and are not exported by %s (move or export them by hand):\n  %s\n",
			p.ImportPath, mv.to.ImportPath, strings.Join(unresolved, "\n  "))
	}
	return total, nil
}

// importEdit adds the import path imp (quoted) to f: at the end of its
// first import declaration (as a group of its own after standard-library
// imports only), or as a declaration after the package clause.
func importEdit(fset *token.FileSet, f *ast.File, src []byte, imp string) (off, end int, nw string) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		std := true
		for _, s := range g.Specs {
			path, _ := strconv.Unquote(s.(*ast.ImportSpec).Path.Value)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				std = false
			}
		}
		sep := "\n"
		if std {
			sep = "\n\n"
		}
		if !g.Lparen.IsValid() { // import "x": becomes a block
			off, end := fset.Position(g.Pos()).Offset, fset.Position(g.End()).Offset
			spec := src[fset.Position(g.Specs[0].Pos()).Offset:end]
			return off, end, "import (\n" + string(spec) + sep + imp + "\n)"
		}
		off := fset.Position(g.Specs[len(g.Specs)-1].End()).Offset
		return off, off, sep + imp
	}
	off = fset.Position(f.Name.End()).Offset
	return off, off, "\n\nimport " + imp + "\n"
}

// inBlock reports whether s sits in a parenthesised import declaration.
func inBlock(f *ast.File, s *ast.ImportSpec) bool {
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

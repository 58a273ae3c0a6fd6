package cshimdeps

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

func cshimDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "cshim")
}

func load(t *testing.T) map[string]*File {
	t.Helper()
	files, err := Load(cshimDir())
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sorted(files map[string]*File, keep func(*File) bool) []*File {
	var out []*File
	for _, f := range files {
		if keep(f) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func isHeader(f *File) bool { return strings.HasSuffix(f.Name, ".h") }
func isC(f *File) bool      { return strings.HasSuffix(f.Name, ".c") }

// definers maps each name defined at file scope in a .c file to the files.
func definers(files map[string]*File) map[string][]string {
	d := map[string][]string{}
	for _, f := range sorted(files, isC) {
		for n := range f.Defined {
			d[n] = append(d[n], f.Name)
		}
	}
	return d
}

// The circles of issue 39 were headers whose inline bodies called into
// the .c files that include them (gclock.h and buffers.c, comms.c,
// goside.c, polls.c, timer.c; bytes.h and typesize.c). A header may keep
// a function body only when it names nothing a .c file defines.
func TestHeaders_NoFunctionBodyNamesWhatACFileDefines(t *testing.T) {
	files := load(t)
	defs := definers(files)
	for _, h := range sorted(files, isHeader) {
		for fn, ids := range h.Bodies {
			var bad []string
			for id := range ids {
				if d, ok := defs[id]; ok {
					bad = append(bad, fmt.Sprintf("%s (%s)", id, strings.Join(d, ", ")))
				}
			}
			sort.Strings(bad)
			if len(bad) > 0 {
				t.Errorf("%s: the body of %s names %s: a header declares; move the body into a .c file of the one translation unit (cshim/libgclock.c) and declare it here",
					h.Name, fn, strings.Join(bad, ", "))
			}
		}
	}
}

// Headers declare: no variable is defined in a header (each file that
// included it would get its own copy, or depend on the one file that
// defines it being compiled first).
func TestHeaders_DefineNoVariable(t *testing.T) {
	files := load(t)
	for _, h := range sorted(files, isHeader) {
		for n := range h.Defined {
			if _, fn := h.Bodies[n]; fn {
				continue
			}
			t.Errorf("%s defines the variable %s: declare it extern here and define it in a .c file", h.Name, n)
		}
	}
}

// The include graph has no cycle, and only libgclock.c (the one
// translation unit) includes .c files.
func TestIncludes_NoCycleAndOnlyTheUnitIncludesCFiles(t *testing.T) {
	files := load(t)
	if c := Cycle(files); c != nil {
		t.Errorf("include cycle: %s", strings.Join(c, " -> "))
	}
	for _, f := range sorted(files, func(*File) bool { return true }) {
		if len(f.IncludeC) > 0 && f.Name != "libgclock.c" {
			t.Errorf("%s includes %s: only libgclock.c, the one translation unit, includes .c files", f.Name, strings.Join(f.IncludeC, ", "))
		}
	}
	unit := files["libgclock.c"]
	if unit == nil {
		t.Fatal("cshim/libgclock.c is missing")
	}
	in := map[string]bool{}
	for _, c := range unit.IncludeC {
		in[c] = true
	}
	for _, f := range sorted(files, isC) {
		if f.Name != "libgclock.c" && f.Name != "mpidl.c" && !in[f.Name] {
			t.Errorf("%s is not included by libgclock.c: it is compiled nowhere", f.Name)
		}
	}
}

// declarers maps each name a header declares to the headers.
func declarers(files map[string]*File) map[string][]string {
	d := map[string][]string{}
	for _, h := range sorted(files, isHeader) {
		for n := range h.Declared {
			d[n] = append(d[n], h.Name)
		}
	}
	return d
}

// Every file includes (directly or through the headers it includes) a
// header declaring each name it uses from another file, so it does not
// compile only because libgclock.c happens to include another file first.
func TestIncludes_EveryFileIncludesWhatItUses(t *testing.T) {
	files := load(t)
	decl := declarers(files)
	for _, f := range sorted(files, func(*File) bool { return true }) {
		if f.Name == "pmpi_gen.c" || f.Name == "libgclock.c" {
			continue // first in the unit, before any header; the unit itself
		}
		reach := map[string]bool{f.Name: true}
		for _, h := range Closure(files, f.Name) {
			reach[h] = true
		}
		missing := map[string][]string{}
		for id := range f.Used {
			hs, ok := decl[id]
			if !ok || f.Defined[id] {
				continue
			}
			found := false
			for _, h := range hs {
				found = found || reach[h]
			}
			if !found {
				k := strings.Join(hs, " or ")
				missing[k] = append(missing[k], id)
			}
		}
		for _, k := range sortedKeys(missing) {
			ids := missing[k]
			sort.Strings(ids)
			t.Errorf("%s uses %s, declared in %s, which it does not include", f.Name, strings.Join(ids, ", "), k)
		}
	}
}

// Every project header a file includes directly declares something the
// file uses (or defines).
func TestIncludes_EveryFileIncludesOnlyWhatItUses(t *testing.T) {
	files := load(t)
	for _, f := range sorted(files, func(*File) bool { return true }) {
		for _, h := range f.Includes {
			hf := files[h]
			if hf == nil {
				t.Errorf("%s includes %s, which is not in cshim/", f.Name, h)
				continue
			}
			used := reexports[f.Name+" "+h]
			for n := range hf.Declared {
				used = used || f.Used[n] || f.Defined[n]
			}
			if !used {
				t.Errorf("%s includes %s but uses nothing it declares", f.Name, h)
			}
		}
	}
}

// A static name of one .c file is used by no other file unless a header
// the user includes declares it (the hot path's static inline functions):
// such a use compiles only because libgclock.c includes the defining file
// first.
func TestCFiles_UseNoOtherFilesStatics(t *testing.T) {
	files := load(t)
	owner := map[string]string{}
	for _, f := range sorted(files, isC) {
		for n := range f.Static {
			owner[n] = f.Name
		}
	}
	for _, f := range sorted(files, isC) {
		var bad []string
		for id := range f.Used {
			if o, ok := owner[id]; ok && o != f.Name && !f.Defined[id] && !f.Params[id] && !reach(files, f.Name, id) {
				bad = append(bad, fmt.Sprintf("%s (%s)", id, o))
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s uses another file's static %s: declare it in that file's header (extern, hidden) or reach it through a function", f.Name, strings.Join(bad, ", "))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// reach reports whether a header in name's include closure declares id.
func reach(files map[string]*File, name, id string) bool {
	for _, h := range Closure(files, name) {
		if files[h] != nil && files[h].Declared[id] {
			return true
		}
	}
	return false
}

// reexports are includes a header makes for the files that include it:
// gclock.h brings pmpi_gen.h's macros, which turn every PMPI_* call of the
// shim into a call through its resolved pointer, to every file.
var reexports = map[string]bool{"gclock.h pmpi_gen.h": true}

// docs/explanation/cshim.md lists what each header (and some .c files)
// includes; every line must match the sources, and every header be there.
func TestDocs_IncludeListMatchesTheSources(t *testing.T) {
	files := load(t)
	path := filepath.Join(cshimDir(), "..", "docs", "explanation", "cshim.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "<!-- cshimdeps:includes -->\n```\n")
	if i < 0 {
		t.Fatalf("%s: no <!-- cshimdeps:includes --> block", path)
	}
	block := doc[i+len("<!-- cshimdeps:includes -->\n```\n"):]
	block = block[:strings.Index(block, "```")]
	listed := map[string]bool{}
	for _, l := range strings.Split(block, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		name, incs, ok := strings.Cut(l, "─►")
		name = strings.TrimSpace(name)
		f := files[name]
		if !ok || f == nil {
			t.Errorf("%s: line %q names no file of cshim/", path, l)
			continue
		}
		listed[name] = true
		if got, want := strings.Join(f.Includes, " "), strings.Join(strings.Fields(incs), " "); got != want {
			t.Errorf("%s: %s includes %q, the page says %q", path, name, got, want)
		}
	}
	for _, h := range sorted(files, isHeader) {
		if !listed[h.Name] {
			t.Errorf("%s: header %s is not in the include list", path, h.Name)
		}
	}
}

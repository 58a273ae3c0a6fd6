// Package cshimdeps reads the C shim's sources (cshim/*.c, cshim/*.h) well
// enough to check how its files depend on each other: which project
// headers each file includes, which names each header declares, which
// names each file defines and uses, and which names the function bodies a
// header still holds use. It is not a C parser: it strips comments,
// string and character literals and preprocessor lines, tracks brace
// depth, and reads identifiers; the shim's code style (one declaration a
// statement, function bodies opening at depth 0) is what it relies on.
//
// Its test (cshimdeps_test.go) keeps the shim free of the include/call
// circles issue 39 removed: headers declare, .c files define, and every
// file includes the headers it uses and only those.
package cshimdeps

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// File is one source file of cshim/.
type File struct {
	Name     string                     // base name, e.g. "gclock.h"
	Includes []string                   // project headers it #includes ("x.h"), in order
	IncludeC []string                   // .c files it #includes (only libgclock.c may)
	Declared map[string]bool            // names a header declares or defines: macros, types, enum constants, prototypes, externs
	Defined  map[string]bool            // names defined at file scope: functions with bodies, variables
	Static   map[string]bool            // the Defined names that are static
	Used     map[string]bool            // identifiers the file's code names, outside its own definitions' names
	Params   map[string]bool            // parameter names of the functions it defines (they shadow file-scope names)
	Bodies   map[string]map[string]bool // header only: function with a body -> identifiers its body names
}

// Generated reports whether name is a generated file (pmpi/internal/wrapgen).
func Generated(name string) bool {
	return strings.Contains(name, "_gen.")
}

// Load reads every .c and .h file of dir.
func Load(dir string) (map[string]*File, error) {
	var names []string
	for _, pat := range []string{"*.c", "*.h"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, fmt.Errorf("cshimdeps: listing %s: %w", dir, err)
		}
		names = append(names, m...)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("cshimdeps: no C sources in %s", dir)
	}
	files := map[string]*File{}
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("cshimdeps: %w", err)
		}
		f := parse(filepath.Base(p), string(b))
		files[f.Name] = f
	}
	return files, nil
}

var (
	includeRE = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)
	defineRE  = regexp.MustCompile(`(?m)^\s*#\s*define\s+([A-Za-z_]\w*)`)
	identRE   = regexp.MustCompile(`[A-Za-z_]\w*`)
	// a declarator's name: the identifier before "(" of a function, or
	// before "[", "=", ";", ":" or the end of a variable's statement
	funcNameRE = regexp.MustCompile(`([A-Za-z_]\w*)\s*\(`)
	varNameRE  = regexp.MustCompile(`([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*(=.*)?$`)
)

// keywords and words that are never a declared name.
var notNames = map[string]bool{
	"__attribute__": true, "__typeof__": true, "_Static_assert": true, "sizeof": true,
	"_Generic": true, "__builtin_expect": true, "return": true, "if": true, "while": true,
	"for": true, "switch": true, "defined": true, "_Alignof": true,
}

// strip blanks comments, string and character literals (keeping newlines).
func strip(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			end := len(src)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for _, r := range src[i:end] {
				if r == '\n' {
					b.WriteByte('\n')
				}
			}
			b.WriteByte(' ')
			i = end - 1
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = len(src)
			} else {
				i += j - 1
			}
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(`""`)
			i = j
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// logical joins preprocessor continuation lines.
func logical(src string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(src, "\n") {
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

func parse(name, src string) *File {
	f := &File{Name: name, Declared: map[string]bool{}, Defined: map[string]bool{}, Static: map[string]bool{},
		Used: map[string]bool{}, Params: map[string]bool{}, Bodies: map[string]map[string]bool{}}
	for _, m := range includeRE.FindAllStringSubmatch(src, -1) {
		if strings.HasSuffix(m[1], ".c") {
			f.IncludeC = append(f.IncludeC, m[1])
		} else {
			f.Includes = append(f.Includes, m[1])
		}
	}
	code := strip(src)
	header := strings.HasSuffix(name, ".h")
	// Preprocessor lines: macros are declared names; a macro's body uses
	// names (counted as uses of the file).
	var body strings.Builder
	for _, l := range logical(code) {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			if m := defineRE.FindStringSubmatch(t); m != nil {
				if header {
					f.Declared[m[1]] = true
				}
				rest := strings.TrimPrefix(t[strings.Index(t, m[1]):], m[1])
				for _, id := range identRE.FindAllString(rest, -1) {
					f.Used[id] = true
				}
			}
			body.WriteByte('\n')
			continue
		}
		body.WriteString(l)
		body.WriteByte('\n')
	}
	text := body.String()
	// Statements at brace depth 0; a function body is the braces that
	// follow a statement whose text has a parameter list.
	depth := 0
	var stmt strings.Builder
	var fn string // function whose body is open
	var fnParams map[string]bool
	var fnBody strings.Builder
	typedefOpen := false // "typedef struct {" ... "} name;"
	enumOpen := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch c {
		case '{':
			if depth == 0 {
				s := stmt.String()
				st := strings.TrimSpace(s)
				typedefOpen, enumOpen = false, false
				switch {
				case strings.HasPrefix(st, "typedef"):
					typedefOpen = true
					enumOpen = regexp.MustCompile(`\benum\b`).MatchString(st)
				case regexp.MustCompile(`^(static\s+)?(const\s+)?(struct|union|enum)\b[^()=]*$`).MatchString(st):
					enumOpen = regexp.MustCompile(`\benum\b`).MatchString(st)
					if m := regexp.MustCompile(`\b(struct|union|enum)\s+([A-Za-z_]\w*)`).FindStringSubmatch(st); m != nil && header {
						f.Declared[m[2]] = true
					}
				case strings.Contains(st, "(") && !strings.Contains(st, "="):
					fn = declName(st)
					if fn != "" {
						f.Defined[fn] = true
						if header {
							f.Declared[fn] = true
						}
						if regexp.MustCompile(`\bstatic\b`).MatchString(st) {
							f.Static[fn] = true
						}
					}
					for _, id := range identRE.FindAllString(st, -1) {
						if id != fn {
							f.Used[id] = true
						}
					}
					fnParams = map[string]bool{}
					if a, b := strings.Index(st, "("), strings.LastIndex(st, ")"); a >= 0 && b > a {
						for _, p := range strings.Split(st[a+1:b], ",") {
							if ids := identRE.FindAllString(p, -1); len(ids) > 1 {
								f.Params[ids[len(ids)-1]] = true
								fnParams[ids[len(ids)-1]] = true
							}
						}
					}
					stmt.Reset()
					fnBody.Reset()
				default: // an initializer: "T x[] = {" ...
					stmt.WriteByte(c)
				}
				if fn == "" && !typedefOpen && !enumOpen && !strings.Contains(st, "=") {
					stmt.Reset()
				}
			} else if fn != "" {
				fnBody.WriteByte(c)
			} else {
				stmt.WriteByte(c)
			}
			depth++
		case '}':
			depth--
			if depth == 0 && fn != "" {
				ids := map[string]bool{}
				for _, id := range identRE.FindAllString(fnBody.String(), -1) {
					if !fnParams[id] {
						ids[id] = true
					}
					f.Used[id] = true
				}
				if header {
					f.Bodies[fn] = ids
				}
				fn = ""
				continue
			}
			if fn != "" {
				fnBody.WriteByte(c)
			} else {
				stmt.WriteByte(c)
			}
		case ';':
			if depth == 0 {
				declare(f, stmt.String(), header, typedefOpen, enumOpen)
				typedefOpen, enumOpen = false, false
				stmt.Reset()
			} else if fn != "" {
				fnBody.WriteByte(c)
			} else {
				stmt.WriteByte(c)
			}
		default:
			if fn != "" && depth > 0 {
				fnBody.WriteByte(c)
			} else {
				stmt.WriteByte(c)
			}
		}
	}
	for n := range f.Defined {
		delete(f.Used, n)
	}
	return f
}

// declName is the name a function declarator declares.
func declName(st string) string {
	for _, m := range funcNameRE.FindAllStringSubmatch(st, -1) {
		if !notNames[m[1]] {
			return m[1]
		}
	}
	return ""
}

// declare records one statement at depth 0 (its braces, if any, included).
func declare(f *File, st string, header, typedefOpen, enumOpen bool) {
	st = strings.TrimSpace(st)
	if st == "" {
		return
	}
	ids := identRE.FindAllString(st, -1)
	if enumOpen {
		// enum { A = 1, B, ... } [name]: every enumerator is declared
		inner := st
		if a, b := strings.Index(st, "{"), strings.LastIndex(st, "}"); a >= 0 && b > a {
			inner = st[a+1 : b]
		}
		for _, part := range strings.Split(inner, ",") {
			if m := regexp.MustCompile(`^\s*([A-Za-z_]\w*)`).FindStringSubmatch(part); m != nil && header {
				f.Declared[m[1]] = true
			}
			if eq := strings.Index(part, "="); eq >= 0 {
				for _, id := range identRE.FindAllString(part[eq:], -1) {
					f.Used[id] = true
				}
			}
		}
	}
	if enumOpen && !typedefOpen {
		return
	}
	if typedefOpen || strings.HasPrefix(st, "typedef") {
		// the typedef name is the last identifier (or the one before a
		// parameter list, for function pointer types)
		name := ""
		if m := regexp.MustCompile(`\(\s*\*\s*([A-Za-z_]\w*)\s*\)`).FindStringSubmatch(st); m != nil {
			name = m[1]
		} else if len(ids) > 0 {
			name = ids[len(ids)-1]
		}
		if header && name != "" {
			f.Declared[name] = true
		}
		for _, id := range ids {
			if id != name {
				f.Used[id] = true
			}
		}
		if !header && name != "" {
			f.Defined[name] = true
		}
		return
	}
	if strings.HasPrefix(st, "_Static_assert") {
		for _, id := range ids {
			f.Used[id] = true
		}
		return
	}
	// a prototype, an extern, a variable definition, a struct declaration
	name := ""
	var more []string // further declarators of a variable statement
	isFunc := false
	if p := strings.Index(st, "("); p >= 0 && !strings.Contains(st[:p], "=") {
		// "T (*name)(args)" is a variable (function pointer): its first
		// parenthesis opens the declarator
		if m := regexp.MustCompile(`^[^(]*\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(`).FindStringSubmatch(st); m != nil {
			name = m[1]
		} else if m := regexp.MustCompile(`^[^(]*?\b__typeof__\(.*?\)\s*\*?\s*([A-Za-z_]\w*)`).FindStringSubmatch(st); m != nil {
			name = m[1]
		} else {
			name = declName(st)
			isFunc = true
		}
	} else {
		// "T a = 1, *b, c[N]": one name a declarator
		for k, part := range splitTop(st) {
			if eq := strings.Index(part, "="); eq >= 0 {
				part = part[:eq]
			}
			part = strings.TrimSpace(part)
			if k > 0 {
				part = "T " + strings.TrimLeft(part, "* ")
			}
			if m := varNameRE.FindStringSubmatch(part); m != nil {
				if k == 0 {
					name = m[1]
				} else {
					more = append(more, m[1])
				}
			}
		}
	}
	if name == "" || notNames[name] {
		for _, id := range ids {
			f.Used[id] = true
		}
		return
	}
	extern := regexp.MustCompile(`^(extern\b|.*\bextern\b)`).MatchString(st)
	switch {
	case header:
		f.Declared[name] = true
		if !isFunc && !extern {
			f.Defined[name] = true // a variable defined in a header
			if strings.HasPrefix(st, "static") {
				f.Static[name] = true
			}
		}
	case !isFunc && !extern && !regexp.MustCompile(`^(struct|union|enum)\s+\w+$`).MatchString(st):
		for _, n := range append([]string{name}, more...) {
			f.Defined[n] = true
			if regexp.MustCompile(`^static\b`).MatchString(st) {
				f.Static[n] = true
			}
		}
	}
	if header {
		for _, n := range more {
			f.Declared[n] = true
			if !extern {
				f.Defined[n] = true
			}
		}
	}
	for _, id := range ids {
		if id != name && !contains(more, id) {
			f.Used[id] = true
		}
	}
}

// Closure returns the project headers name includes, directly or through
// other headers, in a sorted list.
func Closure(files map[string]*File, name string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		f := files[n]
		if f == nil {
			return
		}
		for _, h := range f.Includes {
			if !seen[h] {
				seen[h] = true
				walk(h)
			}
		}
	}
	walk(name)
	var out []string
	for h := range seen {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// Cycle returns an include cycle among the files (a, b, ..., a), or nil.
func Cycle(files map[string]*File) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		if f := files[n]; f != nil {
			for _, h := range append(append([]string{}, f.Includes...), f.IncludeC...) {
				switch color[h] {
				case grey:
					for i, s := range stack {
						if s == h {
							found = append(append([]string{}, stack[i:]...), h)
						}
					}
					return true
				case white:
					if visit(h) {
						return true
					}
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if color[n] == white && visit(n) {
			return found
		}
	}
	return nil
}

// splitTop splits a statement at the commas outside parentheses, brackets
// and braces.
func splitTop(st string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range st {
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, st[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, st[start:])
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

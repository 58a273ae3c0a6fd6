// Package callsite resolves a call site (an object's path and an address
// inside it, as the recorder stores them) into function and file:line from
// the object's ELF symbols and DWARF line table. It knows nothing of traces:
// merge imports it, it imports only the standard library.
package callsite

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Location is a resolved call site. Names come from files the trace points
// at and are untrusted data: consumers escape them when rendering.
type Location struct {
	Function string
	File     string
	Line     int
}

// String formats the location as "function (file:line)", or the function
// alone when the line is unknown.
func (l Location) String() string {
	if l.File == "" {
		return l.Function
	}
	return fmt.Sprintf("%s (%s:%d)", l.Function, l.File, l.Line)
}

// Resolver turns (object path, address inside the object) into function and
// file:line using the object's ELF symbol table and DWARF line table. Each
// object is parsed once; results are cached. Objects that cannot be opened
// or carry no symbols resolve to "object+0xoff".
type Resolver struct {
	// Search lists extra directories in which to look for an object by its
	// base name when its recorded path does not exist (traces copied off a
	// cluster).
	Search []string

	mu    sync.Mutex
	objs  map[string]*elfInfo
	cache map[objAddr]Location
}

// NewResolver returns an empty resolver.
func NewResolver() *Resolver {
	return &Resolver{objs: map[string]*elfInfo{}, cache: map[objAddr]Location{}}
}

type elfSym struct {
	name     string
	lo, size uint64
}

type cuRange struct {
	lo, hi uint64
	cu     *dwarf.Entry
}

type elfInfo struct {
	err  error
	syms []elfSym
	d    *dwarf.Data
	cus  []cuRange
	rows map[*dwarf.Entry][]lineRow // line table per CU, parsed on first use
}

// objAddr is a resolved address: the object's path and the address inside it.
type objAddr struct {
	obj  string
	addr uint64
}

// lineRow is one address range of a line table: [lo, hi) -> file:line.
type lineRow struct {
	lo, hi uint64
	file   string
	line   int
}

// Resolve resolves addr (a return address minus the object's load base) in
// the object at path. An empty path means the address lies in no known
// object.
func (r *Resolver) Resolve(path string, addr uint64) Location {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := objAddr{obj: path, addr: addr}
	if loc, ok := r.cache[k]; ok {
		return loc
	}
	loc := r.resolve(path, addr)
	r.cache[k] = loc
	return loc
}

func (r *Resolver) resolve(path string, addr uint64) (loc Location) {
	fallback := Location{Function: fmt.Sprintf("%s+0x%x", filepath.Base(path), addr)}
	if path == "" {
		return Location{Function: fmt.Sprintf("0x%x", addr)}
	}
	info := r.objs[path]
	if info == nil {
		info = r.load(path)
		r.objs[path] = info
	}
	if info.err != nil {
		return fallback
	}
	defer func() { // debug/dwarf on a hostile file must not take us down
		if e := recover(); e != nil {
			loc = fallback
		}
	}()
	// A return address points after the call; look up the call itself.
	pc := addr
	if pc > 0 {
		pc--
	}
	if i := sort.Search(len(info.syms), func(i int) bool { return info.syms[i].lo > pc }) - 1; i >= 0 {
		s := info.syms[i]
		if s.size == 0 || pc < s.lo+s.size {
			loc.Function = s.name
		}
	}
	if info.d != nil {
		for _, c := range info.cus {
			if pc < c.lo || pc >= c.hi {
				continue
			}
			rows := info.lineRows(c.cu)
			i := sort.Search(len(rows), func(i int) bool { return rows[i].hi > pc })
			if i < len(rows) && rows[i].lo <= pc {
				loc.File, loc.Line = rows[i].file, rows[i].line
				break
			}
		}
	}
	if loc.Function == "" && loc.File == "" {
		return fallback
	}
	if loc.Function == "" {
		loc.Function = fallback.Function
	}
	return loc
}

// load parses one object's symbols and DWARF compile-unit ranges.
func (r *Resolver) load(path string) (info *elfInfo) {
	info = &elfInfo{}
	defer func() {
		if e := recover(); e != nil {
			info = &elfInfo{err: fmt.Errorf("%s: malformed ELF: %v", path, e)}
		}
	}()
	p := path
	if !fileExists(p) { // regular files only: a FIFO or device named by a trace must not block us
		for _, dir := range r.Search {
			if q := filepath.Join(dir, filepath.Base(path)); fileExists(q) {
				p = q
				break
			}
		}
	}
	if !fileExists(p) {
		info.err = fmt.Errorf("%s: not found (or not a regular file)", path)
		return info
	}
	f, err := elf.Open(p)
	if err != nil {
		info.err = err
		return info
	}
	defer f.Close()
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := get()
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				info.syms = append(info.syms, elfSym{name: s.Name, lo: s.Value, size: s.Size})
			}
		}
	}
	sort.Slice(info.syms, func(i, j int) bool { return info.syms[i].lo < info.syms[j].lo })
	if d, err := f.DWARF(); err == nil {
		info.d = d
		rd := d.Reader()
		for {
			e, err := rd.Next()
			if err != nil || e == nil {
				break
			}
			if e.Tag == dwarf.TagCompileUnit {
				if rs, err := d.Ranges(e); err == nil {
					for _, rg := range rs {
						info.cus = append(info.cus, cuRange{lo: rg[0], hi: rg[1], cu: e})
					}
				}
			}
			rd.SkipChildren()
		}
	}
	if len(info.syms) == 0 && info.d == nil {
		info.err = fmt.Errorf("%s: no symbols or debug info", path)
	}
	return info
}

// lineRows parses (once) the line table of one compile unit into sorted
// address ranges. dwarf.LineReader.SeekPC is not used: it misses pcs of a
// CU whose sequences are not in address order (GCC puts main into
// .text.startup, before .text), which is common.
func (info *elfInfo) lineRows(cu *dwarf.Entry) []lineRow {
	if rows, ok := info.rows[cu]; ok {
		return rows
	}
	var rows []lineRow
	if lr, err := info.d.LineReader(cu); err == nil && lr != nil {
		var prev dwarf.LineEntry
		have := false
		for {
			var le dwarf.LineEntry
			if err := lr.Next(&le); err != nil {
				break
			}
			if have && le.Address > prev.Address && prev.File != nil {
				rows = append(rows, lineRow{lo: prev.Address, hi: le.Address, file: prev.File.Name, line: prev.Line})
			}
			prev, have = le, !le.EndSequence
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].lo < rows[j].lo })
	if info.rows == nil {
		info.rows = map[*dwarf.Entry][]lineRow{}
	}
	info.rows[cu] = rows
	return rows
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

package callsite

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildTarget builds a tiny Go program with symbols and DWARF (go test
// strips its own binary) and returns its path.
func buildTarget(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := "package main\n\n//go:noinline\nfunc target(x int) int {\n\treturn x*3 + 1\n}\n\nfunc main() { println(target(4)) }\n"
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module target\n\ngo 1.22\n"), 0o644)
	cmd := exec.Command("go", "build", "-o", "target", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot build target program with go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "target")
}

func TestResolver_FindsFunctionAndLine(t *testing.T) {
	exe := buildTarget(t)
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var addr uint64
	for _, s := range syms {
		if s.Name == "main.target" {
			addr = s.Value
		}
	}
	if addr == 0 {
		t.Fatal("main.target not in the symbol table")
	}
	r := NewResolver()
	loc := r.Resolve(exe, addr+5) // a return address inside target
	if loc.Function != "main.target" {
		t.Errorf("function = %q", loc.Function)
	}
	if filepath.Base(loc.File) != "main.go" || loc.Line < 4 || loc.Line > 6 {
		t.Errorf("file:line = %s:%d, want main.go:4-6", loc.File, loc.Line)
	}
	if got := r.Resolve("/nonexistent/app", 0x1234); got.Function != "app+0x1234" || got.File != "" {
		t.Errorf("missing object: %+v", got)
	}
	if got := r.Resolve("", 0xabc); got.Function != "0xabc" {
		t.Errorf("no object: %+v", got)
	}
	// a damaged ELF file must not break anything
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("\x7fELF garbage garbage garbage"), 0o644)
	if got := r.Resolve(junk, 0x10); got.Function != "junk+0x10" {
		t.Errorf("junk object: %+v", got)
	}
	// the search path finds an object moved off its recorded path
	r2 := NewResolver()
	r2.Search = []string{filepath.Dir(exe)}
	if got := r2.Resolve("/cluster/home/u/target", addr+5); got.Function != "main.target" {
		t.Errorf("search path: %+v", got)
	}
}

// TestResolver_CMainInTextStartup: GCC -O2 puts main into .text.startup,
// whose line-table sequence precedes .text's; the call's line must still
// be found (dwarf.LineReader.SeekPC misses it).
func TestResolver_CMainInTextStartup(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc not found on PATH: the build needs it for cgo (apt-get install gcc)")
	}
	dir := t.TempDir()
	src := "#include <stdio.h>\n" +
		"__attribute__((noinline)) int helper(int x) { return x * 3; }\n" +
		"int main(int argc, char **argv) {\n" +
		"\tint v = helper(argc);\n" + // line 4
		"\tprintf(\"%d\\n\", v);\n" +
		"\treturn 0;\n}\n"
	os.WriteFile(filepath.Join(dir, "m.c"), []byte(src), 0o644)
	exe := filepath.Join(dir, "m")
	if out, err := exec.Command(cc, "-O2", "-g", "-o", exe, filepath.Join(dir, "m.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc -O2 -g failed: %v %s", err, out)
	}
	// find the call to helper inside main: the return address is the
	// instruction after "call helper"
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	var mainLo, mainSize, helperAddr uint64
	for _, s := range syms {
		switch s.Name {
		case "main":
			mainLo, mainSize = s.Value, s.Size
		case "helper":
			helperAddr = s.Value
		}
	}
	text := f.Section(".text")
	if mainLo == 0 || helperAddr == 0 || text == nil {
		t.Fatalf("symbols main/helper or .text not found in %s", exe)
	}
	code, _ := text.Data()
	var ret uint64
	for a := mainLo; a+5 <= mainLo+mainSize; a++ {
		off := a - text.Addr
		if off+5 > uint64(len(code)) || code[off] != 0xe8 {
			continue
		}
		rel := int32(uint32(code[off+1]) | uint32(code[off+2])<<8 | uint32(code[off+3])<<16 | uint32(code[off+4])<<24)
		if uint64(int64(a+5)+int64(rel)) == helperAddr {
			ret = a + 5
			break
		}
	}
	if ret == 0 {
		t.Fatal("call to helper not found in main (gcc inlined it despite noinline?)")
	}
	loc := NewResolver().Resolve(exe, ret)
	if loc.Function != "main" || filepath.Base(loc.File) != "m.c" || loc.Line != 4 {
		t.Errorf("got %+v, want main at m.c:4", loc)
	}
}

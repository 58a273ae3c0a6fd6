package main

// Section 10: what libgclock.so executes per event, counted by valgrind's
// callgrind. Instruction counts do not move with the machine's load, so
// they show a recorder change's effect where the wall-time rows (sections
// 1 and 9) move by ±15 % from run to run on a shared VM.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// callgrindCase is one program counted under callgrind.
type callgrindCase struct {
	name     string
	prog     string
	arg      string
	countKey string  // output key holding the iterations the program made
	perIter  float64 // events per iteration
	iterWord string
	timeout  time.Duration
}

var callgrindCases = []callgrindCase{
	{"point-to-point path (bench/c/p2p_self 20000: MPI_Irecv + MPI_Isend + MPI_Waitall of both, 4 events per iteration)",
		"p2p_self", "20000", "iterations_made", 4, "iteration", 3 * time.Minute},
	{"collective path (bench/c/barrier_self 50000: MPI_Barrier(MPI_COMM_SELF))",
		"barrier_self", "50000", "calls", 1, "call", 3 * time.Minute},
}

func benchCallgrind(c *Config, rep *Report) []Row {
	const sec = "10"
	var rows []Row
	for _, k := range callgrindCases {
		name := "libgclock.so instructions per event, " + k.name
		r, err := callgrindCount(c, k)
		if err != nil {
			rows = append(rows, unavailable(sec, name, err))
			continue
		}
		rows = append(rows, r.row(sec, name, k))
	}
	// The same programs built with MPICH's mpicc under the MPICH build of
	// the library (make MPI=mpich lib), side by side with Open MPI's rows:
	// handles, statuses and type sizes differ between the two ABIs.
	mb := mpichCallgrindProgs(c)
	for _, k := range callgrindCases {
		name := "MPICH build (build/mpich/libgclock.so): libgclock.so instructions per event, " + k.name
		if mb.err != nil {
			rows = append(rows, unavailable(sec, name, mb.err))
			continue
		}
		r, err := callgrindCountWith(c, k, mb.lib, mb.prog[k.prog])
		if err != nil {
			rows = append(rows, unavailable(sec, name, err))
			continue
		}
		rows = append(rows, r.row(sec, name, k))
	}
	return rows
}

// mpichCallgrindProgs compiles section 10's programs with mpicc.mpich; the
// library is build/mpich/libgclock.so beside c.Lib's directory.
func mpichCallgrindProgs(c *Config) mpichBuild {
	b := mpichBuild{lib: filepath.Join(filepath.Dir(c.Lib), "mpich", "libgclock.so"), prog: map[string]string{}}
	if _, err := os.Stat(b.lib); err != nil {
		b.err = fmt.Errorf("%s not built (make MPI=mpich lib)", rel(c.Root, b.lib))
		return b
	}
	if _, err := exec.LookPath("mpicc.mpich"); err != nil {
		b.err = errors.New("mpicc.mpich not found (make setup installs MPICH)")
		return b
	}
	dir := filepath.Join(c.Work, "bin", "mpich-callgrind")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.err = fmt.Errorf("creating %s: %w", dir, err)
		return b
	}
	for _, k := range callgrindCases {
		out := filepath.Join(dir, k.prog)
		src := filepath.Join(c.Root, "bench", "c", k.prog+".c")
		if _, err := runCmd(time.Minute, c.Root, nil, "mpicc.mpich", "-std=c11", "-O2", "-o", out, src); err != nil {
			b.err = fmt.Errorf("compiling %s with mpicc.mpich: %w", k.prog, err)
			return b
		}
		b.prog[k.prog] = out
	}
	return b
}

// callgrindResult is one counted run: instructions per function of
// libgclock.so's C code, and the iterations the program made.
type callgrindResult struct {
	perFunc map[string]float64
	iters   float64
	zstd    float64 // instructions in libzstd (the C chunk writer's compression)
}

func (r callgrindResult) total() float64 {
	t := 0.0
	for _, v := range r.perFunc {
		t += v
	}
	return t
}

func (r callgrindResult) row(sec, name string, k callgrindCase) Row {
	perIter := r.total() / r.iters
	type fn struct {
		name string
		ir   float64
	}
	var fs []fn
	for n, v := range r.perFunc {
		fs = append(fs, fn{n, v})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].ir > fs[j].ir || (fs[i].ir == fs[j].ir && fs[i].name < fs[j].name) })
	var top []string
	for i := 0; i < len(fs) && i < 5; i++ {
		top = append(top, fmt.Sprintf("%s %s", fs[i].name, num(fs[i].ir/r.iters)))
	}
	value := fmt.Sprintf("%s per event", num(perIter/k.perIter))
	if k.perIter != 1 {
		value += fmt.Sprintf(" (%s per %s)", num(perIter), k.iterWord)
	}
	return Row{Section: sec, Name: name, Value: value,
		Notes: fmt.Sprintf("valgrind --tool=callgrind, one rank, %s %ss; all of the library's C code in the run (wrappers, request table, column split, the chunk writer's packing and CRC, init and finalize; not the Go runtime, not libmpi); per %s, largest: %s; besides, in libzstd (the chunk writer's compression, since 2026-11-28): %s per event. Deterministic: compare runs to see a change",
			num(r.iters), k.iterWord, k.iterWord, strings.Join(top, ", "), num(r.zstd/r.iters/k.perIter))}
}

// callgrindCount runs one case under callgrind with the preload of c.Lib.
func callgrindCount(c *Config, k callgrindCase) (callgrindResult, error) {
	if err := c.libErr(); err != nil {
		return callgrindResult{}, err
	}
	prog, err := c.bin(k.prog)
	if err != nil {
		return callgrindResult{}, err
	}
	return callgrindCountWith(c, k, c.Lib, prog)
}

// callgrindCountWith runs prog (case k) under callgrind with lib preloaded.
func callgrindCountWith(c *Config, k callgrindCase, lib, prog string) (callgrindResult, error) {
	for _, tool := range []string{"valgrind", "callgrind_annotate"} {
		if _, err := exec.LookPath(tool); err != nil {
			return callgrindResult{}, fmt.Errorf("%s not found (make bench installs valgrind as root)", tool)
		}
	}
	dir := c.runDir("callgrind-" + k.prog)
	out := filepath.Join(dir, "callgrind.out")
	// A singleton rank started directly, so valgrind runs the program
	// alone, not a launcher; GODEBUG: the Go runtime's preemption signals
	// trip callgrind's signal bookkeeping (an assertion, no output file).
	env := []string{"LD_PRELOAD=" + lib, "GCLOCK_DIR=" + dir, "GODEBUG=asyncpreemptoff=1"}
	r, err := runCmd(k.timeout, dir, env, "valgrind", "--tool=callgrind", "--callgrind-out-file="+out, prog, k.arg)
	if err != nil {
		return callgrindResult{}, err
	}
	kv := keyValues(r.Stdout)
	vs, err := need(kv, r.Stdout, k.countKey)
	if err != nil {
		return callgrindResult{}, err
	}
	a, err := runCmd(time.Minute, dir, nil, "callgrind_annotate", "--threshold=100", out)
	if err != nil {
		return callgrindResult{}, err
	}
	per := libCFunctions(a.Stdout, filepath.Base(lib))
	if len(per) == 0 {
		return callgrindResult{}, fmt.Errorf("callgrind_annotate lists no C function of %s: %s", rel(c.Root, lib), tail(a.Stdout, 200))
	}
	if vs[0] <= 0 {
		return callgrindResult{}, errors.New(k.prog + " made no iterations")
	}
	return callgrindResult{perFunc: per, iters: vs[0], zstd: objectTotal(a.Stdout, "libzstd.so")}, nil
}

// objectTotal sums callgrind_annotate's per-function counts of the objects
// whose base name starts with prefix.
func objectTotal(annotate, prefix string) float64 {
	t := 0.0
	for _, l := range strings.Split(annotate, "\n") {
		m := annotateLine.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(filepath.Base(m[4]), prefix) {
			continue
		}
		if ir, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64); err == nil {
			t += ir
		}
	}
	return t
}

// annotateLine is one function line of callgrind_annotate's output:
// "  24,659,859 (11.49%)  file:function [object]".
var annotateLine = regexp.MustCompile(`^\s*([0-9,]+)\s+\([^)]*\)\s+([^\s:]*):(\S+)\s+\[([^\]]+)\]\s*$`)

// recursionSuffix is callgrind's mark of a recursion level ('2, '3, ...).
var recursionSuffix = regexp.MustCompile(`'[0-9]+$`)

// cName matches a C function's name, with the suffixes GCC gives the
// copies it specialises (gclock_copy_reqs.constprop.0); Go's names have
// other dots (runtime.mallocgc) or slashes.
var cName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.(constprop|isra|part|cold|lto_priv)(\.[0-9]+)?)*$`)

// libCFunctions sums callgrind_annotate's per-function counts of the C
// functions in the object whose base name is lib (cgo's own glue, x_cgo_*,
// _cgo_* and crosscall*, is the Go runtime's).
func libCFunctions(annotate, lib string) map[string]float64 {
	per := map[string]float64{}
	for _, l := range strings.Split(annotate, "\n") {
		m := annotateLine.FindStringSubmatch(l)
		if m == nil || filepath.Base(m[4]) != lib {
			continue
		}
		// callgrind names a function entered again while it is on the
		// stack fn'2, fn'3, ... (MPI_Allreduce'2 when a resync meeting
		// inside it ran the Go half, which calls back into the library):
		// the same function's instructions.
		fn := recursionSuffix.ReplaceAllString(m[3], "")
		if !cName.MatchString(fn) || strings.HasPrefix(fn, "x_cgo") || strings.HasPrefix(fn, "_cgo") ||
			strings.HasPrefix(fn, "crosscall") {
			continue
		}
		if strings.HasSuffix(m[2], ".go") || strings.HasSuffix(m[2], ".s") {
			continue
		}
		ir, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err != nil {
			continue
		}
		per[fn] += ir
	}
	return per
}

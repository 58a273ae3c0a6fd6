// Command gclockbench runs gclock's benchmarks on this machine and prints
// one table: what users pay (per-event overhead, application latency, trace
// size, MPI_Init/Finalize and exec cost) and what they get (clock sync
// accuracy on real MPI and in simulation, tracemerge throughput). Every
// noisy figure is the median of interleaved runs next to a baseline from the
// same run. `make bench` runs it through scripts/bench.sh and records the
// table in docs/benchmarks.md.
//
// Pieces of gclock that are not built yet (the library, tracemerge,
// clocksim, the trace reader, the AMG-like example) give rows that say
// "not available yet: <why>" instead of figures.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"time"
)

// Config is one benchmark run's settings.
type Config struct {
	Root       string // repository root (holds go.mod)
	Lib        string // libgclock.so to preload
	Tracemerge string // tracemerge binary
	Quick      bool   // BENCH_QUICK: ~1 minute smoke run
	Reps       int    // interleaved repetitions per noisy figure
	Work       string // scratch directory
	Doc        string // markdown file to update ("" = none)
	Only       string // comma-separated section numbers ("" = all)
	Rows       string // section 4: parts of row names to run, separated by | ("" = all)
	Keep       string // section 4: directory that keeps each run's traces ("" = removed)
	Env        string // sections 4 and 9: extra settings of the traced runs, KEY=VALUE separated by spaces
	Log        io.Writer

	bins  map[string]string // compiled C benchmarks by name
	binsE map[string]error  // why a C benchmark did not compile

	// microTraceDir keeps one traced run of barrier_self (monotonic timer)
	// for the trace-size section; microEvents is the program's call count.
	microTraceDir string
	microEvents   float64
	microBytes    float64
	timerNS       map[string]float64
	loadStart     string
}

func (c *Config) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", a...)
	}
}

// sizes are the problem sizes of one mode.
type sizes struct {
	barrierCalls, allreduceCalls int
	timerReads, timerBatches     int
	trueExecs                    int
	syncRanks                    []int
	initRanks                    []int // empty-program MPI_Init/Finalize cost
	syncReps                     int
	syncSleepMS                  int // between MPI_Init and MPI_Finalize
	simRanks                     []int
	mergeEvents                  int
	goBenchtime                  string
	amgArgs                      []string
	amgRanks                     int
}

func (c *Config) sizes() sizes {
	if c.Quick {
		return sizes{
			barrierCalls: 100_000, allreduceCalls: 10_000,
			timerReads: 2000, timerBatches: 201, trueExecs: 100,
			syncRanks: []int{2}, syncReps: 1, syncSleepMS: 200, initRanks: []int{2},
			simRanks: []int{64}, mergeEvents: 100_000,
			goBenchtime: "1x", amgRanks: 2, amgArgs: []string{"--iters", "50", "--compute-us", "0"},
		}
	}
	return sizes{
		barrierCalls: 1_000_000, allreduceCalls: 100_000,
		timerReads: 2000, timerBatches: 1001, trueExecs: 500,
		syncRanks: []int{2, 4, 8}, syncReps: 3, syncSleepMS: 1000, initRanks: []int{2, 8},
		simRanks: []int{64, 512, 16384}, mergeEvents: 10_000_000,
		goBenchtime: "1s", amgRanks: 4, amgArgs: []string{"--iters", "500"},
	}
}

func (c *Config) want(section, name string) bool {
	if c.Only == "" {
		return true
	}
	for _, s := range strings.Split(c.Only, ",") {
		if s = strings.TrimSpace(s); s == section || s == section+":"+name {
			return true
		}
	}
	return false
}

// Report is the outcome of one run.
type Report struct {
	Rows    []Row
	GoBench string // raw `go test -bench` output lines kept for the doc
	Section string // the markdown section written to Doc
	Took    time.Duration
}

// run executes every selected benchmark and, if c.Doc is set, records the
// table there.
func run(c *Config) (*Report, error) {
	t0 := time.Now()
	c.loadStart = loadAvg()
	if c.Reps <= 0 {
		c.Reps = 5
		if c.Quick {
			c.Reps = 3
		}
	}
	if c.Work == "" {
		w, err := os.MkdirTemp("", "gclockbench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(w)
		c.Work = w
	}
	if os.Geteuid() == 0 {
		os.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
		os.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	}
	os.Setenv("OMPI_MCA_rmaps_base_oversubscribe", "1")
	c.compileC()
	m := probeMachine()
	c.logf("gclockbench: %s; %s; work dir %s", m.Key(), m.MPI, c.Work)

	rep := &Report{}
	steps := []struct {
		sec string
		fn  func(*Config, *Report) []Row
	}{ // BENCH_ONLY=1 runs a section, BENCH_ONLY=1:benchInflight one step of it
		{"1", benchOverhead},
		{"1", benchP2PSelf},
		{"1", benchInflight},
		{"2", benchAllreduce},
		{"3", benchTraceSize},
		{"4", benchSync},
		{"4", benchResync},
		{"5", benchClocksim},
		{"5", benchClocksimHour},
		{"6", benchTracemerge},
		{"6", benchTracemergeHalo},
		{"6", benchTracemergeManyRanks},
		{"6", benchTracemergeParallel},
		{"6", benchTracemergeParallelP2P},
		{"6", benchTracemergeParallelK8},
		{"7", benchExec},
		{"8", benchGoTest},
		{"9", benchApps},
		{"10", benchCallgrind},
		{"10", benchCallgrindHalo},
		{"10", benchInflightCallgrind},
	}
	for _, s := range steps {
		if !c.want(s.sec, stepName(s.fn)) {
			continue
		}
		st := time.Now()
		c.logf("section %s ...", s.sec)
		rows := s.fn(c, rep)
		rep.Rows = append(rep.Rows, rows...)
		c.logf("section %s done in %s", s.sec, time.Since(st).Round(100*time.Millisecond))
	}
	rep.Took = time.Since(t0)
	rep.Section = section(m, gitRevision(c.Root), c, rep.Took, rep.Rows, rep.GoBench)
	if c.Doc != "" {
		if err := writeDoc(c.Doc, m.Key(), rep.Section); err != nil {
			return rep, fmt.Errorf("writing %s: %w", c.Doc, err)
		}
	}
	return rep, nil
}

// stepName is a step function's name (benchInflight), for BENCH_ONLY=1:benchInflight.
func stepName(fn any) string {
	n := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	return n[strings.LastIndexByte(n, '.')+1:]
}

// findRoot walks up from dir to the directory holding gclock's go.mod.
func findRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
			strings.Contains(string(b), "module github.com/gclock/gclock\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("not inside the gclock repository (no go.mod of github.com/gclock/gclock above " + dir + ")")
		}
	}
}

func main() {
	wd, _ := os.Getwd()
	root, err := findRoot(wd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gclockbench:", err)
		os.Exit(2)
	}
	c := &Config{Root: root, Log: os.Stderr}
	build := os.Getenv("BUILD")
	if build == "" {
		build = "build"
	}
	flag.StringVar(&c.Lib, "lib", filepath.Join(root, build, "libgclock.so"), "library to preload")
	flag.StringVar(&c.Tracemerge, "tracemerge", filepath.Join(root, build, "tracemerge"), "tracemerge binary")
	flag.BoolVar(&c.Quick, "quick", os.Getenv("BENCH_QUICK") == "1", "smoke run of about a minute (also BENCH_QUICK=1)")
	flag.IntVar(&c.Reps, "reps", 0, "interleaved repetitions per noisy figure (default 5, quick 3)")
	flag.StringVar(&c.Doc, "doc", "", "markdown file whose section for this machine is replaced (e.g. docs/benchmarks.md)")
	flag.StringVar(&c.Only, "only", os.Getenv("BENCH_ONLY"), "comma-separated section numbers to run (1-10)")
	flag.StringVar(&c.Rows, "rows", os.Getenv("BENCH_ROWS"), "section 4: parts of row names separated by |; only rows whose name contains one run (e.g. \"period, 4 ranks|(seed 7), 4 ranks\")")
	flag.StringVar(&c.Env, "env", "", "sections 4 and 9: extra settings for the resync rows' and the applications' traced runs, KEY=VALUE separated by spaces (e.g. GCLOCK_RESYNC_PINGPONGS=50, GCLOCK_BUFFER=2048)")
	flag.StringVar(&c.Keep, "keep", "", "section 4: keep every run's trace directory under this directory")
	flag.StringVar(&c.Work, "work", "", "scratch directory (default: a fresh temporary one, removed afterwards)")
	flag.Parse()
	// Every run's environment preloads c.Lib from its own work directory.
	if abs, err := filepath.Abs(c.Lib); err == nil {
		c.Lib = abs
	}
	rep, err := run(c)
	if rep != nil {
		fmt.Println(rep.Section)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gclockbench:", err)
		os.Exit(1)
	}
}

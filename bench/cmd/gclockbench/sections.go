package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gclock/gclock/trace"
)

// cPrograms are the C microbenchmarks in bench/c.
var cPrograms = []string{"timercost", "barrier_self", "p2p_self", "allreduce", "empty", "halo"}

// compileC builds bench/c/*.c with mpicc into the work directory.
func (c *Config) compileC() {
	c.bins, c.binsE = map[string]string{}, map[string]error{}
	if _, err := exec.LookPath("mpicc"); err != nil {
		for _, p := range cPrograms {
			c.binsE[p] = errors.New("mpicc not found (make setup installs Open MPI)")
		}
		return
	}
	dir := filepath.Join(c.Work, "bin")
	os.MkdirAll(dir, 0o755)
	for _, p := range cPrograms {
		out := filepath.Join(dir, p)
		src := filepath.Join(c.Root, "bench", "c", p+".c")
		if _, err := runCmd(time.Minute, c.Root, nil, "mpicc", "-std=c11", "-O2", "-Wall", "-Wextra", "-o", out, src); err != nil {
			c.binsE[p] = fmt.Errorf("compiling %s: %w", p, err)
			continue
		}
		c.bins[p] = out
	}
}

func (c *Config) bin(name string) (string, error) {
	if b, ok := c.bins[name]; ok {
		return b, nil
	}
	return "", c.binsE[name]
}

// libErr says why the library cannot be preloaded, or nil.
func (c *Config) libErr() error {
	if _, err := os.Stat(c.Lib); err != nil {
		return fmt.Errorf("%s not built (make lib)", rel(c.Root, c.Lib))
	}
	return nil
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// runDir makes a fresh directory for one traced run; the library writes its
// gclock-trace/<job>/ there (ranks inherit mpirun's working directory).
func (c *Config) runDir(tag string) string {
	d, err := os.MkdirTemp(c.Work, tag+"-")
	if err != nil {
		panic(err) // the work directory is ours; failing here is a broken machine
	}
	return d
}

// preloadEnv is the environment of a traced rank writing under dir.
func (c *Config) preloadEnv(dir string, extra ...string) []string {
	return append([]string{"LD_PRELOAD=" + c.Lib, "GCLOCK_DIR=" + dir}, extra...)
}

// ---------------------------------------------------------------- 1

func benchOverhead(c *Config, rep *Report) []Row {
	const sec = "1"
	sz := c.sizes()
	var rows []Row
	tc, errT := c.bin("timercost")
	bs, errB := c.bin("barrier_self")
	timers := []struct{ env, read string }{
		{"monotonic", "monotonic"}, {"monotonic_raw", "monotonic_raw"},
		// cshim reads the TSC with plain rdtsc (cshim/gclock.h); rdtscp is
		// measured too and shown in the timer rows.
		{"tsc", "rdtsc"}, {"mpi_wtime", "mpi_wtime"},
	}
	vs := []variant{}
	if errT == nil {
		vs = append(vs, variant{"timercost", func() (map[string]float64, error) {
			r, err := runCmd(2*time.Minute, c.Work, nil, mpiRun(1, nil, tc, strconv.Itoa(sz.timerReads), strconv.Itoa(sz.timerBatches))...)
			if err != nil {
				return nil, err
			}
			m := map[string]float64{}
			for _, l := range strings.Split(r.Stdout, "\n") {
				var name string
				var v float64
				if n, _ := fmt.Sscanf(l, "timer_ns %s %g", &name, &v); n == 2 {
					m[name] = v
				}
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("timercost printed nothing: %s", tail(r.Stdout+r.Stderr, 200))
			}
			return m, nil
		}})
	}
	barrier := func(env []string, dir string) (map[string]float64, error) {
		r, err := runCmd(3*time.Minute, dir, nil, mpiRun(1, env, bs, strconv.Itoa(sz.barrierCalls))...)
		if err != nil {
			return nil, err
		}
		kv := keyValues(r.Stdout)
		if _, err := need(kv, r.Stdout, "loop_ns", "loop_calls", "loop_ns_per_call", "batch_median_ns_per_call", "finalize_ns", "calls"); err != nil {
			return nil, err
		}
		// Everything the program spent from the first timed call to the
		// end of MPI_Finalize, per timed call: a tracer that defers work
		// (background encoding, the final flush) pays it here.
		kv["total_ns_per_call"] = (kv["loop_ns"] + kv["finalize_ns"]) / kv["loop_calls"]
		return kv, nil
	}
	libE := c.libErr()
	if errB == nil {
		vs = append(vs, variant{"none", func() (map[string]float64, error) { return barrier(nil, c.Work) }})
		if libE == nil {
			for _, t := range timers {
				for _, mode := range overheadModes {
					vs = append(vs, variant{t.env + mode.key, func() (map[string]float64, error) {
						return tracedBarrier(c, barrier, t.env, mode.env...)
					}})
				}
			}
		}
	}
	s, errs := interleave(c.Reps, vs, c.logf)

	// timer read costs
	c.timerNS = map[string]float64{}
	if errT != nil {
		rows = append(rows, unavailable(sec, "timer read cost", errT))
	} else if errs["timercost"] != nil {
		rows = append(rows, unavailable(sec, "timer read cost", errs["timercost"]))
	} else {
		for _, name := range []string{"monotonic", "monotonic_raw", "realtime", "rdtsc", "rdtscp", "mpi_wtime"} {
			xs := s.get("timercost", name)
			if len(xs) == 0 {
				continue
			}
			c.timerNS[name] = median(xs)
			what := "clock_gettime(CLOCK_" + strings.ToUpper(name) + ")"
			switch name {
			case "rdtsc", "rdtscp":
				what = name
			case "mpi_wtime":
				what = "MPI_Wtime (Open MPI)"
			}
			rows = append(rows, Row{Section: sec, Name: "timer read: " + what,
				Value: num(c.timerNS[name]) + " ns", Notes: fmt.Sprintf("median of %d runs (each the median of %d batches of %d back-to-back reads, ≈ 50 µs each so few are preempted, timers taking turns); runs %s",
					len(xs), sz.timerBatches, sz.timerReads, spread(xs, "ns", 1))})
		}
	}
	if errB != nil {
		return append(rows, unavailable(sec, "MPI_Barrier(MPI_COMM_SELF) per call", errB))
	}
	if errs["none"] != nil {
		return append(rows, unavailable(sec, "MPI_Barrier(MPI_COMM_SELF) per call", errs["none"]))
	}
	base, baseHot := s.get("none", "loop_ns_per_call"), s.get("none", "batch_median_ns_per_call")
	baseFin := s.get("none", "finalize_ns")
	rows = append(rows, Row{Section: sec, Name: "MPI_Barrier(MPI_COMM_SELF), no preload",
		Value: num(median(base)) + " ns/call",
		Notes: fmt.Sprintf("%s calls × %d runs; runs %s; median 1000-call batch %s ns", num(float64(sz.barrierCalls)), len(base), spread(base, "ns", 1), num(median(baseHot)))})
	for _, mode := range overheadModes {
		for _, t := range timers {
			name := "MPI_Barrier(SELF) added per call, " + mode.what + ", GCLOCK_TIMER=" + t.env
			if libE != nil {
				rows = append(rows, unavailable(sec, name, libE))
				continue
			}
			key := t.env + mode.key
			if errs[key] != nil {
				rows = append(rows, unavailable(sec, name, errs[key]))
				continue
			}
			var added float64
			r := Row{Section: sec, Name: name}
			if mode.hot {
				traced := s.get(key, "batch_median_ns_per_call")
				added = pairedDiff(baseHot, traced)
				r.Notes = fmt.Sprintf("%s; median 1000-call batch traced %s ns/call (runs %s) vs %s untraced",
					strings.Join(mode.env, " "), num(median(traced)), spread(traced, "ns", 1), num(median(baseHot)))
			} else {
				added = pairedDiff(s.get("none", "total_ns_per_call"), s.get(key, "total_ns_per_call"))
				traced := s.get(key, "loop_ns_per_call")
				fin := pairedDiff(baseFin, s.get(key, "finalize_ns"))
				calls := median(s.get(key, "loop_calls"))
				r.Notes = fmt.Sprintf("default settings; loop traced %s ns/call (runs %s) vs %s untraced, i.e. %s ns/call; MPI_Finalize %s ms (queued and last buffers, sync epoch 1), i.e. %s ns/call",
					num(median(traced)), spread(traced, "ns", 1), num(median(base)), signed(pairedDiff(base, traced)), signed(fin/1e6), signed(fin/calls))
				if ch := s.get(key, "chunks"); len(ch) > 0 {
					r.Notes += fmt.Sprintf("; %s event chunks (buffer flushes) per run", num(median(ch)))
				}
				if bar := s.get(key, "barriers"); len(bar) > 0 {
					made := median(s.get(key, "calls")) // timed calls + warm-up
					if median(bar) != made {
						r.Notes += fmt.Sprintf("; WARNING: trace holds %.0f MPI_Barrier events for %.0f calls", median(bar), made)
					} else {
						r.Notes += fmt.Sprintf("; trace holds exactly the %.0f MPI_Barrier calls made (+%.0f other events)", made, median(s.get(key, "events"))-made)
					}
				}
			}
			if lc := s.get(key, "lib_timer_cost"); len(lc) > 0 && median(lc) > 0 {
				r.Notes += fmt.Sprintf("; library's own timer cost estimate (header) %s ns", num(median(lc)))
			}
			r.Value = num(added) + " ns added"
			if tr, ok := c.timerNS[t.read]; ok {
				r.Baseline = fmt.Sprintf("2 × %s read = %s ns", t.read, num(2*tr))
				r.Ratio = ratio(added, 2*tr)
				// The hot path keeps the 1.10× of the hot-path rule;
				// everything included, issue 12 asks for 1.5×.
				if mode.hot {
					r.Goal = "≤ 1.10×: " + metOrMissed(added/(2*tr) <= 1.1)
				} else {
					r.Goal = "≤ 1.5×: " + metOrMissed(added/(2*tr) <= 1.5)
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// overheadModes are two views of barrier_self under the preload: the hot
// path (the median 1000-call batch, which holds no buffer flush: one batch
// in 32 does at the default buffer) and everything from the first timed
// call to the end of MPI_Finalize per call, which also pays encoding,
// compressing and writing the buffers, wherever and whenever the library
// does it.
//
// The hot path runs with GCLOCK_FLUSH_SYNC=1: the library then encodes a
// full buffer inside the call that filled it (one batch in 32), instead of
// on a background thread that, bound to the rank's core, would slow every
// batch while it works. The amortised view runs with default settings.
var overheadModes = []struct {
	hot  bool
	key  string   // variant name suffix
	env  []string // extra settings
	what string
}{
	{true, "/hot", []string{"GCLOCK_FLUSH_SYNC=1"}, "hot path (median 1000-call batch)"},
	{false, "", nil, "amortised incl. buffer flushes (whole loop + MPI_Finalize)"},
}

// tracedBarrier runs barrier_self under the preload with timer and mode and
// checks that the library traced it with that timer.
func tracedBarrier(c *Config, barrier func([]string, string) (map[string]float64, error), timer string, extra ...string) (map[string]float64, error) {
	dir := c.runDir("barrier-" + timer)
	kv, err := barrier(c.preloadEnv(dir, append([]string{"GCLOCK_TIMER=" + timer}, extra...)...), dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	n, files, _ := dirBytes(dir, "")
	if files == 0 {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("the preloaded run wrote no trace under %s (library not active?)", dir)
	}
	kv["trace_bytes"] = float64(n)
	// The library must have used the timer asked for; its own measured
	// read cost goes into the notes.
	if fs, err := readTraceDir(dir); err == nil && len(fs) > 0 {
		h := fs[0].Header.Timer
		if h.Name != timer {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("GCLOCK_TIMER=%s but the trace header says timer %q", timer, h.Name)
		}
		kv["lib_timer_cost"] = h.CostNS
		kv["events"] = float64(fs[0].Events)
		kv["barriers"] = float64(fs[0].ByOp[trace.OpBarrier])
		kv["chunks"] = float64(fs[0].Chunks)
	}
	if timer == "monotonic" {
		// keep the latest for the trace-size section
		if c.microTraceDir != "" {
			os.RemoveAll(c.microTraceDir)
		}
		c.microTraceDir, c.microEvents, c.microBytes = dir, kv["calls"], float64(n)
	} else {
		os.RemoveAll(dir)
	}
	return kv, nil
}

func metOrMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// ---------------------------------------------------------------- 2

func benchAllreduce(c *Config, rep *Report) []Row {
	const sec = "2"
	name := "8-byte MPI_Allreduce, 2 ranks, median latency"
	sz := c.sizes()
	ar, err := c.bin("allreduce")
	if err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	one := func(env []string, dir string) (map[string]float64, error) {
		r, err := runCmd(3*time.Minute, dir, nil, mpiRun(2, env, ar, strconv.Itoa(sz.allreduceCalls))...)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(r.Stdout, "result ok") {
			return nil, fmt.Errorf("allreduce results changed or missing: %s", tail(r.Stdout, 200))
		}
		kv := keyValues(r.Stdout)
		_, err = need(kv, r.Stdout, "median_ns", "mean_ns")
		return kv, err
	}
	vs := []variant{{"none", func() (map[string]float64, error) { return one(nil, c.Work) }}}
	libE := c.libErr()
	if libE == nil {
		vs = append(vs, variant{"preload", func() (map[string]float64, error) {
			dir := c.runDir("allreduce")
			defer os.RemoveAll(dir)
			kv, err := one(c.preloadEnv(dir), dir)
			if err == nil {
				if _, files, _ := dirBytes(dir, ""); files == 0 {
					return nil, fmt.Errorf("the preloaded run wrote no trace (library not active?)")
				}
			}
			return kv, err
		}})
	}
	s, errs := interleave(c.Reps, vs, c.logf)
	if errs["none"] != nil {
		return []Row{unavailable(sec, name, errs["none"])}
	}
	b, bm := s.get("none", "median_ns"), s.get("none", "mean_ns")
	rows := []Row{{Section: sec, Name: name + ", no preload", Value: num(median(b)) + " ns",
		Notes: fmt.Sprintf("%s calls × %d runs, each call timed; runs %s", num(float64(sz.allreduceCalls)), len(b), spread(b, "ns", 1))}}
	if libE == nil && errs["preload"] != nil {
		libE = errs["preload"]
	}
	if libE != nil {
		return append(rows, unavailable(sec, name+", preload", libE))
	}
	p, pm := s.get("preload", "median_ns"), s.get("preload", "mean_ns")
	rows = append(rows, Row{Section: sec, Name: name + ", preload (default timer and sync)",
		Value: num(median(p)) + " ns", Baseline: num(median(b)) + " ns", Ratio: ratio(median(p), median(b)),
		Notes: fmt.Sprintf("%s ns per call (paired median); runs %s; results checked equal", signed(pairedDiff(b, p)), spread(p, "ns", 1))})
	rows = append(rows, Row{Section: sec, Name: "8-byte MPI_Allreduce, 2 ranks, mean per call (loop time / calls), preload",
		Value: num(median(pm)) + " ns", Baseline: num(median(bm)) + " ns", Ratio: ratio(median(pm), median(bm)),
		Notes: fmt.Sprintf("%s ns per call (paired median); runs %s vs %s; the mean also counts the rare slow calls, e.g. those waiting while a rank encodes and writes a full buffer (GCLOCK_BUFFER events), which the median hides",
			signed(pairedDiff(bm, pm)), spread(pm, "ns", 1), spread(bm, "ns", 1))})
	return rows
}

// ---------------------------------------------------------------- 3

func benchTraceSize(c *Config, rep *Report) []Row {
	const sec = "3"
	var rows []Row
	raw := "24–48 B/event raw records of common tracers"
	name := "trace size, MPI_Barrier(SELF) microbenchmark"
	switch {
	case c.libErr() != nil:
		rows = append(rows, unavailable(sec, name, c.libErr()))
	case c.microTraceDir == "":
		rows = append(rows, unavailable(sec, name, errors.New("no traced microbenchmark run (section 1 did not run or failed)")))
	default:
		events, how := c.microEvents, "events = calls the program made"
		files, err := readTraceDir(c.microTraceDir)
		chunkNote := ""
		if err == nil {
			n, cb := 0, int64(0)
			for _, f := range files {
				n += f.Events
				cb += f.ChunkBytes
			}
			events, how = float64(n), "events read back from the trace"
			chunkNote = fmt.Sprintf("; event chunks alone %s B/event", num(float64(cb)/events))
		}
		rows = append(rows, Row{Section: sec, Name: name,
			Value: fmt.Sprintf("%s B/event", num(c.microBytes/events)), Baseline: raw,
			Ratio: ratio(c.microBytes/events, 24) + " of 24 B",
			Notes: fmt.Sprintf("%s bytes on disk for %s events (%s)%s; identical calls back to back, the best case", num(c.microBytes), num(events), how, chunkNote)})
		rows = append(rows, bufferRow(sec, files, err))
	}
	rows = append(rows, amgTraceSize(c, sec)...)
	return rows
}

func bufferRow(sec string, files []rankFile, err error) Row {
	name := "buffer memory per rank (per thread)"
	if err != nil {
		return unavailable(sec, name, fmt.Errorf("needs the footer: %w", err))
	}
	for _, f := range files {
		if f.Footer != nil && f.Footer.BufferBytes > 0 {
			// Each thread buffer is two halves of GCLOCK_BUFFER records of
			// 72 bytes (cshim/gclock.h, docs/recorder.md "Durability").
			const record = 72
			per := f.Footer.BufferBytes / (2 * record)
			how := "default"
			if _, set := f.Header.Config["GCLOCK_BUFFER"]; set {
				how = "set"
			}
			return Row{Section: sec, Name: name, Value: fmt.Sprintf("%s KiB", num(float64(f.Footer.BufferBytes)/1024)),
				Notes: fmt.Sprintf("Footer.BufferBytes of the microbenchmark trace: two halves of GCLOCK_BUFFER=%d events (%s) × %d B per in-memory record, per thread that calls MPI (file-backed: page cache of the rank's sidecar)",
					per, how, record)}
		}
	}
	return unavailable(sec, name, errors.New("footer lacks BufferBytes"))
}

// amgTraceSize builds and runs examples/amglike under the preload.
func amgTraceSize(c *Config, sec string) []Row {
	name := "trace size, AMG-like program (examples/amglike)"
	if err := c.libErr(); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	srcs, _ := filepath.Glob(filepath.Join(c.Root, "examples", "amglike", "*.c"))
	if len(srcs) == 0 {
		return []Row{unavailable(sec, name, errors.New("examples/amglike has no C sources"))}
	}
	bin := filepath.Join(c.Work, "bin", "amglike")
	args := append([]string{"-std=c11", "-O2", "-o", bin}, srcs...)
	if _, err := runCmd(time.Minute, c.Root, nil, append(append([]string{"mpicc"}, args...), "-lm")...); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	sz := c.sizes()
	dir := c.runDir("amglike")
	defer os.RemoveAll(dir)
	if _, err := runCmd(5*time.Minute, dir, nil, mpiRun(sz.amgRanks, c.preloadEnv(dir), bin, sz.amgArgs...)...); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	bytes, nfiles, _ := dirBytes(dir, "")
	files, err := readTraceDir(dir)
	if err != nil {
		return []Row{unavailable(sec, name, fmt.Errorf("%s bytes in %d files written, but events cannot be counted: %w", num(float64(bytes)), nfiles, err))}
	}
	events, chunk := 0, int64(0)
	for _, f := range files {
		events += f.Events
		chunk += f.ChunkBytes
	}
	if events == 0 {
		return []Row{unavailable(sec, name, errors.New("trace holds no events"))}
	}
	bpe := float64(bytes) / float64(events)
	cpe := float64(chunk) / float64(events)
	run := fmt.Sprintf("%d ranks, %s", sz.amgRanks, strings.Join(sz.amgArgs, " "))
	return []Row{{Section: sec, Name: fmt.Sprintf("%s, %s", name, run),
		Value: num(bpe) + " B/event", Baseline: "24–48 B/event raw records of common tracers",
		Ratio: ratio(bpe, 24) + " of 24 B", Goal: "≤ 6 B/event: " + metOrMissed(bpe <= 6),
		Notes: fmt.Sprintf("whole files (headers, comms, sync epochs, footer included): %s bytes for %d events in %d files; event chunks alone %s B/event; the rest, %s KB per file, does not grow with the run",
			num(float64(bytes)), events, len(files), num(cpe), num(float64(bytes-chunk)/float64(len(files))/1e3))}}
}

// ---------------------------------------------------------------- 4

var syncAlgs = []string{"h2hca", "hca3", "hca2", "jk", "skampi"}

const fakeClock = "5000000:100,-5000000:-100"

func benchSync(c *Config, rep *Report) []Row {
	const sec = "4"
	sz := c.sizes()
	var rows []Row
	empty, err := c.bin("empty")
	if err != nil {
		return []Row{unavailable(sec, "clock sync and MPI_Init/Finalize", err)}
	}
	// Added MPI_Init / MPI_Finalize time: empty program.
	for _, np := range sz.initRanks {
		rows = append(rows, initFinRows(c, sec, empty, np)...)
	}
	libE := c.libErr()

	// Sync algorithms on real MPI with injected clock error; per size the
	// algorithms are interleaved (h2hca hca3 ... h2hca hca3 ...).
	for _, np := range sz.syncRanks {
		name := func(alg string) string {
			return fmt.Sprintf("sync %s, %d ranks (2 emulated nodes, injected ±5 ms, ±100 ppm)", alg, np)
		}
		if libE != nil {
			for _, alg := range syncAlgs {
				rows = append(rows, unavailable(sec, name(alg), libE))
			}
			continue
		}
		lines, algNames := map[string]string{}, map[string]string{}
		var vs []variant
		for _, alg := range syncAlgs {
			vs = append(vs, variant{alg, func() (map[string]float64, error) {
				return syncRun(c, empty, np, alg, lines, algNames)
			}})
		}
		s, errs := interleave(sz.syncReps, vs, c.logf)
		for _, alg := range syncAlgs {
			r := syncRow(sec, name(alg), s[alg], errs[alg], lines[alg], algNames[alg])
			// The default algorithm, measured in the same runs, is every
			// row's baseline: duration ratio against it.
			if d, d0 := s[alg]["dur0"], s[syncAlgs[0]]["dur0"]; len(d) > 0 && len(d0) > 0 {
				r.Baseline = fmt.Sprintf("%s: %s", syncAlgs[0], dur(median(d0)))
				if t0 := s[syncAlgs[0]]["true0"]; len(t0) > 0 {
					r.Baseline += ", true error " + dur(median(t0))
				}
				r.Ratio = ratio(median(d), median(d0)) + " time"
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// initFinRows times MPI_Init and MPI_Finalize of the empty program on np
// ranks with and without the preload, interleaved.
func initFinRows(c *Config, sec, prog string, np int) []Row {
	initFin := func(env []string, dir string) (map[string]float64, error) {
		r, err := runCmd(2*time.Minute, dir, nil, mpiRun(np, env, prog)...)
		if err != nil {
			return nil, err
		}
		m := map[string]float64{"wall_ns": float64(r.Wall.Nanoseconds())}
		n := 0
		for _, l := range strings.Split(r.Stdout, "\n") {
			var rk int
			var in, fin float64
			if k, _ := fmt.Sscanf(l, "rank %d init_ns %g finalize_ns %g", &rk, &in, &fin); k == 3 {
				m["init_ns"] = max(m["init_ns"], in)
				m["finalize_ns"] = max(m["finalize_ns"], fin)
				n++
			}
		}
		if n != np {
			return nil, fmt.Errorf("expected %d rank lines: %s", np, tail(r.Stdout+r.Stderr, 200))
		}
		return m, nil
	}
	vs := []variant{{"none", func() (map[string]float64, error) { return initFin(nil, c.Work) }}}
	libE := c.libErr()
	if libE == nil {
		vs = append(vs, variant{"preload", func() (map[string]float64, error) {
			dir := c.runDir("empty")
			defer os.RemoveAll(dir)
			return initFin(c.preloadEnv(dir), dir)
		}})
	}
	reps := c.Reps + 2
	s, errs := interleave(reps, vs, c.logf)
	var rows []Row
	for _, k := range []struct{ key, what string }{{"init_ns", "MPI_Init"}, {"finalize_ns", "MPI_Finalize"}, {"wall_ns", "whole mpirun"}} {
		name := fmt.Sprintf("empty MPI program, %d ranks on 1 node: %s", np, k.what)
		if k.key != "wall_ns" {
			name += " (slowest rank)"
		}
		if errs["none"] != nil {
			rows = append(rows, unavailable(sec, name, errs["none"]))
			continue
		}
		b := s.get("none", k.key)
		if libE == nil && errs["preload"] != nil {
			libE = errs["preload"]
		}
		if libE != nil {
			rows = append(rows, Row{Section: sec, Name: name + ", no preload", Value: num(median(b)/1e6) + " ms"})
			rows = append(rows, unavailable(sec, name+", added by preload", libE))
			continue
		}
		p := s.get("preload", k.key)
		rows = append(rows, Row{Section: sec, Name: name + ", added by preload",
			Value: signed(pairedDiff(b, p)/1e6) + " ms", Baseline: num(median(b)/1e6) + " ms without",
			Ratio: ratio(median(p), median(b)), Notes: fmt.Sprintf("%d interleaved runs; with preload %s; default settings (h2hca sync epochs at init and finalize)", len(p), spread(p, "ms", 1e6))})
	}
	return rows
}

// syncRun runs the empty program once on np ranks with alg and the
// injected clock error, and returns the figures its trace holds. A run
// whose trace lacks epoch 0 is an error; missing later figures are absent.
func syncRun(c *Config, prog string, np int, alg string, lines, algNames map[string]string) (map[string]float64, error) {
	dir := c.runDir("sync")
	defer os.RemoveAll(dir)
	env := c.preloadEnv(dir, "GCLOCK_SYNC="+alg, fmt.Sprintf("GCLOCK_NODE_SIZE=%d", max(1, np/2)), "GCLOCK_FAKE_CLOCK="+fakeClock)
	r, err := runCmd(3*time.Minute, dir, nil, mpiRun(np, env, prog, strconv.Itoa(c.sizes().syncSleepMS))...)
	if err != nil {
		return nil, err
	}
	line := rank0SyncLine(r.Stdout+"\n"+r.Stderr, alg)
	lines[alg] = line
	files, err := readTraceDir(dir)
	if err == nil && len(files) != np {
		err = fmt.Errorf("%d rank files for %d ranks", len(files), np)
	}
	f, ok := summariseEpoch(files, 0)
	if err == nil && !ok {
		err = errors.New("trace holds no sync epoch 0")
	}
	if err != nil {
		if line != "" {
			err = fmt.Errorf("%w; rank 0 said: %s", err, line)
		}
		return nil, err
	}
	algNames[alg] = f.Algorithm
	m := map[string]float64{"wall": float64(r.Wall.Nanoseconds()), "dur0": f.DurationNS}
	if f.Checks > 0 {
		m["check0"] = f.CheckMaxNS
	}
	if !math.IsNaN(f.TrueMaxNS) {
		m["true0"] = f.TrueMaxNS
	}
	if f1, ok := summariseEpoch(files, 1); ok {
		m["dur1"] = f1.DurationNS
		if f1.Checks > 0 {
			m["check1"] = f1.CheckMaxNS
		}
		if !math.IsNaN(f1.TrueMaxNS) {
			m["true1"] = f1.TrueMaxNS
		}
	}
	if e, a, ok := extrapolatedError(files); ok {
		m["extra"], m["after"] = e, a
	}
	return m, nil
}

// syncRow turns one algorithm's samples into its table row.
func syncRow(sec, name string, s map[string][]float64, err error, line, algName string) Row {
	if len(s["dur0"]) == 0 {
		if err == nil {
			err = errors.New("no run produced figures")
		}
		return unavailable(sec, name, err)
	}
	r := Row{Section: sec, Name: name, Value: dur(median(s["dur0"])) + " sync",
		Notes: fmt.Sprintf("epoch 0 (%s), median of %d interleaved runs; residual = largest Check offset on rank 0 (Algorithm 6), true error = largest difference over ranks between model and injected truth at sync end; mpirun wall %s",
			algName, len(s["dur0"]), dur(median(s["wall"])))}
	if err != nil {
		r.Notes += fmt.Sprintf("; a later run failed: %v", err)
	}
	if xs := s["check0"]; len(xs) > 0 {
		r.Value += ", residual " + dur(median(xs))
	} else {
		r.Notes += "; no Check results in rank 0's epoch"
	}
	if xs := s["true0"]; len(xs) > 0 {
		r.Value += ", true error " + dur(median(xs))
	} else {
		r.Notes += "; header records no injection"
	}
	if xs := s["dur1"]; len(xs) > 0 {
		r.Notes += fmt.Sprintf("; epoch 1 (MPI_Finalize): %s sync", dur(median(xs)))
		if ys := s["check1"]; len(ys) > 0 {
			r.Notes += ", residual " + dur(median(ys))
		}
		if ys := s["true1"]; len(ys) > 0 {
			r.Notes += ", true error " + dur(median(ys))
		}
	}
	if xs := s["extra"]; len(xs) > 0 {
		after := median(s["after"])
		r.Value += fmt.Sprintf(" (%s after %s with the init model alone)", dur(median(xs)), dur(after))
		r.Notes += fmt.Sprintf("; the epoch-0 model evaluated at epoch 1's start, %s later, is off by %s (true error)", dur(after), dur(median(xs)))
	}
	if line != "" {
		r.Notes += "; rank 0: " + line
	}
	return r
}

// rank0SyncLine picks the line the library prints on rank 0 after the sync.
func rank0SyncLine(out, alg string) string {
	for _, l := range strings.Split(out, "\n") {
		ll := strings.ToLower(l)
		if strings.Contains(ll, "gclock") && strings.Contains(ll, "sync") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// ---------------------------------------------------------------- 5

// simRow is one line of `clocksim -json`.
type simRow struct {
	Algorithm         string
	Ranks, Nodes      int
	FitPoints         int
	PingPongs         int
	Duration          float64 // simulated seconds
	MaxErr0, MaxErr10 float64 // seconds
	WorstRank0        int
	WorstRank10       int
	Wall              float64 `json:"wall_seconds"`
}

// simRanksPerNode places simulated ranks 32 to a node.
const simRanksPerNode = 32

func benchClocksim(c *Config, rep *Report) []Row {
	const sec = "5"
	name := "clock sync in simulation (cmd/clocksim)"
	if _, err := os.Stat(filepath.Join(c.Root, "cmd", "clocksim")); err != nil {
		return []Row{unavailable(sec, name, errors.New("cmd/clocksim not in the tree"))}
	}
	bin := filepath.Join(c.Work, "bin", "clocksim")
	if _, err := runCmd(3*time.Minute, c.Root, nil, "go", "build", "-o", bin, "./cmd/clocksim"); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	var rows []Row
	for _, n := range c.sizes().simRanks {
		var base *simRow
		for _, alg := range syncAlgs {
			rs, sr := simRows(c, sec, bin, n, alg)
			if alg == syncAlgs[0] {
				base = sr
			}
			if base != nil && sr != nil && len(rs) == 1 {
				rs[0].Baseline = fmt.Sprintf("%s: %s, %s at 10 s", syncAlgs[0], dur(base.Duration*1e9), dur(base.MaxErr10*1e9))
				rs[0].Ratio = ratio(sr.Duration, base.Duration) + " time"
			}
			rows = append(rows, rs...)
		}
	}
	return rows
}

// simTimeout bounds one clocksim run (one algorithm, one size); the largest
// (JK on 16,384 ranks) takes about 45 s on a 2-core VM.
const simTimeout = 150 * time.Second

// simRows runs clocksim for one algorithm and size; it also returns the
// parsed line (nil if none).
func simRows(c *Config, sec, bin string, n int, alg string) ([]Row, *simRow) {
	name := fmt.Sprintf("simulated %s, %d ranks", alg, n)
	nodes := max(2, n/simRanksPerNode)
	var rows []Row
	r, _, err := runRSS(simTimeout, c.Work, nil, bin, "-ranks", strconv.Itoa(n), "-nodes", strconv.Itoa(nodes), "-alg", alg, "-seed", "1", "-json")
	if err != nil {
		return []Row{unavailable(sec, name, err)}, nil
	}
	var last *simRow
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var sr simRow
		if err := json.Unmarshal([]byte(l), &sr); err != nil {
			rows = append(rows, unavailable(sec, name, fmt.Errorf("unreadable line %q: %w", l, err)))
			continue
		}
		last = &sr
		rows = append(rows, Row{Section: sec,
			Name:  fmt.Sprintf("simulated %s, %d ranks on %d nodes", sr.Algorithm, sr.Ranks, sr.Nodes),
			Value: fmt.Sprintf("%s sync, max error %s at 0 s, %s at 10 s", dur(sr.Duration*1e9), dur(sr.MaxErr0*1e9), dur(sr.MaxErr10*1e9)),
			Notes: fmt.Sprintf("simulated time, seed 1 (deterministic); %d fit points × %d ping-pongs; worst ranks %d / %d; simulation took %s s wall, %s MiB peak RSS",
				sr.FitPoints, sr.PingPongs, sr.WorstRank0, sr.WorstRank10, num(sr.Wall), num(float64(r.MaxRSSKB)/1024))})
	}
	if last == nil {
		rows = append(rows, unavailable(sec, name, fmt.Errorf("no JSON lines: %s", tail(r.Stdout+r.Stderr, 200))))
	}
	return rows, last
}

// ---------------------------------------------------------------- 6

var analysedRE = regexp.MustCompile(`analysed (\d+) events .* in ([0-9.]+)s: ([0-9.]+) M events/s.*peak RSS ([0-9.]+) MiB`)

func benchTracemerge(c *Config, rep *Report) []Row {
	const sec = "6"
	n := c.sizes().mergeEvents
	const ranks = 8
	name := fmt.Sprintf("tracemerge, synthetic run of %s events on %d ranks", num(float64(n)), ranks)
	if _, err := os.Stat(c.Tracemerge); err != nil {
		return []Row{unavailable(sec, name, fmt.Errorf("%s not built (make tracemerge)", rel(c.Root, c.Tracemerge)))}
	}
	dir := filepath.Join(c.Work, "synth")
	defer os.RemoveAll(dir)
	ev := fmt.Sprintf("--events=%d", n)
	rk := fmt.Sprintf("--ranks=%d", ranks)
	g, err := runCmd(5*time.Minute, c.Work, nil, c.Tracemerge, "bench-synth", "--generate-only", "--dir", dir, ev, rk)
	if err != nil {
		return []Row{unavailable(sec, name, fmt.Errorf("tracemerge bench-synth --generate-only: %w", err))}
	}
	size, _, _ := dirBytes(dir, ".gct")
	gen := fmt.Sprintf("run generated in %s s, %s MB of files", num(g.Wall.Seconds()), num(float64(size)/1e6))

	var rssHow string
	analysis := func() (map[string]float64, error) {
		r, how, err := runRSS(10*time.Minute, c.Work, nil, c.Tracemerge, "bench-synth", "--dir", dir, ev, rk)
		rssHow = how
		if err != nil {
			return nil, err
		}
		m := analysedRE.FindStringSubmatch(r.Stdout)
		if m == nil {
			return nil, fmt.Errorf("bench-synth printed no \"analysed ...\" line: %s", tail(r.Stdout+r.Stderr, 200))
		}
		events, _ := strconv.ParseFloat(m[1], 64)
		mevs, _ := strconv.ParseFloat(m[3], 64)
		return map[string]float64{"events": events, "evs": mevs * 1e6, "rss_kb": float64(r.MaxRSSKB), "wall": r.Wall.Seconds()}, nil
	}
	report := func() (map[string]float64, error) {
		out := filepath.Join(c.Work, "merge-out")
		defer os.RemoveAll(out)
		r, _, err := runRSS(10*time.Minute, c.Work, nil, c.Tracemerge, dir, "-o", out, "--formats", "svg,html", "-q")
		if err != nil {
			return nil, err
		}
		for _, f := range []string{"gantt.svg", "index.html"} {
			if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
				return nil, fmt.Errorf("tracemerge wrote no %s", f)
			}
		}
		return map[string]float64{"evs": float64(n) / r.Wall.Seconds(), "rss_kb": float64(r.MaxRSSKB), "wall": r.Wall.Seconds()}, nil
	}
	// Default outputs (issue 13): every file bounded whatever the run's
	// length; the largest one is reported.
	var largest string
	defaults := func() (map[string]float64, error) {
		out := filepath.Join(c.Work, "merge-default")
		defer os.RemoveAll(out)
		r, _, err := runRSS(10*time.Minute, c.Work, nil, c.Tracemerge, dir, "-o", out, "-q")
		if err != nil {
			return nil, err
		}
		ents, err := os.ReadDir(out)
		if err != nil {
			return nil, err
		}
		var big int64
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && !fi.IsDir() && fi.Size() > big {
				big, largest = fi.Size(), e.Name()
			}
		}
		return map[string]float64{"evs": float64(n) / r.Wall.Seconds(), "big": float64(big), "wall": r.Wall.Seconds()}, nil
	}
	// Three repetitions: each full-size run takes seconds, and the whole
	// bench must stay under 10 minutes on a loaded 2-core machine.
	s, errs := interleave(min(c.Reps, 3), []variant{{"analysis", analysis}, {"report", report}, {"default", defaults}}, c.logf)
	var rows []Row
	if e := errs["analysis"]; e != nil {
		rows = append(rows, unavailable(sec, name+": analysis", e))
	} else {
		evs, rss := s.get("analysis", "evs"), s.get("analysis", "rss_kb")
		rows = append(rows, Row{Section: sec, Name: name + ": analysis (load, correct, merge, match, metrics)",
			Value: fmt.Sprintf("%s M events/s, peak RSS %s MiB", num(median(evs)/1e6), num(median(rss)/1024)),
			Notes: fmt.Sprintf("tracemerge bench-synth (in-process timing, excludes start-up); %d runs, %s M events/s; RSS of the child by wait4; %s",
				len(evs), spread(evs, "", 1e6), gen)})
		rows[len(rows)-1].Notes = strings.Replace(rows[len(rows)-1].Notes, "RSS of the child by wait4", rssHow, 1)
	}
	if e := errs["report"]; e != nil {
		rows = append(rows, unavailable(sec, name+": full report", e))
	} else {
		evs, rss, wall := s.get("report", "evs"), s.get("report", "rss_kb"), s.get("report", "wall")
		r := Row{Section: sec, Name: name + ": full report (gantt.svg + index.html)",
			Value: fmt.Sprintf("%s M events/s, peak RSS %s MiB", num(median(evs)/1e6), num(median(rss)/1024)),
			Notes: fmt.Sprintf("tracemerge DIR -o OUT --formats svg,html: %s s wall per run (%d runs, %s s), process start included", num(median(wall)), len(wall), spread(wall, "", 1))}
		if errs["analysis"] == nil {
			r.Baseline = num(median(s.get("analysis", "evs"))/1e6) + " M events/s analysis only"
			r.Ratio = ratio(median(evs), median(s.get("analysis", "evs")))
		}
		rows = append(rows, r)
	}
	if e := errs["default"]; e != nil {
		rows = append(rows, unavailable(sec, name+": default outputs", e))
	} else {
		evs, big, wall := s.get("default", "evs"), s.get("default", "big"), s.get("default", "wall")
		rows = append(rows, Row{Section: sec, Name: name + ": default `tracemerge DIR -o OUT`",
			Value: fmt.Sprintf("%s M events/s, largest output %s MB (%s)", num(median(evs)/1e6), num(median(big)/1e6), largest),
			Goal:  "≥ 3 M events/s, no default output over 100 MB",
			Notes: fmt.Sprintf("all default outputs (per-event exports left out above --per-event-limit); %s s wall per run (%d runs, %s s), process start included",
				num(median(wall)), len(wall), spread(wall, "", 1))})
	}
	return rows
}

// ---------------------------------------------------------------- 7

func benchExec(c *Config, rep *Report) []Row {
	const sec = "7"
	sz := c.sizes()
	name := fmt.Sprintf("/bin/true × %d, never calls MPI_Init", sz.trueExecs)
	loop := func(env []string) (map[string]float64, error) {
		t0 := time.Now()
		for range sz.trueExecs {
			cmd := exec.Command("/bin/true")
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				return nil, fmt.Errorf("/bin/true under %v: %v %s", env, err, tail(string(out), 200))
			}
		}
		return map[string]float64{"ms": float64(time.Since(t0).Nanoseconds()) / 1e6 / float64(sz.trueExecs)}, nil
	}
	vs := []variant{{"none", func() (map[string]float64, error) { return loop(nil) }}}
	libE := c.libErr()
	if libE == nil {
		vs = append(vs, variant{"preload", func() (map[string]float64, error) { return loop(c.preloadEnv(c.Work)) }})
	}
	s, errs := interleave(c.Reps, vs, c.logf)
	if errs["none"] != nil {
		return []Row{unavailable(sec, name, errs["none"])}
	}
	b := s.get("none", "ms")
	if libE == nil {
		libE = errs["preload"]
	}
	if libE != nil {
		return []Row{{Section: sec, Name: name + ", no preload", Value: num(median(b)) + " ms/exec"}, unavailable(sec, name+", added by preload", libE)}
	}
	p := s.get("preload", "ms")
	return []Row{{Section: sec, Name: name + ", added by LD_PRELOAD",
		Value: signed(pairedDiff(b, p)) + " ms/exec", Baseline: num(median(b)) + " ms/exec without",
		Ratio: ratio(median(p), median(b)), Notes: fmt.Sprintf("%d interleaved runs; with preload %s", len(p), spread(p, "ms", 1))}}
}

// ---------------------------------------------------------------- 8

func benchGoTest(c *Config, rep *Report) []Row {
	const sec = "8"
	sz := c.sizes()
	r, err := runCmd(5*time.Minute, c.Root, nil, "go", "test", "-run", "^$", "-bench", ".", "-benchmem",
		"-benchtime", sz.goBenchtime, "./trace", "./merge", "./clocksync")
	rows, keep := parseGoBench(r.Stdout, r.Stderr, sz.goBenchtime)
	rep.GoBench = strings.Join(keep, "\n")
	if len(rows) == 0 {
		why := errors.New("no Benchmark functions in ./trace ./merge ./clocksync")
		if err != nil {
			why = err
		}
		rows = append(rows, unavailable(sec, "go test -bench (trace, merge, clocksync)", why))
	}
	return rows
}

// parseGoBench turns `go test -bench` output into table rows (the key line
// of each benchmark family, and one row per failed package) and the raw
// lines kept for the doc.
func parseGoBench(stdout, stderr, benchtime string) ([]Row, []string) {
	const sec = "8"
	// The table keeps the key line of each benchmark family: its last
	// sub-benchmark, the largest case by the packages' convention. The doc
	// keeps every line under the table.
	var keep []string
	var rows []Row
	family := map[string]int{} // family -> index in rows
	pkg := ""
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "pkg: ") || strings.HasPrefix(l, "Benchmark") {
			keep = append(keep, l)
		}
		if p, ok := strings.CutPrefix(l, "pkg: github.com/gclock/gclock/"); ok {
			pkg = p
		}
		f := strings.Fields(l)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		fam, _, _ := strings.Cut(f[0], "/")
		row := Row{Section: sec, Name: fmt.Sprintf("go test -bench ./%s %s", pkg, f[0]), Value: strings.Join(f[2:], " "),
			Notes: fmt.Sprintf("%s iterations at -benchtime %s", f[1], benchtime)}
		if i, ok := family[pkg+fam]; ok {
			rows[i] = row
			continue
		}
		family[pkg+fam] = len(rows)
		rows = append(rows, row)
	}
	// Packages that failed (e.g. do not build right now) get a row each,
	// with the first compiler or test message that names them.
	all := stdout + "\n" + stderr
	for _, l := range strings.Split(all, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "FAIL" || !strings.HasPrefix(f[1], "github.com/gclock/gclock/") {
			continue
		}
		p := strings.TrimPrefix(f[1], "github.com/gclock/gclock/")
		why := strings.Join(f[2:], " ")
		for _, m := range strings.Split(all, "\n") {
			if strings.HasPrefix(m, p+"/") && strings.Contains(m, ".go:") {
				why = strings.TrimSpace(why + " " + m)
				break
			}
		}
		rows = append(rows, unavailable(sec, "go test -bench ./"+p, fmt.Errorf("%s", why)))
	}
	return rows, keep
}

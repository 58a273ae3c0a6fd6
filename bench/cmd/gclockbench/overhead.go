package main

// Sections 1 and 2: what the recorder adds per call (MPI_Barrier(MPI_COMM_SELF),
// the point-to-point path is in p2p.go) and to an 8-byte MPI_Allreduce.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gclock/gclock/trace"
)

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

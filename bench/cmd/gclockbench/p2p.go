package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gclock/gclock/trace"
)

// benchP2PSelf reports what the wrappers add on the point-to-point path
// (issue 12): bench/c/p2p_self.c posts MPI_Irecv, MPI_Isend and
// MPI_Waitall of the two requests on MPI_COMM_SELF, four events per
// iteration (the two calls and one completion record per request). Rows:
// the hot path per call kind (medians of single timed calls,
// GCLOCK_FLUSH_SYNC=1 as in the barrier rows) and the cost per event
// amortised over the whole loop and MPI_Finalize with default settings.
func benchP2PSelf(c *Config, rep *Report) []Row {
	const sec = "1"
	name := "point-to-point path (MPI_Irecv + MPI_Isend + MPI_Waitall of both on MPI_COMM_SELF)"
	prog, err := c.bin("p2p_self")
	if err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	if err := c.libErr(); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	iters := 200_000
	if c.Quick {
		iters = 50_000
	}
	run := func(env []string, dir string) (map[string]float64, error) {
		r, err := runCmd(3*time.Minute, dir, nil, mpiRun(1, env, prog, strconv.Itoa(iters))...)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(r.Stdout, "result ok") {
			return nil, fmt.Errorf("p2p_self: messages changed or missing: %s", tail(r.Stdout, 200))
		}
		kv := keyValues(r.Stdout)
		_, err = need(kv, r.Stdout, "irecv_median_ns", "isend_median_ns", "waitall_median_ns", "total_ns_per_iter", "iterations", "iterations_made")
		return kv, err
	}
	traced := func(timer string, extra ...string) func() (map[string]float64, error) {
		return func() (map[string]float64, error) {
			dir := c.runDir("p2p-self")
			defer os.RemoveAll(dir)
			kv, err := run(c.preloadEnv(dir, append([]string{"GCLOCK_TIMER=" + timer}, extra...)...), dir)
			if err != nil {
				return nil, err
			}
			fs, err := readTraceDir(dir)
			if err != nil || len(fs) != 1 {
				return nil, fmt.Errorf("the preloaded run left no readable trace (%v)", err)
			}
			f := fs[0]
			kv["events_p2p"] = float64(f.ByOp[trace.OpIrecv] + f.ByOp[trace.OpIsend] + f.ByOp[trace.OpWaitall])
			return kv, nil
		}
	}
	vs := []variant{
		{"none", func() (map[string]float64, error) { return run(nil, c.Work) }},
		{"hot", traced("monotonic", "GCLOCK_FLUSH_SYNC=1")},
		{"amortised", traced("monotonic")},
		{"amortised-tsc", traced("tsc")},
	}
	s, errs := interleave(c.Reps, vs, c.logf)
	for _, v := range vs {
		if errs[v.name] != nil {
			return []Row{unavailable(sec, name, errs[v.name])}
		}
	}
	floor, haveFloor := c.timerNS["monotonic"]
	var rows []Row
	for _, k := range []struct{ key, call, events string }{
		{"irecv_median_ns", "MPI_Irecv", "1 event"},
		{"isend_median_ns", "MPI_Isend", "1 event"},
		{"waitall_median_ns", "MPI_Waitall (2 requests)", "2 completion events, one call"},
	} {
		added := pairedDiff(s.get("none", k.key), s.get("hot", k.key))
		r := Row{Section: sec, Name: "point-to-point hot path: " + k.call + " added per call (median single call), GCLOCK_TIMER=monotonic",
			Value: num(added) + " ns added",
			Notes: fmt.Sprintf("%s; GCLOCK_FLUSH_SYNC=1; median call traced %s ns (runs %s) vs %s untraced, each including one bench timer read; %d iterations",
				k.events, num(median(s.get("hot", k.key))), spread(s.get("hot", k.key), "ns", 1), num(median(s.get("none", k.key))), iters)}
		if haveFloor {
			r.Baseline = fmt.Sprintf("2 × monotonic read = %s ns", num(2*floor))
			r.Ratio = ratio(added, 2*floor)
		}
		rows = append(rows, r)
	}
	// Amortised per event, with the timer of the hot-path rows and with
	// the TSC (GCLOCK_TIMER=auto's choice where it is invariant).
	for _, v := range []struct{ key, timer, read string }{
		{"amortised", "monotonic", "monotonic"},
		{"amortised-tsc", "tsc", "rdtsc"},
	} {
		perIter := pairedDiff(s.get("none", "total_ns_per_iter"), s.get(v.key, "total_ns_per_iter"))
		evs := median(s.get(v.key, "events_p2p")) / median(s.get(v.key, "iterations_made"))
		r := Row{Section: sec, Name: "point-to-point path amortised per event incl. buffer flushes (whole loop + MPI_Finalize), GCLOCK_TIMER=" + v.timer}
		if evs <= 0 {
			rows = append(rows, unavailable(sec, r.Name, fmt.Errorf("the trace holds no point-to-point events")))
			continue
		}
		perEvent := perIter / evs
		r.Value = num(perEvent) + " ns added per event"
		r.Notes = fmt.Sprintf("default settings; %s ns added per iteration (Irecv + Isend + Waitall, %s events recorded per iteration), loop + MPI_Finalize traced %s ns/iteration (runs %s) vs %s untraced",
			num(perIter), num(evs), num(median(s.get(v.key, "total_ns_per_iter"))), spread(s.get(v.key, "total_ns_per_iter"), "ns", 1), num(median(s.get("none", "total_ns_per_iter"))))
		if fl, ok := c.timerNS[v.read]; ok {
			r.Baseline = fmt.Sprintf("2 × %s read = %s ns", v.read, num(2*fl))
			r.Ratio = ratio(perEvent, 2*fl)
			r.Goal = "≤ 1.5×: " + metOrMissed(perEvent/(2*fl) <= 1.5)
		}
		rows = append(rows, r)
	}
	return rows
}

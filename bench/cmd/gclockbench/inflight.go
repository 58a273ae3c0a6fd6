package main

// The call-in-flight marker's cost (docs/guide/crash-hang.md, issue 36: at most
// 2 ns per call): the library beside it built without the marker
// (build/noinflight/libgclock.so, cshim/gclock.h GCK_NO_INFLIGHT) against
// the library, side by side. Section 1: wall time, interleaved runs of
// MPI_Barrier(MPI_COMM_SELF) (median 1000-call batch) and of the
// point-to-point calls (median single calls); section 10: instructions per
// call under callgrind, which the machine's load does not move.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// noInflightLib is the library without the marker, beside c.Lib.
func (c *Config) noInflightLib() (string, error) {
	p := filepath.Join(filepath.Dir(c.Lib), "noinflight", "libgclock.so")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not built (make %s)", rel(c.Root, p), rel(c.Root, p))
	}
	return p, nil
}

func benchInflight(c *Config, rep *Report) []Row {
	const sec = "1"
	name := "call-in-flight marker (docs/guide/crash-hang.md): added per call, with the marker vs the same library without it"
	if err := c.libErr(); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	noLib, err := c.noInflightLib()
	if err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	bs, errB := c.bin("barrier_self")
	ps, errP := c.bin("p2p_self")
	if errB != nil || errP != nil {
		return []Row{unavailable(sec, name, fmt.Errorf("%v %v", errB, errP))}
	}
	calls, iters := 1_000_000, 200_000
	if c.Quick {
		calls, iters = 200_000, 50_000
	}
	arm := func(lib string) func() (map[string]float64, error) {
		return func() (map[string]float64, error) {
			dir := c.runDir("inflight")
			defer os.RemoveAll(dir)
			env := []string{"LD_PRELOAD=" + lib, "GCLOCK_DIR=" + dir, "GCLOCK_TIMER=tsc", "GCLOCK_FLUSH_SYNC=1"}
			r, err := runCmd(3*time.Minute, dir, nil, mpiRun(1, env, bs, strconv.Itoa(calls))...)
			if err != nil {
				return nil, err
			}
			kv := keyValues(r.Stdout)
			if _, err := need(kv, r.Stdout, "batch_median_ns_per_call", "loop_ns_per_call"); err != nil {
				return nil, err
			}
			out := map[string]float64{"barrier": kv["batch_median_ns_per_call"], "barrier_amortised": kv["loop_ns_per_call"]}
			r, err = runCmd(3*time.Minute, dir, nil, mpiRun(1, env, ps, strconv.Itoa(iters))...)
			if err != nil {
				return nil, err
			}
			kv = keyValues(r.Stdout)
			if _, err := need(kv, r.Stdout, "irecv_median_ns", "isend_median_ns", "waitall_median_ns", "loop_ns", "iterations"); err != nil {
				return nil, err
			}
			out["p2p"] = (kv["irecv_median_ns"] + kv["isend_median_ns"] + kv["waitall_median_ns"]) / 3
			out["p2p_amortised"] = kv["loop_ns"] / (3 * kv["iterations"]) // Irecv, Isend, Waitall
			return out, nil
		}
	}
	vs := []variant{{"marker", arm(c.Lib)}, {"nomarker", arm(noLib)}}
	s, errs := interleave(c.Reps, vs, c.logf)
	for _, v := range vs {
		if errs[v.name] != nil {
			return []Row{unavailable(sec, name, errs[v.name])}
		}
	}
	b0, b1 := s.get("nomarker", "barrier"), s.get("marker", "barrier")
	p0, p1 := s.get("nomarker", "p2p"), s.get("marker", "p2p")
	ba0, ba1 := s.get("nomarker", "barrier_amortised"), s.get("marker", "barrier_amortised")
	pa0, pa1 := s.get("nomarker", "p2p_amortised"), s.get("marker", "p2p_amortised")
	return []Row{
		{Section: sec, Name: "call-in-flight marker: MPI_Barrier(SELF) added per call (median 1000-call batch), GCLOCK_TIMER=tsc",
			Value: num(pairedDiff(b0, b1)) + " ns added", Goal: "≤ 2 ns",
			Notes: fmt.Sprintf("%s calls × %d interleaved runs; with the marker %s ns/call (runs %s), without (build/noinflight) %s ns/call (runs %s)",
				num(float64(calls)), len(b1), num(median(b1)), spread(b1, "ns", 1), num(median(b0)), spread(b0, "ns", 1))},
		{Section: sec, Name: "call-in-flight marker: point-to-point call added (mean of the median MPI_Irecv, MPI_Isend, MPI_Waitall), GCLOCK_TIMER=tsc",
			Value: num(pairedDiff(p0, p1)) + " ns added per call", Goal: "≤ 2 ns",
			Notes: fmt.Sprintf("GCLOCK_FLUSH_SYNC=1; %d iterations × %d interleaved runs; with the marker %s ns/call (runs %s), without %s ns/call (runs %s), each including one bench timer read; each median came in 10 ns steps here, so their mean moves by 3.3 ns at a time; the amortised row below does not",
				iters, len(p1), num(median(p1)), spread(p1, "ns", 1), num(median(p0)), spread(p0, "ns", 1))},
		{Section: sec, Name: "call-in-flight marker: MPI_Barrier(SELF) amortised (the whole untimed loop, flushes included, per call), GCLOCK_TIMER=tsc",
			Value: num(pairedDiff(ba0, ba1)) + " ns added per call", Goal: "≤ 2 ns",
			Notes: fmt.Sprintf("the same runs; with the marker %s ns/call (runs %s), without %s ns/call (runs %s)",
				num(median(ba1)), spread(ba1, "ns", 1), num(median(ba0)), spread(ba0, "ns", 1))},
		{Section: sec, Name: "call-in-flight marker: point-to-point amortised (the untimed Irecv/Isend/Waitall loop, flushes included, per call), GCLOCK_TIMER=tsc",
			Value: num(pairedDiff(pa0, pa1)) + " ns added per call", Goal: "≤ 2 ns",
			Notes: fmt.Sprintf("the same runs, GCLOCK_FLUSH_SYNC=1 (flushes on the rank's thread, in the figure); with the marker %s ns/call (runs %s), without %s ns/call (runs %s)",
				num(median(pa1)), spread(pa1, "ns", 1), num(median(pa0)), spread(pa0, "ns", 1))},
	}
}

// benchInflightCallgrind counts the instructions the marker adds per call
// (section 10): the callgrind cases under both libraries.
func benchInflightCallgrind(c *Config, rep *Report) []Row {
	const sec = "10"
	name := "call-in-flight marker: libgclock.so instructions added per call"
	noLib, err := c.noInflightLib()
	if err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	nc := *c
	nc.Lib = noLib
	var rows []Row
	for _, k := range callgrindCases {
		with, err := callgrindCount(c, k)
		if err != nil {
			rows = append(rows, unavailable(sec, name+", "+k.prog, err))
			continue
		}
		without, err := callgrindCount(&nc, k)
		if err != nil {
			rows = append(rows, unavailable(sec, name+", "+k.prog, err))
			continue
		}
		callsPerIter := 3.0 // p2p_self: Irecv, Isend, Waitall
		if k.prog == "barrier_self" {
			callsPerIter = 1
		}
		a, b := with.total()/with.iters, without.total()/without.iters
		rows = append(rows, Row{Section: sec, Name: name + ", " + k.prog,
			Value: fmt.Sprintf("%s per call", num((a-b)/callsPerIter)),
			Notes: fmt.Sprintf("valgrind --tool=callgrind, one rank, %s %ss; %s instructions per %s with the marker, %s without (build/noinflight/libgclock.so, GCK_NO_INFLIGHT); %s",
				num(with.iters), k.iterWord, num(a), k.iterWord, num(b), strings.TrimSpace(k.name))})
	}
	return rows
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// benchTracemergeParallel measures parallel tracemerge (issue 13 §1): one
// synthetic run of 1024 ranks analysed serially (K=1) and under Open
// MPI's mpirun and MPICH's mpiexec with K=2, and with one core per
// process (GOMAXPROCS=1) serially and under mpirun, interleaved, each
// run's imbalance.json checked equal to the serial one. Without
// per-event outputs the K=2 runs partition the analysis
// (GCLOCK_PAR_PARTITION=1, merge/part.go); the same K=2 runs with
// GCLOCK_PAR_PARTITION=0 (every event shipped to process 0,
// merge/dist.go, the default with 2 processes) are measured beside them. Ratio: K=1 wall
// over K=2 wall (MPI start-up included).
func benchTracemergeParallel(c *Config, rep *Report) []Row {
	const sec = "6"
	const ranks = 1024
	n := 10_000_000
	if c.Quick {
		n = 400_000
	}
	name := fmt.Sprintf("parallel tracemerge, synthetic run of %s events on %d ranks", num(float64(n)), ranks)
	dir := filepath.Join(c.Work, "synth-par")
	defer os.RemoveAll(dir)
	if row := parSynth(c, sec, name, dir, n, ranks); row != nil {
		return []Row{*row}
	}
	serial := map[string][]byte{}
	// env: extra environment (GOMAXPROCS=1: one core per process, which
	// shows how the distribution scales apart from the serial run's own
	// goroutines).
	arm := func(tag string, env []string, launcher ...string) func() (map[string]float64, error) {
		return parArm(c, dir, "par-"+tag, []string{"imbalance.json"}, serial, env, launcher...)
	}
	one := []string{"GOMAXPROCS=1"}
	part := []string{"GCLOCK_PAR_PARTITION=1"}
	vs := []variant{{"k1", arm("k1", nil)}, {"ompi", arm("ompi", part, "mpirun", "-np", "2", "-x", "GCLOCK_PAR_PARTITION")}}
	if _, err := exec.LookPath("mpiexec.mpich"); err == nil {
		vs = append(vs, variant{"mpich", arm("mpich", part, "mpiexec.mpich", "-np", "2")})
	}
	ship := []string{"GCLOCK_PAR_PARTITION=0"}
	vs = append(vs, variant{"ompiship", arm("ompiship", ship, "mpirun", "-np", "2", "-x", "GCLOCK_PAR_PARTITION")})
	vs = append(vs, variant{"k1g1", arm("k1g1", one)}, variant{"ompig1", arm("ompig1", append(part, one...), "mpirun", "-np", "2", "-x", "GOMAXPROCS", "-x", "GCLOCK_PAR_PARTITION")},
		variant{"ompishipg1", arm("ompishipg1", append(ship, one...), "mpirun", "-np", "2", "-x", "GOMAXPROCS", "-x", "GCLOCK_PAR_PARTITION")})
	s, errs := interleave(min(c.Reps, 3), vs, c.logf)
	if e := errs["k1"]; e != nil {
		return []Row{unavailable(sec, name, e)}
	}
	var rows []Row
	for _, v := range vs {
		base, label := "k1", map[string]string{"ompi": "Open MPI mpirun -np 2, partitioned", "mpich": "MPICH mpiexec.mpich -np 2, partitioned",
			"ompig1":     "Open MPI mpirun -np 2, partitioned, GOMAXPROCS=1 in every process",
			"ompiship":   "Open MPI mpirun -np 2, events shipped to process 0 (GCLOCK_PAR_PARTITION=0)",
			"ompishipg1": "Open MPI mpirun -np 2, events shipped to process 0, GOMAXPROCS=1 in every process"}[v.name]
		if v.name == "ompig1" || v.name == "ompishipg1" {
			base = "k1g1"
		}
		if label == "" {
			continue
		}
		if e := errs[v.name]; e != nil {
			rows = append(rows, unavailable(sec, name+", "+label, e))
			continue
		}
		if e := errs[base]; e != nil {
			rows = append(rows, unavailable(sec, name+", "+label, e))
			continue
		}
		k1, w := median(s.get(base, "wall")), s.get(v.name, "wall")
		note := "tracemerge DIR -o OUT --formats json,txt -q, MPI start-up included; %d interleaved runs, K=2 %s s, K=1 %s s; imbalance.json identical to K=1 in every run; ratio = K=1 wall / K=2 wall"
		if base == "k1g1" {
			note += "; K=1 with GOMAXPROCS=1 too: how the distribution scales apart from the serial run's own goroutines"
		}
		if pc, kc := cpuNote(s, v.name), cpuNote(s, base); pc != "" && kc != "" {
			// under load the wall times mislead; each process's CPU
			// against K=1's says how the work is split (goal: ≈ K=1's / 2)
			note += "; CPU (user+system, medians): K=2 " + pc + ", K=1 " + strings.TrimPrefix(kc, "process 0 ")
		}
		rows = append(rows, Row{Section: sec, Name: name + ", K=2 (" + label + ") over K=1",
			Value:    fmt.Sprintf("%s s (K=2)", num(median(w))),
			Baseline: fmt.Sprintf("%s s (K=1)", num(k1)),
			Ratio:    ratio(k1, median(w)),
			Goal:     "speed-up ≥ 1.7× (issue 13, 10^8 events)",
			Notes:    fmt.Sprintf(note, len(w), spread(w, "", 1), spread(s.get(base, "wall"), "", 1))})
	}
	return rows
}

// benchTracemergeParallelP2P measures the partitioned point-to-point
// analysis (merge/p2p_part.go, D24): a synthetic run of 1024 ranks with a
// ring halo exchange (8 of 9 events point-to-point) analysed serially and
// under Open MPI's mpirun with K=2, partitioned (every process matches
// the messages to the ranks whose files it decodes, process 0 replays the
// order-dependent sums) and with every event shipped to process 0
// (GCLOCK_PAR_PARTITION=0), interleaved; each run's p2p.json and
// imbalance.json checked equal to K=1's. Ratio: K=1 wall over K=2 wall.
func benchTracemergeParallelP2P(c *Config, rep *Report) []Row {
	const sec = "6"
	const ranks = 1024
	n := 10_000_000
	if c.Quick {
		n = 400_000
	}
	name := fmt.Sprintf("parallel tracemerge, synthetic halo run of %s events (8 of 9 point-to-point) on %d ranks", num(float64(n)), ranks)
	dir := filepath.Join(c.Work, "synth-par-halo")
	defer os.RemoveAll(dir)
	if row := parSynth(c, sec, name, dir, n, ranks, "--halo"); row != nil {
		return []Row{*row}
	}
	serial := map[string][]byte{}
	arm := func(tag string, env []string, launcher ...string) func() (map[string]float64, error) {
		return parArm(c, dir, "parp2p-"+tag, []string{"p2p.json", "imbalance.json"}, serial, env, launcher...)
	}
	vs := []variant{{"k1", arm("k1", nil)},
		{"ompi", arm("ompi", []string{"GCLOCK_PAR_PARTITION=1"}, "mpirun", "-np", "2", "-x", "GCLOCK_PAR_PARTITION")},
		{"ompiship", arm("ompiship", []string{"GCLOCK_PAR_PARTITION=0"}, "mpirun", "-np", "2", "-x", "GCLOCK_PAR_PARTITION")}}
	s, errs := interleave(min(c.Reps, 3), vs, c.logf)
	if e := errs["k1"]; e != nil {
		return []Row{unavailable(sec, name, e)}
	}
	var rows []Row
	for _, v := range vs[1:] {
		label := map[string]string{"ompi": "Open MPI mpirun -np 2, partitioned (point-to-point by receiving rank)",
			"ompiship": "Open MPI mpirun -np 2, events shipped to process 0 (GCLOCK_PAR_PARTITION=0)"}[v.name]
		if e := errs[v.name]; e != nil {
			rows = append(rows, unavailable(sec, name+", "+label, e))
			continue
		}
		k1, w := median(s.get("k1", "wall")), s.get(v.name, "wall")
		rows = append(rows, Row{Section: sec, Name: name + ", K=2 (" + label + ") over K=1",
			Value:    fmt.Sprintf("%s s (K=2)", num(median(w))),
			Baseline: fmt.Sprintf("%s s (K=1)", num(k1)),
			Ratio:    ratio(k1, median(w)),
			Goal:     "speed-up ≥ 1.7× (issue 13, 10^8 events)",
			Notes: fmt.Sprintf("tracemerge DIR -o OUT --formats json,txt -q, MPI start-up included; %d interleaved runs, K=2 %s s, K=1 %s s; p2p.json and imbalance.json identical to K=1 in every run; ratio = K=1 wall / K=2 wall",
				len(w), spread(w, "", 1), spread(s.get("k1", "wall"), "", 1))})
	}
	return rows
}

// parSynth writes the synthetic run of n events on ranks ranks into dir
// for a parallel tracemerge benchmark (extra: more bench-synth flags); a
// non-nil row says why it could not.
func parSynth(c *Config, sec, name, dir string, n, ranks int, extra ...string) *Row {
	if _, err := os.Stat(c.Tracemerge); err != nil {
		r := unavailable(sec, name, fmt.Errorf("%s not built (make tracemerge)", rel(c.Root, c.Tracemerge)))
		return &r
	}
	argv := append([]string{c.Tracemerge, "bench-synth", "--generate-only", "--dir", dir,
		fmt.Sprintf("--events=%d", n), fmt.Sprintf("--ranks=%d", ranks)}, extra...)
	if _, err := runCmd(5*time.Minute, c.Work, nil, argv...); err != nil {
		r := unavailable(sec, name, fmt.Errorf("tracemerge bench-synth --generate-only %s: %w", strings.Join(extra, " "), err))
		return &r
	}
	return nil
}

// parArm returns one interleaved variant: tracemerge on dir (under
// launcher, e.g. mpirun -np 2; none: K=1) with env, its wall time, and
// files checked byte for byte against the first K=1 run's (kept in
// serial).
func parArm(c *Config, dir, tag string, files []string, serial map[string][]byte, env []string, launcher ...string) func() (map[string]float64, error) {
	return func() (map[string]float64, error) {
		out := filepath.Join(c.Work, tag)
		defer os.RemoveAll(out)
		var argv []string
		if len(launcher) > 0 {
			// every process's CPU time (GCLOCK_PAR_STATS=1, merge/dist_stats.go)
			env = append(append([]string(nil), env...), "GCLOCK_PAR_STATS=1")
			argv = append(argv, launcher[0])
			if launcher[0] == "mpirun" {
				argv = append(argv, "-x", "GCLOCK_PAR_STATS")
			}
			argv = append(argv, launcher[1:]...)
		}
		argv = append(argv, c.Tracemerge, dir, "-o", out, "--formats", "json,txt", "-q")
		r, err := runCmd(10*time.Minute, c.Work, env, argv...)
		if err != nil {
			return nil, err
		}
		m := map[string]float64{"wall": r.Wall.Seconds()}
		if len(launcher) == 0 {
			if r.CPU > 0 {
				m["cpu0"] = r.CPU
			}
		} else {
			for p, cpu := range parseParStats(r.Stderr).cpu {
				m[fmt.Sprintf("cpu%d", p)] = cpu
			}
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				return nil, err
			}
			if len(launcher) == 0 && serial[f] == nil {
				serial[f] = b
			} else if serial[f] != nil && !bytes.Equal(b, serial[f]) {
				return nil, fmt.Errorf("%s: %s differs from K=1", tag, f)
			}
		}
		return m, nil
	}
}

// cpuNote is the median CPU time (user + system) of every process of
// variant v (cpu0, cpu1, ... recorded by parArm): "process 0 X s, process
// 1 Y s", or "" when none was recorded.
func cpuNote(s samples, v string) string {
	var parts []string
	for p := 0; ; p++ {
		c := s.get(v, fmt.Sprintf("cpu%d", p))
		if len(c) == 0 {
			break
		}
		parts = append(parts, fmt.Sprintf("process %d %s s", p, num(median(c))))
	}
	return strings.Join(parts, ", ")
}

package main

// Sections 4 and 5: the clock sync on this machine (algorithms, init and
// finalize epochs) and on simulated networks of thousands of ranks.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

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

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ---------------------------------------------------------------- 9
//
// Issue 12's application workloads: the wall time of a whole MPI-heavy
// program with the preload over without, interleaved runs, medians. Each
// program reports its own loop time (start-up and MPI_Finalize left out),
// so the ratio is what the recorder costs the application while it runs.

var wallRe = regexp.MustCompile(`wall ([0-9.]+) s`)

// appWall runs argv (an mpirun command line) in dir and returns the
// program's own "wall <seconds> s".
func appWall(dir string, argv []string) (float64, error) {
	res, err := runCmd(5*time.Minute, dir, nil, argv...)
	if err != nil {
		return 0, err
	}
	out := res.Stdout + res.Stderr
	m := wallRe.FindStringSubmatch(out)
	if m == nil {
		tail := strings.TrimSpace(out)
		if len(tail) > 200 {
			tail = "..." + tail[len(tail)-200:]
		}
		return 0, fmt.Errorf("no \"wall <s> s\" line in the output: %q", tail)
	}
	return strconv.ParseFloat(m[1], 64)
}

func benchApps(c *Config, rep *Report) []Row {
	const sec = "9"
	halo, herr := c.bin("halo")
	amg := filepath.Join(c.Work, "bin", "amglike")
	srcs, _ := filepath.Glob(filepath.Join(c.Root, "examples", "amglike", "*.c"))
	var aerr error
	if len(srcs) == 0 {
		aerr = errors.New("examples/amglike has no C sources")
	} else if _, err := runCmd(time.Minute, c.Root, nil, append(append([]string{"mpicc", "-std=c11", "-O2", "-o", amg}, srcs...), "-lm")...); err != nil {
		aerr = err
	}
	steps, stressSteps, iters := "20000", "50000", "4000"
	if c.Quick {
		steps, stressSteps, iters = "2000", "5000", "200"
	}
	// The halo program at the rate (about 10^6 events per second
	// per rank: 8 µs of compute per 9-event step) carries the goal; the
	// same loop with 2 µs of compute (≈ 3× the rate) shows how the cost
	// grows with the event rate.
	apps := []struct {
		name string
		prog string
		err  error
		args []string
		goal bool
		note string
	}{
		{fmt.Sprintf("halo exchange (bench/c/halo.c: 2×512 B Isend/Irecv + Waitall + 8-byte Allreduce per step), 2 ranks, %s steps, 8 µs compute", steps), halo, herr, []string{steps, "8"}, true, "9 events per step"},
		{fmt.Sprintf("AMG-like (examples/amglike --iters %s --compute-us 5 --spin 1), 2 ranks", iters), amg, aerr, []string{"--iters", iters, "--compute-us", "5", "--spin", "1"}, true, "mostly Isend/Irecv/Waitall"},
		{fmt.Sprintf("halo exchange, stress: 2 µs compute per step, 2 ranks, %s steps", stressSteps), halo, herr, []string{stressSteps, "2"}, false, "9 events per step; no goal: about 3× the issue's event rate"},
	}
	var rows []Row
	for _, a := range apps {
		name := "application wall time with the preload: " + a.name
		if a.err != nil {
			rows = append(rows, unavailable(sec, name, a.err))
			continue
		}
		if err := c.libErr(); err != nil {
			rows = append(rows, unavailable(sec, name, err))
			continue
		}
		vs := []variant{
			{"plain", func() (map[string]float64, error) {
				d := c.runDir("app")
				defer os.RemoveAll(d)
				w, err := appWall(d, mpiRun(2, nil, a.prog, a.args...))
				return map[string]float64{"wall": w}, err
			}},
			{"traced", func() (map[string]float64, error) {
				d := c.runDir("app")
				defer os.RemoveAll(d)
				w, err := appWall(d, mpiRun(2, c.preloadEnv(d), a.prog, a.args...))
				if err != nil {
					return nil, err
				}
				// Events per rank, from the trace itself.
				files, err := readTraceDir(d)
				if err != nil {
					return nil, fmt.Errorf("counting the traced run's events: %w", err)
				}
				n := 0
				for _, f := range files {
					n += f.Events
				}
				if len(files) == 0 || n == 0 {
					return nil, errors.New("the traced run wrote no events")
				}
				return map[string]float64{"wall": w, "events": float64(n) / float64(len(files))}, nil
			}},
		}
		s, errs := interleave(appReps(c), vs, c.logf)
		if errs["plain"] != nil || errs["traced"] != nil {
			rows = append(rows, unavailable(sec, name, errors.Join(errs["plain"], errs["traced"])))
			continue
		}
		p, t := median(s.get("plain", "wall")), median(s.get("traced", "wall"))
		ev := median(s.get("traced", "events"))
		goal := "—"
		pr := pairedRatios(s.get("plain", "wall"), s.get("traced", "wall"))
		paired := fmt.Sprintf("per round (each traced run over the untraced run just before it) median %s× (%s..%s×)",
			num(median(pr)), num(minOf(pr)), num(maxOf(pr)))
		if a.goal {
			goal = "≤ 1.10×: " + metOrMissed(t <= 1.10*p)
			within := 0
			for _, x := range pr {
				if x <= 1.10 {
					within++
				}
			}
			paired += fmt.Sprintf(", %d of %d rounds within the goal", within, len(pr))
		}
		rows = append(rows, Row{Section: sec, Name: name, Value: fmt.Sprintf("%s s", num(t)), Baseline: fmt.Sprintf("%s s without", num(p)),
			Ratio: ratio(t, p), Goal: goal,
			Notes: fmt.Sprintf("the program's own loop time, median of %d interleaved runs each; runs %s..%s s traced, %s..%s s without; %s; %s events per rank (%s M events/s per rank untraced), +%s ns per event; %s",
				len(s.get("traced", "wall")), num(minOf(s.get("traced", "wall"))), num(maxOf(s.get("traced", "wall"))),
				num(minOf(s.get("plain", "wall"))), num(maxOf(s.get("plain", "wall"))), paired,
				num(ev), num(ev/p/1e6), num((t-p)/ev*1e9), a.note)})
	}
	return rows
}

// appReps is how many interleaved runs each application row takes: at
// least 9 in a full run. A whole program's loop time on a shared 2-vCPU VM
// moves by ±15 % from run to run (10 interleaved runs of the AMG-like
// program untraced, 2026-11-26: 0.69..0.96 s), as much as the goal's 10 %,
// so 5 runs' medians disagreed with each other (1.18× and 1.42× in two full
// runs of the same code).
func appReps(c *Config) int {
	if c.Quick || c.Reps >= 9 {
		return c.Reps
	}
	return 9
}

func minOf(xs []float64) float64 {
	m := 0.0
	for i, x := range xs {
		if i == 0 || x < m {
			m = x
		}
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

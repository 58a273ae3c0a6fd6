package main

// Section 6: tracemerge speed and memory (the halo and parallel runs are in
// scale.go and parallel.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

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
		r, cpu, err := runCPU(10*time.Minute, c.Work, nil, c.Tracemerge, dir, "-o", out, "-q")
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
		return map[string]float64{"evs": float64(n) / r.Wall.Seconds(), "big": float64(big), "wall": r.Wall.Seconds(), "cpu": cpu, "rss_kb": float64(r.MaxRSSKB)}, nil
	}
	// The same default run without the delay and critical-path analysis
	// (issue 35's cost goal, docs/explanation/rootcause.md).
	noRoot := func() (map[string]float64, error) {
		out := filepath.Join(c.Work, "merge-noroot")
		defer os.RemoveAll(out)
		r, cpu, err := runCPU(10*time.Minute, c.Work, nil, c.Tracemerge, dir, "-o", out, "-q", "--no-root-causes")
		if err != nil {
			return nil, err
		}
		return map[string]float64{"wall": r.Wall.Seconds(), "cpu": cpu, "rss_kb": float64(r.MaxRSSKB)}, nil
	}
	// Three repetitions of all four: each full-size run takes seconds,
	// and the whole bench must stay under 10 minutes on a loaded 2-core
	// machine.
	s, errs := interleave(min(c.Reps, 3), []variant{{"analysis", analysis}, {"report", report}, {"default", defaults}, {"noroot", noRoot}}, c.logf)
	// The root-cause row's pair alone for the rounds beyond three (five
	// in all by default): its ratio, taken per round, is the figure that
	// moves most with the VM's speed, and a pair costs about 10 s.
	if extra := min(c.Reps, 5) - 3; extra > 0 && errs["default"] == nil && errs["noroot"] == nil {
		// (a failure there, logged, keeps the three rounds' figures;
		// the pairs are kept only while both arms ran)
		more, _ := interleave(extra, []variant{{"default", defaults}, {"noroot", noRoot}}, c.logf)
		if k := min(len(more.get("default", "wall")), len(more.get("noroot", "wall"))); k > 0 {
			for v, figs := range more {
				for f, xs := range figs {
					s[v][f] = append(s[v][f], xs[:k]...)
				}
			}
		}
	}
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
	if e := errs["noroot"]; e != nil {
		rows = append(rows, unavailable(sec, name+": without the root-cause analysis", e))
	} else if errs["default"] == nil {
		// The two runs of a round follow each other: their ratio is taken
		// per round, so a round at the VM's slow speed does not set one
		// arm's median against the other's fast one.
		with, without := s.get("default", "wall"), s.get("noroot", "wall")
		cw, cwo := s.get("default", "cpu"), s.get("noroot", "cpu")
		wr, cr := pairedRatios(without, with), pairedRatios(cwo, cw)
		rows = append(rows, Row{Section: sec, Name: name + ": root causes (delay analysis and critical path) in the default run",
			Value:    fmt.Sprintf("%s s wall, %s s CPU", num(median(with)), num(median(cw))),
			Baseline: fmt.Sprintf("%s s wall, %s s CPU with --no-root-causes", num(median(without)), num(median(cwo))),
			Ratio:    fmt.Sprintf("%s× wall, %s× CPU", num(median(wr)), num(median(cr))),
			Goal:     "≤ 1.25×",
			Notes: fmt.Sprintf("interleaved, %d runs each, ratio taken per round (the two runs next to each other), the value is the median: wall %s×, CPU (user+system) %s×; runs %s s / %s s wall; peak RSS %s / %s MiB; every event of this run is a collective with a wait (the worst case)",
				len(with), strings.TrimSpace(spread(wr, "", 1)), strings.TrimSpace(spread(cr, "", 1)), spread(with, "", 1), spread(without, "", 1), num(median(s.get("default", "rss_kb"))/1024), num(median(s.get("noroot", "rss_kb"))/1024))})
	}
	return rows
}

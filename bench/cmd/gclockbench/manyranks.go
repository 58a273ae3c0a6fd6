package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// benchTracemergeManyRanks measures the one-process analysis at many ranks
// (issue 37 goal 2): the synthetic halo run of 16,384 ranks and 16.4 M
// events (1000 per rank, 65 MB of rank files) and the same number of
// events on 8 ranks, both generated here, analysed with the default
// outputs (`tracemerge DIR -o OUT -q`), interleaved; wall time, CPU time
// (user + system) and peak RSS of each. Goals: ≥ 3 M events/s and peak
// RSS ≤ 1 GiB at 16,384 ranks; throughput at 16,384 ranks within 1.3× of
// that at 8 ranks.
func benchTracemergeManyRanks(c *Config, rep *Report) []Row {
	const sec = "6"
	ranks, n := 16384, 16_384_000
	if c.Quick {
		ranks, n = 1024, 1_024_000
	}
	name := fmt.Sprintf("tracemerge, one process, default outputs, synthetic halo run of %.1f M events on %d ranks", float64(n)/1e6, ranks)
	if _, err := os.Stat(c.Tracemerge); err != nil {
		return []Row{unavailable(sec, name, fmt.Errorf("%s not built (make tracemerge)", rel(c.Root, c.Tracemerge)))}
	}
	many := filepath.Join(c.Work, "synth-many")
	few := filepath.Join(c.Work, "synth-few")
	defer os.RemoveAll(many)
	defer os.RemoveAll(few)
	gen := map[string]string{}
	for _, g := range []struct {
		dir   string
		ranks int
	}{{many, ranks}, {few, 8}} {
		r, err := runCmd(10*time.Minute, c.Work, nil, c.Tracemerge, "bench-synth", "--generate-only", "--halo", "--dir", g.dir,
			fmt.Sprintf("--events=%d", n), fmt.Sprintf("--ranks=%d", g.ranks))
		if err != nil {
			return []Row{unavailable(sec, name, fmt.Errorf("tracemerge bench-synth --generate-only --halo --ranks=%d: %w", g.ranks, err))}
		}
		size, files, _ := dirBytes(g.dir, ".gct")
		gen[g.dir] = fmt.Sprintf("%d files, %s MB, generated in %s s", files, num(float64(size)/1e6), num(r.Wall.Seconds()))
	}
	arm := func(dir string) func() (map[string]float64, error) {
		return func() (map[string]float64, error) {
			out := filepath.Join(c.Work, "many-out")
			defer os.RemoveAll(out)
			r, cpu, err := runCPU(15*time.Minute, c.Work, nil, c.Tracemerge, dir, "-o", out, "-q")
			if err != nil {
				return nil, err
			}
			return map[string]float64{"wall": r.Wall.Seconds(), "cpu": cpu, "rss_kb": float64(r.MaxRSSKB), "evs": float64(n) / r.Wall.Seconds()}, nil
		}
	}
	s, errs := interleave(min(c.Reps, 3), []variant{{"many", arm(many)}, {"few", arm(few)}}, c.logf)
	if e := errs["many"]; e != nil {
		return []Row{unavailable(sec, name, e)}
	}
	wall, cpu, rss := s.get("many", "wall"), s.get("many", "cpu"), s.get("many", "rss_kb")
	rows := []Row{{Section: sec, Name: name,
		Value: fmt.Sprintf("%s M events/s, peak RSS %s MiB", num(float64(n)/median(wall)/1e6), num(median(rss)/1024)),
		Goal:  "≥ 3 M events/s, peak RSS ≤ 1 GiB (issue 37)",
		Notes: fmt.Sprintf("tracemerge DIR -o OUT -q (all default outputs), process start included; %d interleaved runs, %s s wall, %s s CPU (user+system), peak RSS %s MiB; %s",
			len(wall), spread(wall, "", 1), spread(cpu, "", 1), spread(rss, "", 1024), gen[many])}}
	if e := errs["few"]; e != nil {
		return append(rows, unavailable(sec, name+": over 8 ranks", e))
	}
	fw, fc := s.get("few", "wall"), s.get("few", "cpu")
	rows = append(rows, Row{Section: sec, Name: fmt.Sprintf("tracemerge, one process, default outputs, %.1f M events: %d ranks over 8 ranks", float64(n)/1e6, ranks),
		Value:    fmt.Sprintf("%s s wall, %s s CPU", num(median(wall)), num(median(cpu))),
		Baseline: fmt.Sprintf("%s s wall, %s s CPU (8 ranks)", num(median(fw)), num(median(fc))),
		Ratio:    ratio(median(wall), median(fw)),
		Goal:     "≤ 1.3× (throughput at 16,384 ranks within 1.3× of 8 ranks', issue 37)",
		Notes: fmt.Sprintf("the same synthetic halo run on 8 ranks (%s), interleaved with the row above; 8 ranks: %s s wall, %s s CPU, peak RSS %s MiB; ratio = wall at many ranks / wall at 8 (CPU ratio %s)",
			gen[few], spread(fw, "", 1), spread(fc, "", 1), spread(s.get("few", "rss_kb"), "", 1024), ratio(median(cpu), median(fc)))})
	return rows
}

// runCPU is runRSS that also returns the child's CPU time (user + system,
// seconds) as GNU time reports it.
func runCPU(timeout time.Duration, dir string, env []string, argv ...string) (result, float64, error) {
	tm, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		return result{}, 0, fmt.Errorf("CPU time and peak RSS need GNU time (/usr/bin/time): %w", err)
	}
	f, err := os.CreateTemp("", "gclockbench-cpu-")
	if err != nil {
		return result{}, 0, err
	}
	f.Close()
	defer os.Remove(f.Name())
	r, err := runCmd(timeout, dir, env, append([]string{tm, "-o", f.Name(), "-f", "%M %U %S"}, argv...)...)
	if err != nil {
		return r, 0, err
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return r, 0, err
	}
	fs := strings.Fields(lastLine(string(b)))
	if len(fs) != 3 {
		return r, 0, fmt.Errorf("/usr/bin/time left no \"RSS user system\" line: %q", b)
	}
	kb, err1 := strconv.ParseInt(fs[0], 10, 64)
	u, err2 := strconv.ParseFloat(fs[1], 64)
	sy, err3 := strconv.ParseFloat(fs[2], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return r, 0, fmt.Errorf("/usr/bin/time left no \"RSS user system\" line: %q", b)
	}
	r.MaxRSSKB = kb
	return r, u + sy, nil
}

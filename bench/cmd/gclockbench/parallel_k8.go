package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// benchTracemergeParallelK8 measures issue 37's K=8 goals: a synthetic
// halo run of 1024 ranks analysed serially (K=1) and under Open MPI's
// mpirun with K=8 processes on the machine's cores (--oversubscribe),
// GOMAXPROCS=1 in every process, partitioned (GCLOCK_PAR_PARTITION=1),
// with the default outputs (root causes on: every event also streams to
// process 0) and with --no-root-causes. Every process reports its peak
// RSS and the bytes it received (GCLOCK_PAR_STATS=1,
// merge/dist_stats.go); imbalance.json and p2p.json are checked equal to
// K=1's. Rows: the largest process's peak RSS over K=1's, and the bytes
// process 0 received over the rank files' size. Bytes are exact counts;
// RSS varies by a few %, so each arm runs once; a run that takes
// more than 3 minutes is reported as not available.
func benchTracemergeParallelK8(c *Config, rep *Report) []Row {
	const sec = "6"
	const ranks, k = 1024, 8
	// 10^6 events keep the K=8 runs short on a shared machine; a run
	// that hangs (the partitioned pass used to, before D55: docs/
	// explanation/tracemerge.md "Partitioned analysis", "Rounds") is cut
	// after 3 minutes.
	n := 1_000_000
	if c.Quick {
		n = 400_000
	}
	name := fmt.Sprintf("parallel tracemerge K=%d oversubscribed, synthetic halo run of %s events on %d ranks", k, num(float64(n)), ranks)
	dir := filepath.Join(c.Work, "synth-par-k8")
	defer os.RemoveAll(dir)
	if row := parSynth(c, sec, name, dir, n, ranks, "--halo"); row != nil {
		return []Row{*row}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.gct"))
	var size int64
	for _, f := range files {
		if st, e := os.Stat(f); e == nil {
			size += st.Size()
		}
	}
	if err != nil || size == 0 {
		return []Row{unavailable(sec, name, fmt.Errorf("no rank files (.gct) in %s", dir))}
	}
	outs := []string{"imbalance.json", "p2p.json"}
	var rows []Row
	for _, mode := range []struct{ label, flag string }{{"default outputs (root causes on)", ""}, {"--no-root-causes", "--no-root-causes"}} {
		label := name + ", " + mode.label
		run := func(tag string, launcher ...string) (parStats, map[string][]byte, error) {
			out := filepath.Join(c.Work, "park8-"+tag)
			defer os.RemoveAll(out)
			argv := append(append([]string(nil), launcher...), c.Tracemerge, dir, "-o", out, "--formats", "json,txt", "-q")
			if mode.flag != "" {
				argv = append(argv, mode.flag)
			}
			env := []string{"GOMAXPROCS=1", "GCLOCK_PAR_STATS=1", "GCLOCK_PAR_PARTITION=1"}
			// A hung partitioned pass becomes a row that says so.
			r, err := runCmd(3*time.Minute, c.Work, env, argv...)
			if err != nil {
				return parStats{}, nil, err
			}
			got := map[string][]byte{}
			for _, f := range outs {
				if got[f], err = os.ReadFile(filepath.Join(out, f)); err != nil {
					return parStats{}, nil, err
				}
			}
			st := parseParStats(r.Stderr)
			st.wall = r.Wall.Seconds()
			if len(launcher) == 0 {
				st.rss = []int64{r.MaxRSSKB}
			} else if len(st.rss) != k {
				return parStats{}, nil, fmt.Errorf("%d statistics lines (GCLOCK_PAR_STATS=1), want %d: %s", len(st.rss), k, tail(r.Stderr, 300))
			}
			return st, got, nil
		}
		one, serial, err := run("k1")
		if err != nil {
			rows = append(rows, unavailable(sec, label, err))
			continue
		}
		par, got, err := run("k8", "mpirun", "--oversubscribe", "-np", strconv.Itoa(k), "-x", "GOMAXPROCS", "-x", "GCLOCK_PAR_STATS", "-x", "GCLOCK_PAR_PARTITION")
		for _, f := range outs {
			if err == nil && !bytes.Equal(got[f], serial[f]) {
				err = fmt.Errorf("%s with K=%d differs from K=1", f, k)
			}
		}
		if err != nil {
			rows = append(rows, unavailable(sec, label, err))
			continue
		}
		worst, at := int64(0), 0
		for p, r := range par.rss {
			if r > worst {
				worst, at = r, p
			}
		}
		rss := fmt.Sprintf("%v", par.rss)
		rows = append(rows, Row{Section: sec, Name: label + ": largest process's peak RSS over K=1's",
			Value:    fmt.Sprintf("%s MB (process %d)", num(float64(worst)/1024), at),
			Baseline: fmt.Sprintf("%s MB (K=1)", num(float64(one.rss[0])/1024)),
			Ratio:    pct(float64(worst), float64(one.rss[0])),
			Goal:     "≤ 35 % of K=1's, every process (issue 37)",
			Notes: fmt.Sprintf("tracemerge DIR -o OUT --formats json,txt -q%s, mpirun --oversubscribe -np %d, GOMAXPROCS=1, GCLOCK_PAR_PARTITION=1, GCLOCK_PAR_STATS=1; peak RSS of processes 0..%d %s kB, K=1 %d kB (getrusage); one run each (K=8 %s s, K=1 %s s wall); imbalance.json and p2p.json identical to K=1",
				strings.TrimRight(" "+mode.flag, " "), k, k-1, rss, one.rss[0], num(par.wall), num(one.wall))})
		var kinds []string
		for _, kd := range par.recv0Kinds {
			kinds = append(kinds, kd)
		}
		rows = append(rows, Row{Section: sec, Name: label + ": bytes process 0 received over the rank files' size",
			Value:    fmt.Sprintf("%s MB (%s bytes/event)", num(float64(par.recv0)/1e6), num(float64(par.recv0)/float64(n))),
			Baseline: fmt.Sprintf("%s MB of rank files (%s bytes/event)", num(float64(size)/1e6), num(float64(size)/float64(n))),
			Ratio:    pct(float64(par.recv0), float64(size)),
			Goal:     "≤ 2 % (issue 37)",
			Notes:    fmt.Sprintf("the same K=%d run, counted per message (merge/dist_stats.go); process 0 received: %s", k, strings.Join(kinds, ", "))})
	}
	return rows
}

// pct formats a/b as a percentage.
func pct(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return num(100*a/b) + " %"
}

// parStats is what a parallel tracemerge run printed with
// GCLOCK_PAR_STATS=1.
type parStats struct {
	rss        []int64   // peak RSS (kB) by process
	cpu        []float64 // CPU time (user + system, s) by process
	recv0      int64     // bytes process 0 received
	recv0Kinds []string
	wall       float64
}

var parStatsLine = regexp.MustCompile(`tracemerge: process (\d+): received (\d+) bytes, sent \d+ bytes, peak RSS (\d+) kB(?:, CPU ([0-9.]+) s user, ([0-9.]+) s system)?(?: \(received: ([^)]*)\))?`)

func parseParStats(stderr string) parStats {
	var s parStats
	for _, m := range parStatsLine.FindAllStringSubmatch(stderr, -1) {
		p, _ := strconv.Atoi(m[1])
		rss, _ := strconv.ParseInt(m[3], 10, 64)
		if p != len(s.rss) {
			continue
		}
		s.rss = append(s.rss, rss)
		u, _ := strconv.ParseFloat(m[4], 64)
		sy, _ := strconv.ParseFloat(m[5], 64)
		s.cpu = append(s.cpu, u+sy)
		if p == 0 {
			s.recv0, _ = strconv.ParseInt(m[2], 10, 64)
			if m[6] != "" {
				s.recv0Kinds = strings.Split(m[6], ", ")
			}
		}
	}
	return s
}

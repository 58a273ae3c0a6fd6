package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// benchTracemergeHalo measures the point-to-point analysis at scale
// (issue 13): a synthetic run whose every step is a ring halo exchange
// (8 of 9 events point-to-point) analysed by tracemerge bench-synth --halo
// (merge + collective metrics + the streaming point-to-point pass). Peak
// RSS at two run lengths shows whether memory stays flat; the goal is
// ≤ 1 GiB for 10^8 events.
func benchTracemergeHalo(c *Config, rep *Report) []Row {
	const sec = "6"
	if _, err := os.Stat(c.Tracemerge); err != nil {
		return []Row{unavailable(sec, "tracemerge halo run", fmt.Errorf("%s not built (make tracemerge)", rel(c.Root, c.Tracemerge)))}
	}
	big := 100_000_000
	if c.Quick {
		big = 1_000_000
	}
	var rows []Row
	var rss []float64
	for _, n := range []int{big / 10, big} {
		name := fmt.Sprintf("tracemerge, synthetic halo-exchange run of %s events on 64 ranks (89%% point-to-point)", num(float64(n)))
		t0 := time.Now()
		r, how, err := runRSS(15*time.Minute, c.Work, nil, c.Tracemerge, "bench-synth", "--halo", "--ranks=64", "--events="+strconv.Itoa(n))
		if err != nil {
			rows = append(rows, unavailable(sec, name, err))
			continue
		}
		m := analysedRE.FindStringSubmatch(r.Stdout)
		if m == nil {
			rows = append(rows, unavailable(sec, name, fmt.Errorf("bench-synth printed no \"analysed ...\" line: %s", tail(r.Stdout+r.Stderr, 200))))
			continue
		}
		mevs, _ := strconv.ParseFloat(m[3], 64)
		kb := float64(r.MaxRSSKB)
		rss = append(rss, kb)
		rows = append(rows, Row{Section: sec, Name: name,
			Value: fmt.Sprintf("%s M events/s, peak RSS %s MiB", num(mevs), num(kb/1024)),
			Goal:  "peak RSS ≤ 1 GiB at 10^8 events, flat in the run's length",
			Notes: fmt.Sprintf("tracemerge bench-synth --halo (generation in a child process, not counted); %s; %s s wall with generation", how, num(time.Since(t0).Seconds()))})
	}
	if len(rss) == 2 && rss[0] > 0 {
		rows[len(rows)-1].Ratio = ratio(rss[1], rss[0])
		rows[len(rows)-1].Notes += "; ratio = peak RSS at 10× the events over the smaller run"
	}
	return rows
}

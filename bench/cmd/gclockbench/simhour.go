package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gclock/gclock/clocksync/sim/longrun"
)

// Section 5, a simulated hour (issue 38 §5, docs/explanation/clock-accuracy.md
// "A simulated hour at 16,384 ranks"): cmd/clocksim -long runs a full
// sync, resyncs at the recorder's adaptive intervals and a final sync on
// 16,384 simulated ranks whose clocks random-walk (and step), corrects
// every rank's timestamps as tracemerge does and compares them with the
// simulator's exact truth between the knots. The control (no resyncs:
// start and end only) is the baseline. Quick runs: 64 ranks, 60 s.

// simHourGoal is issue 38's bound (s).
const simHourGoal = 2e-6

// simHourTimeout bounds one run: the hour at 16,384 ranks took about
// 5 minutes on a loaded 2-core VM.
const simHourTimeout = 45 * time.Minute

func benchClocksimHour(c *Config, rep *Report) []Row {
	const sec = "5"
	ranks, nodes, seconds := 16384, 1024, 3600.0
	if c.Quick {
		ranks, nodes, seconds = 64, 8, 60
	}
	name := fmt.Sprintf("simulated %.0f s with resyncs, %d ranks on %d nodes", seconds, ranks, nodes)
	if _, err := os.Stat(filepath.Join(c.Root, "cmd", "clocksim")); err != nil {
		return []Row{unavailable(sec, name, errors.New("cmd/clocksim not in the tree"))}
	}
	bin := filepath.Join(c.Work, "bin", "clocksim")
	if _, err := runCmd(3*time.Minute, c.Root, nil, "go", "build", "-o", bin, "./cmd/clocksim"); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	run := func(shape string, noResync bool) (*longrun.Result, result, error) {
		args := []string{bin, "-ranks", strconv.Itoa(ranks), "-nodes", strconv.Itoa(nodes), "-seed", "1",
			"-long", strconv.FormatFloat(seconds, 'f', -1, 64), "-shape", shape, "-json"}
		if noResync {
			args = append(args, "-noresync")
		}
		r, _, err := runRSS(simHourTimeout, c.Work, nil, args...)
		if err != nil {
			return nil, r, err
		}
		var lr longrun.Result
		if err := json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &lr); err != nil {
			return nil, r, fmt.Errorf("clocksim printed %q: %w", r.Stdout, err)
		}
		return &lr, r, nil
	}
	var rows []Row
	for _, shape := range []string{"rw", "step"} {
		lr, r, err := run(shape, false)
		if err != nil {
			rows = append(rows, unavailable(sec, name, err))
			continue
		}
		row := Row{Section: sec, Name: fmt.Sprintf("%s, %s", name, lr.Shape),
			Value: fmt.Sprintf("corrected timestamps off by %s max (p99 %s, median %s)", dur(lr.MaxErr*1e9), dur(lr.P99Err*1e9), dur(lr.MedianErr*1e9)),
			Goal:  fmt.Sprintf("≤ %s — %s", dur(simHourGoal*1e9), metOrMissed(lr.MaxErr <= simHourGoal)),
			Notes: fmt.Sprintf("clocksim -ranks %d -nodes %d -seed 1 -long %.0f -shape %s; %d knots per rank (intervals %.2f-%.2f s, adaptive policy), %.2f ms per resync (%.3f%% of the run); at the knots %s; %d timestamps (every knot and 8 between each two, per rank); wall %s s (simulation %s s, correction %s s), %s MiB peak RSS",
				ranks, nodes, seconds, shape, lr.Knots, lr.MinInterval, lr.MaxInterval, lr.ResyncVirtual*1e3, lr.ResyncShare*100,
				dur(lr.KnotMaxErr*1e9), lr.Samples, num(r.Wall.Seconds()), num(lr.SimWall), num(lr.CorrectWall), num(float64(r.MaxRSSKB)/1024))}
		if ctl, _, err := run(shape, true); err == nil {
			row.Baseline = fmt.Sprintf("start + end syncs only: %s max", dur(ctl.MaxErr*1e9))
			row.Ratio = fmt.Sprintf("%.0f× smaller", ctl.MaxErr/max(lr.MaxErr, 1e-12))
		} else {
			row.Baseline = "control failed: " + oneLine(err.Error())
		}
		rows = append(rows, row)
	}
	return rows
}

#!/usr/bin/env bash
# `make demo`: records the bundled AMG-like MPI program (examples/amglike) on
# 4 ranks emulating 2 cluster nodes whose clocks are off by milliseconds and
# drift by tens of ppm (EMULATED clock error, injected inside gclock's timer),
# merges the trace with tracemerge (corrected and raw clocks) and prints
# where the outputs are and the three most important findings.
#
#   DEMO_OUT=out/demo     where tracemerge writes (the trace goes to $DEMO_OUT-trace)
#   DEMO_NP=4             ranks
#   DEMO_ARGS="..."       amglike arguments (default: --imbalance 0.3)
#
# Works on a fresh Debian machine: installs Open MPI when root (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
t_start=$(date +%s.%N)

OUT="${DEMO_OUT:-out/demo}"
TRACE="${OUT}-trace"
case "$TRACE" in /*) TRACE_ABS=$TRACE ;; *) TRACE_ABS=$root/$TRACE ;; esac
NP="${DEMO_NP:-4}"
ARGS="${DEMO_ARGS:---imbalance 0.3}"
export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}"
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"
# Emulated cluster: 2 ranks per node; node 0 +3 ms / +25 ppm, node 1 -1.5 ms / -40 ppm.
export GCLOCK_NODE_SIZE="${GCLOCK_NODE_SIZE:-2}"
export GCLOCK_FAKE_CLOCK="${GCLOCK_FAKE_CLOCK:-3000000:25,-1500000:-40}"

# findings OUT: prints the three most important findings from
# OUT/imbalance.json (and OUT/raw/imbalance.json) with a small stdlib-only Go
# program, so neither jq nor python is needed.
findings() {
  local out_abs tmp
  out_abs=$(cd "$1" && pwd)
  tmp=$(mktemp -d)
  cat >"$tmp/findings.go" <<'EOF'
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type stats struct {
	Count int     `json:"count"`
	Total float64 `json:"total_ns"`
	Mean  float64 `json:"mean_ns"`
	Max   float64 `json:"max_ns"`
}

type analysis struct {
	WorldSize int `json:"world_size"`
	Events    int `json:"events"`
	Instances int `json:"instances"`
	Clock     struct {
		Mode       string    `json:"mode"`
		Injected   bool      `json:"injected"`
		InjectSpec string    `json:"inject_spec"`
		CheckMaxNS []float64 `json:"check_max_ns"`
		Algorithms []string  `json:"algorithms"`
		Violations int       `json:"violations"`
		MaxViolNS  float64   `json:"max_violation_ns"`
		Warnings   []string  `json:"warnings"`
	} `json:"clock"`
	Ops []struct {
		Op        string  `json:"op"`
		Count     int     `json:"count"`
		Calls     int     `json:"calls"`
		TotalTime float64 `json:"total_time_ns"`
		Wait      stats   `json:"wait"`
	} `json:"ops"`
	Callsites []struct {
		Function string `json:"function"`
		File     string `json:"file"`
		Line     int    `json:"line"`
		Op       string `json:"op"`
		Calls    int    `json:"calls"`
		Wait     stats  `json:"wait"`
		PC       uint64 `json:"pc"`
	} `json:"callsites"`
	Ranks []struct {
		Rank          int     `json:"rank"`
		Host          string  `json:"host"`
		TimeInMPI     float64 `json:"time_in_mpi_ns"`
		TotalWait     float64 `json:"total_wait_ns"`
		TotalLateness float64 `json:"total_lateness_ns"`
		LastCount     int     `json:"last_count"`
		CausedCount   int     `json:"caused_count"`
	} `json:"ranks"`
	RootCauses *struct {
		Total  float64 `json:"total_wait_ns"`
		Causes []struct {
			Ranks      string  `json:"ranks"`
			Region     string  `json:"region"`
			Cost       float64 `json:"cost_ns"`
			Share      float64 `json:"share"`
			Direct     float64 `json:"direct_ns"`
			Propagated float64 `json:"propagated_ns"`
			Via        []struct {
				Rank int `json:"rank"`
			} `json:"via"`
		} `json:"causes"`
	} `json:"root_causes"`
	Worst []struct {
		Comm      uint64  `json:"comm"`
		Seq       uint32  `json:"seq"`
		Op        string  `json:"op"`
		EntrySkew float64 `json:"entry_skew_ns"`
	} `json:"worst"`
	Problems []string `json:"problems"`
}

type p2p struct {
	Messages   int `json:"messages"`
	LateSender struct {
		Count int     `json:"count"`
		Total float64 `json:"total_ns"`
		Pairs []struct {
			Culprit int     `json:"culprit"`
			Victim  int     `json:"victim"`
			Count   int     `json:"count"`
			NS      float64 `json:"ns"`
		} `json:"pairs"`
	} `json:"late_sender"`
	Sites []struct {
		Site   string  `json:"site"`
		Op     string  `json:"op"`
		Calls  int     `json:"calls"`
		TimeNS float64 `json:"time_ns"`
	} `json:"sites"`
	Violations int `json:"clock_violations"`
}

func load(path string) (*analysis, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var a analysis
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &a, nil
}

func us(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func main() {
	a, err := load(filepath.Join(os.Args[1], "imbalance.json"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
	raw, rawErr := load(filepath.Join(os.Args[1], "raw", "imbalance.json"))

	var mpi float64
	for _, o := range a.Ops {
		mpi += o.TotalTime
	}
	sort.Slice(a.Ops, func(i, j int) bool { return a.Ops[i].TotalTime > a.Ops[j].TotalTime })
	if len(a.Ops) > 0 && mpi > 0 {
		o := a.Ops[0]
		fmt.Printf("   %s takes %.0f%% of the time spent in collectives (%d instances, %d calls; total %s)\n",
			o.Op, 100*o.TotalTime/mpi, o.Count, o.Calls, us(o.TotalTime))
	}

	// 1. The call site whose callers wait most.
	sort.Slice(a.Callsites, func(i, j int) bool { return a.Callsites[i].Wait.Total > a.Callsites[j].Wait.Total })
	if len(a.Callsites) > 0 {
		c := a.Callsites[0]
		where := fmt.Sprintf("%s (%s:%d)", c.Function, filepath.Base(c.File), c.Line)
		if c.File == "" {
			where = fmt.Sprintf("%s (pc %#x, no line info)", c.Function, c.PC)
		}
		fmt.Printf("1. most waiting: %s at %s: %s waited in total over %d calls (mean %s, max %s)\n",
			c.Op, where, us(c.Wait.Total), c.Calls, us(c.Wait.Mean), us(c.Wait.Max))
	} else {
		fmt.Println("1. most waiting: no call sites in the analysis")
	}

	// 2. The rank that makes the others wait.
	sort.Slice(a.Ranks, func(i, j int) bool { return a.Ranks[i].TotalLateness > a.Ranks[j].TotalLateness })
	if len(a.Ranks) > 0 {
		r := a.Ranks[0]
		fmt.Printf("2. late rank: rank %d made the others wait %s in total, in %d collective instances (it entered last at %d)",
			r.Rank, us(r.TotalLateness), r.CausedCount, r.LastCount)
		if len(a.Ranks) > 1 {
			fmt.Printf(" (next: rank %d, %s)", a.Ranks[1].Rank, us(a.Ranks[1].TotalLateness))
		}
		fmt.Println()
	}

	// The root cause of the waiting (delay analysis).
	if rc := a.RootCauses; rc != nil && len(rc.Causes) > 0 {
		c := rc.Causes[0]
		who := "ranks " + c.Ranks
		if !strings.ContainsAny(c.Ranks, ",-") {
			who = "rank " + c.Ranks
		}
		fmt.Printf("   root cause: %s, in %s: %s of the %s of waiting (%.0f%%; direct %s, propagated %s",
			who, c.Region, us(c.Cost), us(rc.Total), 100*c.Share, us(c.Direct), us(c.Propagated))
		if len(c.Via) > 0 {
			var v []string
			for _, x := range c.Via {
				v = append(v, fmt.Sprint(x.Rank))
			}
			fmt.Printf(" via ranks %s", strings.Join(v, ","))
		}
		fmt.Println(")")
	}

	// Point-to-point (p2p.json, when tracemerge wrote one).
	if b, err := os.ReadFile(filepath.Join(os.Args[1], "p2p.json")); err == nil {
		var p p2p
		if json.Unmarshal(b, &p) == nil && p.Messages > 0 {
			fmt.Printf("   point-to-point: %d messages; Late Sender %s in %d receives",
				p.Messages, us(p.LateSender.Total), p.LateSender.Count)
			ps := p.LateSender.Pairs
			sort.Slice(ps, func(i, j int) bool { return ps[i].NS > ps[j].NS })
			for i := 0; i < len(ps) && i < 2; i++ {
				fmt.Printf("; rank %d made rank %d wait %s", ps[i].Culprit, ps[i].Victim, us(ps[i].NS))
			}
			if len(p.Sites) > 0 {
				fmt.Printf("; most time at %s in %s (%s)", p.Sites[0].Op, p.Sites[0].Site, us(p.Sites[0].TimeNS))
			}
			fmt.Println()
		}
	}

	// 3. Clock quality.
	c := a.Clock
	if c.Injected {
		fmt.Printf("3. clock: EMULATED clock error (GCLOCK_FAKE_CLOCK=%s) was injected; ", c.InjectSpec)
	} else {
		fmt.Printf("3. clock: real clocks (no injected error); ")
	}
	maxCheck := 0.0
	for _, v := range c.CheckMaxNS {
		if v > maxCheck {
			maxCheck = v
		}
	}
	fmt.Printf("corrected (%s) timeline: %d clock-condition violations (max %s), sync self-check residual <= %s",
		c.Mode, c.Violations, us(c.MaxViolNS), us(maxCheck))
	if rawErr == nil {
		fmt.Printf("; raw clocks: %d violations (max %s)", raw.Clock.Violations, us(raw.Clock.MaxViolNS))
	}
	fmt.Println()
	for _, w := range c.Warnings {
		fmt.Println("   warning:", w)
	}
	for _, p := range a.Problems {
		fmt.Println("   problem:", p)
	}
	// Last line, read by demo.sh: the worst MPI_Allreduce instance to zoom into.
	for _, w := range a.Worst {
		if w.Op == "MPI_Allreduce" {
			fmt.Printf("INSTANCE %d:%d %s\n", w.Comm, w.Seq, us(w.EntrySkew))
			break
		}
	}
}
EOF
  (cd "$tmp" && GOFLAGS='' GO111MODULE=off go run findings.go "$out_abs") || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
}

step() { printf '\n== demo: %s\n' "$*"; }
die() { printf 'demo: FAILED at step "%s": %s\n' "$current" "$*" >&2; exit 1; }
current=setup

step "1/6 prerequisites (scripts/setup.sh: Open MPI, Go, a C compiler)"
bash scripts/setup.sh || die "scripts/setup.sh could not provide Open MPI (see its message above)"

current="build gclock"
step "2/6 build libgclock.so and tracemerge (make all)"
make --no-print-directory lib tracemerge || die "\`make lib tracemerge\` failed; the recorder (pmpi/, cshim/) or tracemerge (cmd/tracemerge) does not build yet"
[ -f build/libgclock.so ] || die "build/libgclock.so is missing after make"
[ -x build/tracemerge ] || die "build/tracemerge is missing after make"

current="build amglike"
step "3/6 build the AMG-like example (make -C examples)"
make --no-print-directory -C examples || die "examples/amglike does not compile with mpicc"

current="run without recorder"
step "4/6 run amglike on $NP ranks without and with the recorder"
rm -rf "$TRACE" "$OUT"
mkdir -p "$TRACE" "$OUT"
# shellcheck disable=SC2086
mpirun --oversubscribe -np "$NP" examples/amglike/amglike $ARGS >"$OUT/amglike.plain.stdout" 2>"$OUT/amglike.plain.stderr" ||
  die "amglike failed without the recorder: $(tail -5 "$OUT/amglike.plain.stderr")"
current="run with recorder"
cmd=(mpirun --oversubscribe -np "$NP"
  -x "LD_PRELOAD=$root/build/libgclock.so" -x "GCLOCK_DIR=$TRACE_ABS"
  -x GCLOCK_NODE_SIZE -x GCLOCK_FAKE_CLOCK
  examples/amglike/amglike)
echo "   ${cmd[*]} $ARGS"
echo "   EMULATED clock error: GCLOCK_NODE_SIZE=$GCLOCK_NODE_SIZE GCLOCK_FAKE_CLOCK=$GCLOCK_FAKE_CLOCK"
echo "   (offset_ns:drift_ppm per emulated node; the drift applies to the timer since boot, so raw clocks end up ms to s apart)"
t_run=$(date +%s.%N)
# shellcheck disable=SC2086
"${cmd[@]}" $ARGS >"$OUT/amglike.stdout" 2>"$OUT/amglike.stderr" ||
  die "amglike failed under the recorder: $(tail -5 "$OUT/amglike.stderr")"
t_run_end=$(date +%s.%N)
sed 's/^/   | /' "$OUT/amglike.stdout"
if cmp -s "$OUT/amglike.plain.stdout" "$OUT/amglike.stdout"; then
  same="identical"
else
  same="DIFFERENT (see diff $OUT/amglike.plain.stdout $OUT/amglike.stdout)"
fi
echo "   program output with and without the recorder: $same"
run_dir=$(find "$TRACE" -name 'rank-*.gct' -printf '%h\n' | sort -u | head -1)
[ -n "$run_dir" ] || die "no rank-*.gct file under $TRACE: the recorder wrote nothing (stderr: $(tail -3 "$OUT/amglike.stderr"))"
nfiles=$(find "$run_dir" -maxdepth 1 -name 'rank-*.gct' | wc -l)
echo "   trace: $run_dir ($nfiles rank files, $(du -sh "$run_dir" | cut -f1))"

current="tracemerge"
step "5/6 merge: corrected clocks (tracemerge $run_dir -o $OUT) and raw clocks (--clock raw -o $OUT/raw)"
rc=0
build/tracemerge "$run_dir" -o "$OUT" -q || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || die "tracemerge exited $rc"
[ "$rc" -eq 0 ] || echo "   tracemerge: partial data (exit 3), see the problems listed above"
rc=0
build/tracemerge "$run_dir" -o "$OUT/raw" --clock raw -q || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || die "tracemerge --clock raw exited $rc"

current="findings"
found=$(findings "$OUT") || die "could not read $OUT/imbalance.json"
inst=$(printf '%s\n' "$found" | awk '$1 == "INSTANCE" { print $2; exit }')
if [ -n "$inst" ]; then
  current="instance view"
  skew=$(printf '%s\n' "$found" | awk '$1 == "INSTANCE" { print $3, $4; exit }')
  echo "   zoom into the MPI_Allreduce instance with the largest entry skew ($skew): --instance $inst"
  rc=0
  build/tracemerge "$run_dir" -o "$OUT/instance" --instance "$inst" --formats svg -q || rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || die "tracemerge --instance $inst exited $rc"
fi
step "6/6 findings (from $OUT/imbalance.json; clock error EMULATED)"
printf '%s\n' "$found" | grep -v '^INSTANCE '
echo
echo "Outputs (clock error above was EMULATED on one machine, see GCLOCK_FAKE_CLOCK):"
for f in index.html gantt.svg imbalance.txt imbalance.json p2p.json events.csv trace.pftrace raw/gantt.svg raw/imbalance.txt; do
  [ -e "$OUT/$f" ] && printf '   %-28s %s\n' "$OUT/$f" "$(du -h "$OUT/$f" | cut -f1)"
done
for f in "$OUT"/instance/instance-*.svg; do
  [ -e "$f" ] && printf '   %-28s raw vs corrected clocks, one MPI_Allreduce instance\n' "$f"
done
echo "   open $OUT/index.html in a browser; trace.pftrace (Perfetto native protobuf) loads in ui.perfetto.dev"

t_end=$(date +%s.%N)
awk -v a="$t_start" -v b="$t_end" -v c="$t_run" -v d="$t_run_end" 'BEGIN { printf "\ndemo: wall time %.1f s (traced amglike run %.1f s)\n", b - a, d - c }'

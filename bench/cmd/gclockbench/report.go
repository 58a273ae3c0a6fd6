package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Row is one line of the benchmark table. Value is the absolute figure (or
// "not available yet: <why>"); Baseline is what it is compared with, measured
// in the same run; Ratio is Value/Baseline where that means something.
type Row struct {
	Section  string
	Name     string
	Value    string
	Baseline string
	Ratio    string
	Goal     string
	Notes    string
}

// notAvailablePrefix opens the Value of every row that could not be
// measured; the harness's test accepts such rows but no empty ones.
const notAvailablePrefix = "not available yet: "

func unavailable(section, name string, why error) Row {
	return Row{Section: section, Name: name, Value: notAvailablePrefix + strings.Join(strings.Fields(why.Error()), " ")}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

var tableHeader = []string{"#", "benchmark", "value", "baseline (same run)", "ratio", "goal", "notes"}

// renderTable formats rows as a GitHub markdown table.
func renderTable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(tableHeader, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat(" --- |", len(tableHeader)) + "\n")
	for _, r := range rows {
		cells := []string{r.Section, r.Name, r.Value, r.Baseline, r.Ratio, r.Goal, r.Notes}
		for i, c := range cells {
			c = oneLine(c)
			if c == "" {
				c = "—"
			}
			cells[i] = c
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// Machine describes where the figures were taken.
type Machine struct {
	CPU, Kernel, MPI, Clocksource, Host, Go string
	Cores                                   int
}

// Key names the machine's section in docs/benchmarks.md: CPU model and core
// count (host names of these VMs change, the hardware class does not).
func (m Machine) Key() string { return fmt.Sprintf("%s, %d cores", m.CPU, m.Cores) }

func probeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), CPU: "unknown CPU"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil {
		m.Clocksource = strings.TrimSpace(string(b))
	}
	m.Host, _ = os.Hostname()
	if out, err := exec.Command("mpirun", "--version").Output(); err == nil {
		m.MPI = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	} else {
		m.MPI = "mpirun not found"
	}
	return m
}

// gitRevision returns the short HEAD hash, "+dirty" when the tree has
// uncommitted changes (others work in this tree at the same time).
func gitRevision(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		rev += "+dirty"
	}
	return rev
}

// loadAvg returns the 1-minute load average, or "?".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// section renders this run's section of docs/benchmarks.md.
func section(m Machine, rev string, cfg *Config, took time.Duration, rows []Row, gobench string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", m.Key())
	mode := "full"
	if cfg.Quick {
		mode = "quick (BENCH_QUICK=1: fewer calls and repetitions; figures are a smoke test, not results)"
	}
	fmt.Fprintf(&b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- machine: %s, %d cores, kernel %s, host %s\n", m.CPU, m.Cores, m.Kernel, m.Host)
	fmt.Fprintf(&b, "- MPI: %s; timer: clocksource %s; %s\n", m.MPI, m.Clocksource, m.Go)
	fmt.Fprintf(&b, "- git revision: %s\n", rev)
	fmt.Fprintf(&b, "- mode: %s; %d interleaved repetitions per noisy figure (medians); run took %s\n",
		mode, cfg.Reps, took.Round(time.Second))
	fmt.Fprintf(&b, "- 1-minute load average at start / end: %s / %s on %d cores (other jobs on the machine widen the ranges in the notes)\n\n",
		cfg.loadStart, loadAvg(), m.Cores)
	b.WriteString(renderTable(rows))
	if gobench != "" {
		b.WriteString("\n<details><summary>go test -bench (trace, merge, clocksync)</summary>\n\n```\n")
		b.WriteString(strings.TrimSpace(gobench))
		b.WriteString("\n```\n</details>\n")
	}
	return b.String()
}

const docIntro = `# Benchmarks

Written by ` + "`make bench`" + ` (scripts/bench.sh → bench/cmd/gclockbench); one section per
machine class, replaced on each run. Every noisy figure is the median of several
interleaved runs (A B A B …) and is shown next to a baseline measured in the same run,
so the ratios compare like with like on a shared, noisy machine. Rows that could not be
measured say why ("not available yet: …"); no figure here is estimated or copied.

What the rows mean:

1. Per-event overhead: MPI_Barrier(MPI_COMM_SELF) (≈ 4 ns in Open MPI) 10^6 times on one
   rank, without and with the preload, per GCLOCK_TIMER; the added ns per call against the
   cost of the two timer reads every wrapper must make (goal ≤ 1.1×). Two views: the hot
   path (median of 1000-call batches, with GCLOCK_FLUSH_SYNC=1 so a buffer flush falls
   into one batch in 8 and no background encoder shares the core), and the amortised
   cost with default settings (loop + MPI_Finalize per call: everything the library
   spends encoding, compressing and writing the trace, wherever it does it; goal ≤ 1.5×).
   The same for the point-to-point path (bench/c/p2p_self.c: Irecv, Isend, Waitall):
   per call kind, and amortised per event with the monotonic clock and with the TSC.
   Timer read costs are measured by bench/c/timercost.c in the same run.
2. Application view: 8-byte MPI_Allreduce on 2 ranks, median per-call latency and the
   mean (loop time / calls, which also counts the rare slow calls).
3. Trace size on disk per event (whole files, and event chunks alone), and buffer memory
   per rank.
4. Clock sync over real MPI (GCLOCK_FAKE_CLOCK=5000000:100,-5000000:-100 on 2 emulated
   nodes, ranks oversubscribed on the cores): sync duration, the reference rank's
   self-check residual (Algorithm 6), the true error of the epoch models against the
   injected truth (trace.Injection.TrueTime), and how far the MPI_Init model alone has
   drifted by MPI_Finalize; the time the library adds to MPI_Init and MPI_Finalize.
5. Clock sync on the simulated network (cmd/clocksim), and a simulated hour at 16,384 ranks with resyncs on random-walk clocks (clocksim -long).
6. tracemerge throughput and peak memory (also one process on 16,384 ranks against 8 ranks, the same events, default outputs); parallel tracemerge (K=2 under mpirun and mpiexec.mpich over K=1, and with one core per process under mpirun, 1024 ranks; a halo run with the point-to-point analysis partitioned by receiving rank; K=8 oversubscribed on a 1024-rank halo run: every process's peak RSS over K=1's and the bytes process 0 receives over the rank files' size, issue 37).
7. Preload cost in a process that never calls MPI_Init.
8. Key ` + "`go test -bench`" + ` lines of trace, merge and clocksync.
9. Application wall time with and without the preload (the programs' own loop times): a
   halo exchange at about 10^6 events per second per rank and the AMG-like example (issue
   40's goal ≤ 1.05×), each under Open MPI's mpirun and under MPICH's mpiexec with hydra's
   default binding (ranks not bound) and with -bind-to core (the library built with make
   MPI=mpich lib, the programs with mpicc.mpich), and the halo loop at about 3× that rate
   (Open MPI, no goal); with the events per rank and the ns added per event. The verdict is on the ratio of
   the medians; the notes also give the ratios per round (each traced run over the
   untraced run just before it: their median, range and how many rounds were within the
   goal), which shows how far a verdict can be trusted on the machine of the run. The
   halo rows' notes add a typical step's cost (rank 0's 25th percentile, traced minus
   untraced per round), which load does not spoil, and the steps 20-99 after a step over
   20× the median (on a quiet machine, traced: the flushes) against the same untraced.
10. Instructions libgclock.so executes (valgrind's callgrind, load-independent): per event on
   one rank (bench/c/p2p_self.c and barrier_self.c), built for Open MPI and for MPICH, with
   the largest functions; per step of section 9's halo program on 2 ranks under both MPIs
   (the goal's workload; its column split moves with the machine's load by up to ±10 %);
   and what the call-in-flight marker adds per call.
`

// writeDoc replaces (or appends) this machine's section in path and
// refreshes the intro above the sections.
func writeDoc(path, key, sec string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	// The intro is always the current one; machine sections are kept.
	doc := docIntro
	if i := strings.Index(string(old), "\n## "); i >= 0 {
		doc = strings.TrimRight(docIntro, "\n") + "\n" + string(old)[i:]
	}
	head := "## " + key + "\n"
	if i := strings.Index(doc, head); i >= 0 {
		end := len(doc)
		if j := strings.Index(doc[i+len(head):], "\n## "); j >= 0 {
			end = i + len(head) + j + 1
		}
		doc = doc[:i] + sec + "\n" + doc[end:]
	} else {
		doc = strings.TrimRight(doc, "\n") + "\n\n" + sec
	}
	doc = strings.TrimRight(doc, "\n") + "\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

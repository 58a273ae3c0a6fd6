// Package settings is the one list of gclock's environment settings: the
// recorder's GCLOCK_* variables and the few parallel tracemerge reads.
// docs/reference/settings.md is generated from it (Markdown), and the
// package's test fails when a GCLOCK_* name used in the code is missing
// here, or when the page differs from what the list generates.
package settings

import (
	"fmt"
	"strings"
)

// Kind says who sets a setting.
type Kind uint8

// The kinds of settings.
const (
	// User: a setting a user of gclock sets.
	User Kind = iota
	// Study: a knob of the clock-sync studies (docs/explanation/clocksync.md).
	Study
	// Test: for tests and demos only (emulated nodes, injected clock
	// error, fault injection).
	Test
)

// Setting is one environment variable.
type Setting struct {
	Name    string
	Default string // as the reader sees it unset
	// Reader is "recorder" (libgclock.so, read in MPI_Init on every rank)
	// or "tracemerge" (read by tracemerge: its profiles, and parallel
	// tracemerge under a launcher).
	Reader string
	Kind   Kind
	Doc    string // one paragraph, Markdown
}

// All lists every setting, users' first, in the order the page shows them.
var All = []Setting{
	{"GCLOCK_DIR", "`./gclock-trace/<job>/`", "recorder", User, "Run directory: every rank writes `rank-NNNNN.gct` into it (created if missing). `<job>` is the launcher's job id; under Slurm `slurm-<job>[.<step>][-<mpirun's id>]` (guide/slurm.md). Point it at a shared file system; one directory per run."},
	{"GCLOCK_TIMER", "`auto`", "recorder", User, "Local timer: `auto` (`tsc` where the TSC is invariant and the kernel's clocksource is the TSC, else `monotonic`), `monotonic`, `monotonic_raw`, `realtime`, `tsc`, `mpi_wtime`. Recorded in the header."},
	{"GCLOCK_OPS", "all", "recorder", User, "Selective tracing: `-p2p,-MPI_Barrier` (all but these) or `coll,MPI_Send` (only these); classes `all`, `coll`, `nbc`, `p2p`, `wait`, `rma`. `MPI_Pcontrol(0)`/`(1)` pauses/resumes recording; both are shown in the report."},
	{"GCLOCK_RESYNC", "`2`", "recorder", User, "Seconds between resync epochs during the run (at agreed collectives; offset-only, O(log p)); `0`: only at `MPI_Init` and `MPI_Finalize`."},
	{"GCLOCK_RESYNC_ADAPT", "`1`", "recorder", User, "Adapt the resync interval: halve it (down to `GCLOCK_RESYNC`/8) while a new knot's miss against the polynomial through the knots before it, scaled to the smooth model's miss between knots, is over 80 ns, lengthen it by half (up to 2×) while under 20 ns, and keep the resyncs within `GCLOCK_RESYNC_BUDGET`; `0`: fixed `GCLOCK_RESYNC`, no budget."},
	{"GCLOCK_RESYNC_BUDGET", "`0.001`", "recorder", User, "With `GCLOCK_RESYNC_ADAPT`: the largest share of the run the resync epochs may take (their measured time so far plus two more epochs, against the time since `MPI_Init`; no resync starts earlier); `0`: no budget."},
	{"GCLOCK_SYNC", "`h2hca`", "recorder", User, "Sync algorithm: `h2hca`, `h3hca`, `hca3`, `hca2`, `hca`, `jk`, `skampi`, `clockprop`, `none`, `pmpi-skampi-offset` (explanation/clocksync.md)."},
	{"GCLOCK_BUFFER", "`8192`", "recorder", User, "Events per thread-local buffer before it is written to the file (16 … 2^26)."},
	{"GCLOCK_CODEC", "unset", "recorder", User, "Compression of event chunks. Unset: zstd's fastest level with the timing columns stored raw, written in C by the thread that filled the buffer (S2 from the Go half where `libzstd.so.1` cannot be loaded); `s2`: S2, written by the Go half; `zstd`: every column compressed (smaller files, longer flushes). tracemerge reads them all."},
	{"GCLOCK_CWRITE", "`1`", "recorder", User, "`1`: full buffers are encoded, compressed and written in C on the thread that filled them, with no call into the Go half; `0`: through the Go half (comparisons)."},
	{"GCLOCK_FSYNC", "`0`", "recorder", User, "`1`: fsync each rank file when it is closed, so a finished trace survives a machine crash right after the run (one fsync per rank in `MPI_Finalize`)."},
	{"GCLOCK_FLUSH_SYNC", "`1`", "recorder", User, "`0`: write full buffers on a background goroutine instead of the application thread (only where ranks leave cores free)."},
	{"GCLOCK_GO_NICE", "`19`", "recorder", User, "Nice value of the recorder's Go runtime threads, so that their wake-ups do not preempt the rank on its core; `0`: the application's priority. The application's and MPI's threads are never changed."},
	{"GCLOCK_QUIET", "unset", "recorder", User, "Set (not `0`): no sync summary lines from rank 0 on stderr."},
	{"GCLOCK_DISABLE", "unset", "recorder", User, "Set (not `0`/`false`): the library is inert, calls pass straight through, no Go runtime starts."},
	{"GCLOCK_LIBMPI", "unset", "tracemerge", User, "The MPI library parallel tracemerge loads with `dlopen`; unset: `libmpi.so.40` under Open MPI's mpirun and `srun --mpi=pmix`, else `libmpich.so.12`, `libmpi.so.12`, `libmpi.so.40`."},
	{"GCLOCK_PAR_SHARE0", "`0.3` with 2 processes (`0.5` partitioned), else `0`", "tracemerge", User, "Process 0's share of the rank files relative to a worker's, 0–1."},
	{"GCLOCK_CPUPROFILE", "unset", "tracemerge", User, "A file path: tracemerge writes a CPU profile of its run into it (`go tool pprof tracemerge FILE`; explanation/tracemerge.md, \"Performance\"). Under a launcher each process writes `FILE.<rank>`."},
	{"GCLOCK_MEMPROFILE", "unset", "tracemerge", User, "A file path: tracemerge writes an allocation profile of its run into it at the end (`go tool pprof -sample_index=alloc_space tracemerge FILE`: every allocation; `inuse_space`: what was live at the end), and into `FILE.peak` the live heap when it was largest (polled every 10 ms; `inuse_space`: what a process held at its peak, e.g. per-rank tables and message buffers). Under a launcher each process writes `FILE.<rank>` (and `FILE.<rank>.peak`)."},
	{"GCLOCK_HUGEPAGES", "on above 4096 ranks", "tracemerge", User, "Transparent huge pages for the heap of a one-process tracemerge (asked for with `madvise`, where the system's THP setting is `madvise` or `always`; the processes of a parallel analysis never ask): unset, above 4096 ranks; `0`: never; `1`: at any number of ranks. At thousands of ranks each merged event touches another rank's state, and with 4 KiB pages most such touches missed the TLB too (explanation/tracemerge.md, \"Many ranks in one process\")."},
	{"GCLOCK_PAR_PARTITION", "on from 3 processes", "tracemerge", User, "Partition the analysis among the processes (no per-event output): `1` also with 2 processes, `0` never (every event goes to process 0)."},
	{"GCLOCK_PAR_STATS", "unset", "tracemerge", User, "`1`: at the end of a parallel analysis process 0 prints one line per process to stderr: bytes received and sent (received by message kind), peak RSS and CPU time (user, system) (explanation/tracemerge.md, \"Speed and scaling model\")."},

	{"GCLOCK_SYNC_INTER", "`hca3`", "recorder", Study, "H2HCA: algorithm between nodes."},
	{"GCLOCK_SYNC_MID", "`hca3`", "recorder", Study, "H3HCA: algorithm between the sockets of a node."},
	{"GCLOCK_SYNC_INTRA", "`clockprop`", "recorder", Study, "H2HCA: algorithm within a node."},
	{"GCLOCK_FITPOINTS", "`100`", "recorder", Study, "Fit points per learned clock model."},
	{"GCLOCK_PINGPONGS", "`50`", "recorder", Study, "Ping-pongs per fit point / offset measurement."},
	{"GCLOCK_RESYNC_DEADLINE", "`0`", "recorder", Study, "A resync epoch's time per client pair for its offsets, in ms per 16 ping-pongs an offset: past it the pair's ping-pong loop stops at its next prompt ping-pong and the pair measures no more offsets (the epoch's params say `pingpongs_cut`); `0`: no deadline. 5 bounds a descheduled rank's epoch on shared memory; over TCP it cuts most pairs to one loose offset."},
	{"GCLOCK_RESYNC_PINGPONGS", "`16`", "recorder", Study, "Ping-pongs per offset measurement of a resync epoch (the full syncs keep `GCLOCK_PINGPONGS`)."},
	{"GCLOCK_FIT_SPAN", "`0`", "recorder", Study, "Seconds to spread the fit points over (a longer slope baseline)."},
	{"GCLOCK_CHECK_AFTER", "`0`", "recorder", Study, "Seconds: repeat the accuracy self-check that long after the init sync (delays `MPI_Init`)."},
	{"GCLOCK_SYNC_RETRY_US", "`5`", "recorder", Study, "Redo the sync (up to 2 more times) when the self-check residual exceeds this many µs; `0`: never."},
	{"GCLOCK_PINGPONG_TOKEN", "auto", "recorder", Study, "`1`/`0`: force the one-ping-pong-at-a-time token (auto: on when the ranks on one machine outnumber its CPUs)."},
	{"GCLOCK_PINGPONG", "unset", "recorder", Study, "`go`: the ping-pong loop in Go instead of C (comparisons only)."},
	{"GCLOCK_OFFSET_ALG", "`skampi`", "recorder", Study, "Offset measurement: `skampi` (SKaMPI-Offset) or `meanrtt` (Mean-RTT-Offset)."},
	{"GCLOCK_SYNC_ANCHOR", "on", "recorder", Study, "`0`: keep the fitted models; on: each full sync ends by re-measuring the offsets at its end, where the epoch's knot is."},
	{"GCLOCK_RECOMPUTE_INTERCEPT", "off", "recorder", Study, "`1`: re-measure each model's intercept after fitting its slope."},

	{"GCLOCK_NODE_SIZE", "unset", "recorder", Test, "Emulate nodes of k consecutive ranks (tests, `make demo`)."},
	{"GCLOCK_FAKE_CLOCK", "unset", "recorder", Test, "Inject clock error per emulated node: `offset_ns:drift_ppm[+step(AT,PPM)][+sin(AMP,PERIOD[,PHASE])][+rw(STEP,SIGMA[,SEED[,SPAN]])][,...]`; recorded, and every report warns."},
	{"GCLOCK_TEST_FAULT", "unset", "recorder", Test, "Fault injection for the recorder's tests."},
	{"GCLOCK_PAR_TEST_FAIL", "unset", "tracemerge", Test, "Fault injection for parallel tracemerge's tests."},
	{"GCLOCK_NETNS_ID", "unset", "recorder", Test, "Set by the namespace-host test bed (docs/explanation/testbed.md)."},
	{"GCLOCK_TEST_KEEP", "unset", "tests", Test, "A directory: the namespace-host tests (`tests/netns_test.go`) keep their traces in it, for a study of the knots' and the model's share of the clock error (docs/explanation/clock-accuracy.md)."},
}

// Markdown returns docs/reference/settings.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from internal/settings/settings.go by `go test ./internal/settings -update`; edit the list there. -->\n")
	b.WriteString("# Settings\n\n")
	b.WriteString("gclock is configured only through environment variables. The recorder's are read once in `MPI_Init` on every rank: give every rank the same values (Open MPI `mpirun -x NAME`, MPICH `mpiexec -genv NAME value`, Slurm `srun --export=ALL,NAME=value`). Every `GCLOCK_*` variable in effect is copied into each rank file's header, so a run can be reproduced from its trace. A malformed value is printed once by every rank, which then records nothing; the application always runs on. `tracemerge`'s own options are on its command line ([tracemerge-cli.md](tracemerge-cli.md)). Each setting in more detail, with examples: [settings-details.md](settings-details.md).\n\n")
	section := func(title, intro string, k Kind) {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n| variable | default | read by | meaning |\n| --- | --- | --- | --- |\n", title, intro)
		for _, s := range All {
			if s.Kind == k {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Name, s.Default, s.Reader, s.Doc)
			}
		}
		b.WriteString("\n")
	}
	section("What users set", "", User)
	section("Clock-sync study knobs", "For comparing the sync algorithms and their parameters (explanation/clocksync.md); the defaults are what the accuracy figures were measured with.", Study)
	section("Test and demo knobs", "Emulated nodes and injected clock error make `make demo` and the accuracy tests possible on one machine; every report warns loudly when they were on.", Test)
	return b.String()
}

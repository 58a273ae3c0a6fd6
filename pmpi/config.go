package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gclock/gclock/trace"
)

// config is the recorder's configuration, read from GCLOCK_* variables
// (documented in docs/explanation/recorder.md).
type config struct {
	Dir    string // GCLOCK_DIR; empty = ./gclock-trace/<job id>
	Timer  string // GCLOCK_TIMER
	Buffer int    // GCLOCK_BUFFER, events per thread buffer
	// Codec (GCLOCK_CODEC) is the compression of the chunks the Go half
	// writes; CodecGiven says it was named. Unnamed, the C writer
	// (cshim/cwrite.c) writes zstd chunks with the timing columns raw, as
	// S2's; "zstd": everything compressed, in C too; "s2": every chunk
	// written by Go with S2 (the C writer has no S2).
	Codec      trace.Codec
	CodecGiven bool
	NodeSize   int               // GCLOCK_NODE_SIZE, 0 = real nodes
	Fake       string            // GCLOCK_FAKE_CLOCK as given
	Pairs      []trace.Injection // per emulated node (trace.ParseFakeClock)
	Quiet      bool              // GCLOCK_QUIET: no rank-0 summary line
	// Fsync (GCLOCK_FSYNC=1) fsyncs the rank file when it is closed (at
	// MPI_Finalize, exit or abort). Off by default: docs/explanation/recorder.md,
	// "Durability".
	Fsync bool
	// CWrite (GCLOCK_CWRITE, default 1) writes full buffer halves in C on
	// the thread that filled them, without a call into Go (cshim/cwrite.c;
	// 0: every chunk goes through Go, as before 2026-11-28).
	CWrite bool
	// CheckAfter (GCLOCK_CHECK_AFTER, seconds; 0 = off) repeats the
	// self-check that long after sync epoch 0, inside MPI_Init.
	CheckAfter float64
	Echo       map[string]string // every GCLOCK_* variable
}

// timerKinds maps GCLOCK_TIMER values to the C GCK_TIMER_* constants.
var timerKinds = map[string]int{
	"monotonic":     0,
	"monotonic_raw": 1,
	"realtime":      2,
	"tsc":           3,
	"mpi_wtime":     4,
}

const defaultBufferEvents = 8192

// loadConfig reads the configuration. environ is os.Environ-shaped.
func loadConfig(getenv func(string) string, environ []string) (config, error) {
	c := config{
		Dir:    getenv("GCLOCK_DIR"),
		Timer:  strings.ToLower(strings.TrimSpace(getenv("GCLOCK_TIMER"))),
		Buffer: defaultBufferEvents,
		Codec:  trace.CodecS2,
		Fake:   strings.TrimSpace(getenv("GCLOCK_FAKE_CLOCK")),
		Echo:   map[string]string{},
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GCLOCK_") {
			c.Echo[k] = v
		}
	}
	if c.Timer == "" {
		c.Timer = "auto"
	}
	if _, ok := timerKinds[c.Timer]; !ok && c.Timer != "auto" {
		return c, fmt.Errorf("GCLOCK_TIMER=%q: want one of %s", c.Timer, strings.Join(timerNames(), ", "))
	}
	if s := strings.ToLower(strings.TrimSpace(getenv("GCLOCK_CODEC"))); s != "" {
		codec, err := trace.ParseCodec(s)
		if err != nil {
			return c, fmt.Errorf("GCLOCK_CODEC: %w", err)
		}
		c.Codec, c.CodecGiven = codec, true
	}
	if s := strings.TrimSpace(getenv("GCLOCK_BUFFER")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 16 || n > 1<<26 {
			return c, fmt.Errorf("GCLOCK_BUFFER=%q: want an event count between 16 and %d", s, 1<<26)
		}
		c.Buffer = n
	}
	if s := strings.TrimSpace(getenv("GCLOCK_NODE_SIZE")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("GCLOCK_NODE_SIZE=%q: want a positive number of ranks per emulated node", s)
		}
		c.NodeSize = n
	}
	if c.Fake != "" {
		pairs, err := trace.ParseFakeClock(c.Fake)
		if err != nil {
			return c, fmt.Errorf("GCLOCK_FAKE_CLOCK=%q: %w", c.Fake, err)
		}
		c.Pairs = pairs
	}
	if s := strings.TrimSpace(getenv("GCLOCK_CHECK_AFTER")); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 86400 || f != f {
			return c, fmt.Errorf("GCLOCK_CHECK_AFTER=%q: want seconds between 0 and 86400", s)
		}
		c.CheckAfter = f
	}
	switch s := strings.TrimSpace(getenv("GCLOCK_FSYNC")); s {
	case "", "0":
	case "1":
		c.Fsync = true
	default:
		return c, fmt.Errorf("GCLOCK_FSYNC=%q: want 0 or 1", s)
	}
	switch s := strings.TrimSpace(getenv("GCLOCK_CWRITE")); s {
	case "", "1":
		c.CWrite = true
	case "0":
	default:
		return c, fmt.Errorf("GCLOCK_CWRITE=%q: want 0 or 1", s)
	}
	q := strings.TrimSpace(getenv("GCLOCK_QUIET"))
	c.Quiet = q != "" && q != "0"
	return c, nil
}

func timerNames() []string {
	n := []string{"auto"}
	for k := range timerKinds {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// jobIDFromEnv returns the launcher's job id, if any, made file-name safe.
// Under Slurm the name starts with slurm-<SLURM_JOB_ID>[.<SLURM_STEP_ID>]
// whatever the --mpi plugin (srun's PMIx namespace slurm.pmix.J.S names
// the same step); an mpirun inside an allocation appends its own job id,
// so that several mpirun in one job keep apart.
func jobIDFromEnv(getenv func(string) string) string {
	launcher := getenv("OMPI_MCA_orte_ess_jobid")
	if launcher == "" {
		launcher = getenv("PMIX_NAMESPACE")
	}
	id := launcher
	if sj := getenv("SLURM_JOB_ID"); sj != "" {
		id = "slurm-" + sj
		if st := getenv("SLURM_STEP_ID"); st != "" {
			id += "." + st
		}
		if launcher != "" && !strings.HasPrefix(launcher, "slurm.") {
			id += "-" + launcher
		}
	}
	return sanitize(id)
}

// srunSingleton reports an srun step of more than one task whose MPI
// library saw a world of size 1: it did not reach Slurm's process manager
// (a --mpi plugin it does not speak), so every task runs as a singleton.
// It returns the step's task count and this task's SLURM_PROCID.
func srunSingleton(getenv func(string) string, size int) (tasks int, procid string, ok bool) {
	if size != 1 || getenv("OMPI_COMM_WORLD_SIZE") != "" {
		return 0, "", false
	}
	n, err := strconv.Atoi(getenv("SLURM_STEP_NUM_TASKS"))
	if err != nil || n <= 1 {
		return 0, "", false
	}
	return n, getenv("SLURM_PROCID"), true
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// cmdline returns the process arguments from /proc/self/cmdline.
func cmdline() []string {
	b, err := trace.ReadSmallFile("/proc/self/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

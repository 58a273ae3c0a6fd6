package tests

// Parallel tracemerge (issue 13 §1): the same run analysed serially, under
// Open MPI's mpirun and under MPICH's mpiexec, with process 0 decoding a
// share of the rank files or none, gives the same reports byte for byte (merge/dist.go, docs/tracemerge.md "Parallel tracemerge").

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParallelTracemergeIdentical(t *testing.T) {
	needSetup(t)
	impls := mpis(t)
	dir := t.TempDir()
	tm := filepath.Join(dir, "tracemerge")
	if out, err := exec.Command("go", "build", "-o", tm, filepath.Join(repoRoot, "cmd", "tracemerge")).CombinedOutput(); err != nil {
		t.Fatalf("building tracemerge: %v\n%s", err, out)
	}
	// A synthetic run: 12 ranks, collectives on two communicators and a
	// ring halo exchange (point-to-point), injected clock error.
	runDir := filepath.Join(dir, "run")
	if r := runCmd(t, dir, nil, tm, "bench-synth", "--generate-only", "--dir", runDir,
		"--events", "60000", "--ranks", "12", "--halo"); r.Code != 0 {
		t.Fatalf("generating the run: exit %d\n%s", r.Code, r.Stderr)
	}
	args := []string{runDir, "--formats", "json,txt,csv", "--instance", "world:5"}
	files := []string{"imbalance.json", "p2p.json", "imbalance.txt", "events.csv"}
	serialOut := filepath.Join(dir, "serial")
	if r := runCmd(t, dir, nil, append([]string{tm, "-o", serialOut}, args...)...); r.Code != 0 {
		t.Fatalf("serial tracemerge exited %d:\n%s", r.Code, r.Stderr)
	}
	if strings.Contains(func() string { b, _ := os.ReadFile(filepath.Join(serialOut, "p2p.json")); return string(b) }(), `"messages": 0,`) {
		t.Fatal("the synthetic run has no point-to-point messages: the comparison would not cover them")
	}
	// share: GCLOCK_PAR_SHARE0, process 0's share of the rank files ("":
	// the default, 0.3 with 2 processes, none with more).
	for _, c := range []struct {
		m     *mpiImpl
		np    int
		share string
	}{{impls[0], 2, ""}, {impls[1], 2, ""}, {impls[1], 3, ""}, {impls[1], 3, "1"}, {impls[0], 2, "0"}} {
		t.Run(c.m.Name+"-np"+string(rune('0'+c.np))+"-share"+c.share, func(t *testing.T) {
			out := filepath.Join(dir, c.m.Name+string(rune('0'+c.np))+c.share)
			var env []string
			if c.share != "" {
				env = []string{"GCLOCK_PAR_SHARE0=" + c.share}
			}
			argv := append(c.m.argv(c.np, env, tm, "-o", out), args...)
			r := runCmd(t, dir, env, argv...)
			if r.Code != 0 {
				t.Fatalf("%s exited %d:\n%s", strings.Join(argv, " "), r.Code, r.Stderr)
			}
			want := "parallel analysis on " + string(rune('0'+c.np)) + " processes (" + c.m.Name + ")"
			if c.share != "" {
				want += ": all decode and merge the rank files (process 0 a share of " + c.share + ")"
			}
			if !strings.Contains(r.Stderr, want) {
				t.Fatalf("stderr lacks %q (did it run serially?):\n%s", want, r.Stderr)
			}
			if strings.Count(r.Stdout, "gclock imbalance report") > 1 {
				t.Errorf("more than one process printed the report:\n%s", r.Stdout)
			}
			for _, f := range files {
				a, err := os.ReadFile(filepath.Join(serialOut, f))
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("%s with %d processes differs from the serial one (%d vs %d bytes)", f, c.np, len(b), len(a))
				}
			}
		})
	}
	// A run directory that does not exist: every process ends, none hangs.
	r := runCmd(t, dir, nil, openMPI.argv(2, nil, tm, filepath.Join(dir, "nothing"), "-o", filepath.Join(dir, "x"))...)
	if r.Code != 2 {
		t.Errorf("mpirun -np 2 tracemerge on a missing directory exited %d, want 2:\n%s", r.Code, r.Stderr)
	}
}

package tests

// Durability (issue 12, docs/explanation/recorder.md "Durability"): a rank that dies
// (kill -9, MPI_Abort from another rank, a segfault in the application)
// loses no event of a call that returned before it died. progs/killme.c
// counts its returned MPI_Barrier(MPI_COMM_SELF) calls in a file it maps,
// so the count survives the kill; every counted call must be in the rank
// file plus its live sidecar, and tracemerge must name the rank as ended
// abnormally.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gclock/gclock/internal/launch"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// killmeCount reads rank's counter file: calls returned and pid.
func killmeCount(t *testing.T, dir string, rank int) (calls, pid int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("count-%d", rank)))
	if err != nil || len(b) < 16 {
		return 0, 0
	}
	return int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
}

// selfBarriers counts a rank's recorded MPI_Barrier calls on
// MPI_COMM_SELF, rank file and live sidecar together (merge.OpenTrace).
func selfBarriers(t *testing.T, path string) (int64, *rundir.RankMeta) {
	t.Helper()
	src, err := rundir.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.(interface{ Close() error }).Close()
	self := map[uint32]bool{}
	for _, c := range src.Meta().Comms {
		if c.Kind == "self" {
			self[c.Local] = true
		}
	}
	var n int64
	var buf []trace.Event
	for {
		buf, err = src.NextChunk(buf)
		for _, e := range buf {
			if e.Op == trace.OpBarrier && self[e.Comm] {
				n++
			}
		}
		if err != nil {
			break
		}
	}
	return n, src.Meta()
}

func TestDurable_DeadRanksLoseNoReturnedCall(t *testing.T) {
	needSetup(t)
	const np = 2
	for _, tc := range []struct {
		name   string
		args   []string
		killAt int64 // kill -9 the last rank once it counted this many calls (0: no kill)
	}{
		{"kill9_before_first_flush", []string{"loop"}, 5000},
		{"kill9_after_a_few_flushes", []string{"loop"}, 150000},
		{"kill9_later", []string{"loop"}, 1500000},
		{"mpi_abort_from_rank_0", []string{"abort", "400000"}, 0},
		{"segfault_in_the_application", []string{"segv", "300000"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cdir, tdir := t.TempDir(), filepath.Join(t.TempDir(), "tr")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			env := []string{"GCLOCK_DIR=" + tdir, "LD_PRELOAD=" + openMPI.Lib}
			argv := openMPI.argv(np, env, openMPI.prog(t, "killme"), append([]string{cdir}, tc.args...)...)
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Env = append(mpiBaseEnv(), env...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			release, err := launch.HoldStdin(cmd)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.killAt > 0 {
				for {
					calls, pid := killmeCount(t, cdir, np-1)
					if calls >= tc.killAt && pid > 0 {
						if err := syscall.Kill(int(pid), syscall.SIGKILL); err != nil {
							t.Fatalf("kill -9 %d: %v", pid, err)
						}
						break
					}
					if ctx.Err() != nil {
						t.Fatalf("rank %d never counted %d calls:\n%s", np-1, tc.killAt, out.String())
					}
					time.Sleep(time.Millisecond)
				}
			}
			err = cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("mpirun did not end after the rank died:\n%s", out.String())
			}
			if err == nil {
				t.Fatalf("mpirun exited 0, but a rank died:\n%s", out.String())
			}
			var dead []int
			for r := 0; r < np; r++ {
				calls, _ := killmeCount(t, cdir, r)
				path := filepath.Join(tdir, trace.RankFileName(r))
				got, meta := selfBarriers(t, path)
				// every call that returned is recorded; at most the one the
				// process died in after recording it is extra
				if got < calls || got > calls+1 {
					t.Errorf("rank %d: %d calls returned before it died, %d recorded (rank file and live sidecar)", r, calls, got)
				}
				switch {
				case meta.Footer != nil:
					// the rank that called MPI_Abort closes its file itself
					if meta.Footer.Reason != "abort" || tc.args[0] != "abort" || r != 0 {
						t.Errorf("rank %d: footer %+v; want no footer (it died)", r, meta.Footer)
					}
					t.Logf("rank %d: %d calls returned, %d recorded; closed by MPI_Abort", r, calls, got)
				case meta.Live == nil || meta.Live.Err != "":
					t.Errorf("rank %d: no footer and no readable live sidecar (%+v)", r, meta.Live)
				default:
					dead = append(dead, r)
					t.Logf("rank %d: %d calls returned, %d recorded, %d of them from the live sidecar", r, calls, got, meta.Live.Events)
				}
			}
			if len(dead) == 0 {
				t.Fatalf("no rank died abnormally")
			}
			// tracemerge says which ranks ended abnormally
			o, _ := exec.Command(filepath.Join(repoRoot, "build", "tracemerge"), "info", tdir).CombinedOutput()
			says := fmt.Sprintf("rank %d ended abnormally", dead[0])
			if len(dead) > 1 { // one line for all of them
				says = fmt.Sprintf("%d ranks (%s) ended abnormally", len(dead), rundir.RankRanges(dead, ", "))
			}
			if !strings.Contains(string(o), says) {
				t.Errorf("tracemerge info does not say %q:\n%s", says, o)
			}
		})
	}
}

package tests

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestRequestTable_CompletionTakesOldestRequestOfItsHandle runs
// progs/reqtable.c, a unit test of cshim/reqtable.h compiled against each
// MPI's mpi.h: single and shared handles, more starts of one shared
// handle than the thread's FIFO holds (so the table holds the handle twice,
// the newer entry in front), a persistent request started on a live
// handle, and a chain without a free slot; below MPI_THREAD_MULTIPLE (one
// walk per start, lookups that stop at the first match while handles are
// unique) and with it. Every completion must take the oldest request of
// its handle. Besides: lookups after random deletions in colliding,
// wrapping chains find every live request and no completed one; below
// MPI_THREAD_MULTIPLE the slots read per start and completion do not grow
// after 60,000 completions (no tombstones), and a full table without
// memory for another still completes every request it holds.
func TestRequestTable_CompletionTakesOldestRequestOfItsHandle(t *testing.T) {
	summary := regexp.MustCompile(`reqtable: (\d+) checks, (\d+) failed`)
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, m.prog(t, "reqtable")).CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("reqtable did not finish within 2 minutes (a loop in the table?):\n%s", out)
			}
			if err != nil {
				t.Fatalf("reqtable: %v\n%s", err, out)
			}
			s := summary.FindSubmatch(out)
			if s == nil {
				t.Fatalf("reqtable printed no summary:\n%s", out)
			}
			if n, _ := strconv.Atoi(string(s[1])); n < 2000 {
				t.Errorf("reqtable made %d checks, want at least 2000 (every case in both modes)\n%s", n, out)
			}
			if string(s[2]) != "0" {
				t.Errorf("reqtable:\n%s", out)
			}
		})
	}
}

package tests

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestRequestTable_CompletionTakesOldestRequestOfItsHandle runs
// progs/reqtable.c, a unit test of cshim/reqtable.h compiled against each
// MPI's mpi.h: single and shared handles, more starts of one shared
// handle than the thread's FIFO holds (so the table holds the handle twice,
// the newer entry in front), a persistent request started on a live
// handle, and a chain without a free slot; below MPI_THREAD_MULTIPLE (one
// walk per start, lookups that stop at the first match while handles are
// unique) and with it. Every completion must take the oldest request of
// its handle.
func TestRequestTable_CompletionTakesOldestRequestOfItsHandle(t *testing.T) {
	summary := regexp.MustCompile(`reqtable: (\d+) checks, (\d+) failed`)
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			out, err := exec.Command(m.prog(t, "reqtable")).CombinedOutput()
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

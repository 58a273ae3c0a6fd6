package tests

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// runCUnit runs progs/<name>.c, a C unit test of part of cshim/ compiled
// against each MPI's mpi.h, which prints "<name>: N checks, F failed" (and
// a line per failed check); the test fails unless it finished within
// limit, made at least minChecks checks and none failed.
func runCUnit(t *testing.T, name string, minChecks int, limit time.Duration) {
	t.Helper()
	summary := regexp.MustCompile(regexp.QuoteMeta(name) + `: (\d+) checks, (\d+) failed`)
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			out, err := exec.CommandContext(ctx, m.prog(t, name)).CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("%s did not finish within %v (a loop in the code under test?):\n%s", name, limit, out)
			}
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, out)
			}
			s := summary.FindSubmatch(out)
			if s == nil {
				t.Fatalf("%s printed no summary:\n%s", name, out)
			}
			if n, _ := strconv.Atoi(string(s[1])); n < minChecks {
				t.Errorf("%s made %d checks, want at least %d (every case)\n%s", name, n, minChecks, out)
			}
			if string(s[2]) != "0" {
				t.Errorf("%s:\n%s", name, out)
			}
		})
	}
}

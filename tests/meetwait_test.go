package tests

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestMeetingWaits_DecisionBroadcastsPollBeforeSleeping runs
// progs/meetwait.c, a unit test of cshim/pingpong.c's untimed waits
// compiled against each MPI's mpi.h: the two broadcasts of a resync
// meeting's decision (gclock_meeting_waits(2), set by the shim around the
// meeting) poll without sleeping while their request completes within
// 0.2 ms, a rank still waiting after that sleeps between polls, and every
// other wait (outside a meeting, or a third one in it: a sync epoch the
// meeting runs) sleeps between polls as before.
func TestMeetingWaits_DecisionBroadcastsPollBeforeSleeping(t *testing.T) {
	summary := regexp.MustCompile(`meetwait: (\d+) checks, (\d+) failed`)
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, m.prog(t, "meetwait")).CombinedOutput()
			if err != nil {
				t.Fatalf("meetwait: %v\n%s", err, out)
			}
			s := summary.FindSubmatch(out)
			if s == nil {
				t.Fatalf("meetwait printed no summary:\n%s", out)
			}
			if n, _ := strconv.Atoi(string(s[1])); n < 20 {
				t.Errorf("meetwait made %d checks, want at least 20 (every case)\n%s", n, out)
			}
			if string(s[2]) != "0" {
				t.Errorf("meetwait:\n%s", out)
			}
		})
	}
}

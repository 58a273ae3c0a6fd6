package tests

import (
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
// meeting runs) sleeps between polls as before. The polling needs
// gclock_meeting_poll(1), which pmpi sets only when the machine runs no
// more ranks than it has CPUs: without it a meeting's broadcasts sleep.
func TestMeetingWaits_DecisionBroadcastsPollBeforeSleeping(t *testing.T) {
	runCUnit(t, "meetwait", 20, time.Minute)
}

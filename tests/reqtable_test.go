package tests

import (
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
	runCUnit(t, "reqtable", 2000, 2*time.Minute)
}

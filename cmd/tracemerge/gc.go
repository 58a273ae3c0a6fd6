package main

import (
	"os"
	"runtime/debug"
)

// manyRanksGC is the ranks above which tracemerge collects garbage more
// often (gcForRanks).
const manyRanksGC = 4096

// gcForRanks sets the garbage collector's target for a run of n ranks:
// with thousands of ranks the heap is mostly the ranks' decoder buffers,
// live for the whole pass, and Go's default (GOGC=100: grow to twice the
// live heap before collecting) doubled the peak RSS (16,384 ranks: 1.7
// GiB for ≈ 0.65 GB live). Above manyRanksGC ranks the heap may grow by
// 15 % instead (0.94 GiB; 25 %: 0.96–1.03 GiB); the pass allocates little
// per event, so the extra collections cost ≈ 7 % of the CPU (D33,
// docs/tracemerge.md "Many ranks in one process"). A GOGC set in the
// environment wins.
func gcForRanks(n int) {
	if n > manyRanksGC && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(15)
	}
}

package main

import (
	"os"
	"strings"
	"sync"
)

// manyRanksHugePages is the ranks above which tracemerge asks the kernel
// for transparent huge pages for its heap (hugePagesForRanks). A variable
// for the tests only.
var manyRanksHugePages = 4096

// hugePagesOnce starts the one loop a process runs (hugePagesStart).
var hugePagesOnce sync.Once

// hugePagesStart starts the loop (a variable: the tests see who asks).
var hugePagesStart = func() { go hugePagesLoop() }

// hugePagesWanted says whether a run of n ranks gets huge pages, given
// GCLOCK_HUGEPAGES (env): unset or empty, above manyRanksHugePages ranks;
// "0" or "false", never; anything else, at any number of ranks.
func hugePagesWanted(n int, env string) bool {
	switch strings.TrimSpace(env) {
	case "":
		return n > manyRanksHugePages
	case "0", "false":
		return false
	}
	return true
}

// hugePagesForRanks asks, for a run of n ranks, that the heap be backed by
// transparent huge pages (2 MiB) where the kernel leaves that to the
// program (THP "madvise", as on the VMs measured here; Go's runtime does
// not ask). With thousands of ranks every merged event touches the state
// of another rank (its decoder, cursor, sums, point-to-point and
// root-cause state), spread over a heap of ≈ 0.9 GB: with 4 KiB pages
// such a touch most likely misses the TLB as well (no counters here to
// show it), and in a VM a page walk is several memory accesses. On the
// 16,384-rank halo run huge pages cut the user + system CPU by 8–24 %
// at load 11–23 and by 5 % on average (−12 % to +12 %) over eight pairs
// at load 1.5–5.8, for 3–23 MB more peak RSS; at 4,096 ranks of 250 events the
// collapse cost more than it saved (D100, docs/explanation/tracemerge.md
// "Many ranks in one process"). Called for a one-process analysis only
// (analyze.go, bench-synth): the processes of a parallel analysis hold
// small heaps, whose peaks (issue 37's K=8 goal: each ≤ 35 % of one
// process's) were not measured with huge pages. Only the first call of
// a process starts the loop; it runs until the process exits. Where the
// system has no transparent huge pages, or not Linux, it does nothing.
func hugePagesForRanks(n int) {
	if !hugePagesWanted(n, os.Getenv("GCLOCK_HUGEPAGES")) {
		return
	}
	hugePagesOnce.Do(hugePagesStart)
}

package main

import (
	"os"
	"runtime/debug"
	"strings"

	"github.com/gclock/gclock/merge/rundir"
)

// manyRanksGC is the ranks above which tracemerge collects garbage more
// often (gcForRanks). A variable for the tests only.
var manyRanksGC = 4096

// gcForRanks sets the garbage collector's target for a run of n ranks:
// with thousands of ranks the heap is mostly the ranks' decoder buffers,
// live for the whole pass (≈ 0.5–0.6 GB at 16,384 ranks), and Go's
// default (GOGC=100: grow to twice the live heap before collecting) put
// the peak RSS over 1 GiB. Above manyRanksGC ranks the heap may grow by a
// quarter instead (777 MiB); the pass allocates little per event, so the
// extra collections cost little (D36, docs/explanation/tracemerge.md "Many ranks in
// one process"). A GOGC set in the environment wins. Every process of a
// parallel analysis sets it, the workers too (serveOnce): a worker holds
// every rank's metadata, and at GOGC=100 a K=8 worker of the 16,384-rank
// run peaked at 290–345 MB against ≈ 125–145 MB live (D77).
func gcForRanks(n int) {
	if n > manyRanksGC && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
}

// loadRun loads the run in dir (rundir.Load with open) with the
// collector's target for its number of rank files already set
// (gcForRanks): opening 16,384 rank files' metadata is the first peak of
// every process, and with the target set only after it a K=8 worker had
// reached ≈ 185 MB of RSS before its pass began (D77).
func loadRun(dir string, open rundir.Opener) (*rundir.Run, error) {
	if n, err := rankFiles(dir); err == nil {
		gcForRanks(n)
	}
	return rundir.Load(dir, open)
}

// rankFiles counts the rank files (*.gct) in dir.
func rankFiles(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".gct") {
			n++
		}
	}
	return n, nil
}

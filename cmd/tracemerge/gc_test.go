package main

import (
	"errors"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// TestGCForRanks_OnlyManyRanksAndNeverOverGOGC: the collector's target is
// lowered for runs of more than manyRanksGC ranks only, and never when
// the user set GOGC.
func TestGCForRanks_OnlyManyRanksAndNeverOverGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		ranks int
		gogc  string
		want  int
	}{
		{8, "", 100},
		{manyRanksGC, "", 100},
		{manyRanksGC + 1, "", 25},
		{16384, "", 25},
		{16384, "100", 100},
	} {
		t.Setenv("GOGC", tc.gogc)
		debug.SetGCPercent(100)
		gcForRanks(tc.ranks)
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("%d ranks, GOGC=%q: GC percent %d, want %d", tc.ranks, tc.gogc, got, tc.want)
		}
	}
}

// failingTransport is a parallel job's transport whose every message
// fails: a worker given it stops at its first receive.
type failingTransport struct{}

func (failingTransport) Send(dest, tag int, b []byte) error { return errors.New("no job") }
func (failingTransport) Recv(src, tag int, b []byte) error  { return errors.New("no job") }

// TestGCForRanks_AWorkerOfAParallelAnalysisCollectsLikeProcessZero: a
// worker (serveOnce) lowers the collector's target for a run of many
// ranks as process 0 does; before, a K=8 worker of the 16,384-rank run
// kept GOGC=100 and peaked at twice its live heap (D77).
func TestGCForRanks_AWorkerOfAParallelAnalysisCollectsLikeProcessZero(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer func(n int) { manyRanksGC = n }(manyRanksGC)
	dir := filepath.Join(t.TempDir(), "run")
	gen(t, dir, synth.Config{Ranks: 4, Steps: 50, Seed: 3})
	t.Setenv("GOGC", "")
	for _, tc := range []struct {
		threshold int
		want      int
	}{
		{3, 25},   // 4 ranks are "many"
		{4, 100},  // not more than the threshold
		{64, 100}, // few
	} {
		manyRanksGC = tc.threshold
		debug.SetGCPercent(100)
		err := serveOnce(dir, merge.Options{}, &merge.Dist{Procs: 2, Me: 1, T: failingTransport{}})
		if err == nil {
			t.Fatalf("threshold %d: the worker served without a job", tc.threshold)
		}
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("threshold %d, 4 ranks: a worker's GC percent %d, want %d", tc.threshold, got, tc.want)
		}
	}
}

// TestLoadRun_SetsTheGCTargetBeforeTheFirstFileIsOpened: the collector's
// target for many ranks holds while the rank files are opened (the first
// peak of every process), not only after the run is loaded.
func TestLoadRun_SetsTheGCTargetBeforeTheFirstFileIsOpened(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer func(n int) { manyRanksGC = n }(manyRanksGC)
	dir := filepath.Join(t.TempDir(), "run")
	gen(t, dir, synth.Config{Ranks: 4, Steps: 50, Seed: 3})
	t.Setenv("GOGC", "")
	for _, tc := range []struct {
		threshold int
		want      int
	}{
		{3, 25},
		{4, 100},
	} {
		manyRanksGC = tc.threshold
		debug.SetGCPercent(100)
		var seen []int
		run, err := loadRun(dir, func(path string) (rundir.Source, error) {
			p := debug.SetGCPercent(100)
			debug.SetGCPercent(p)
			seen = append(seen, p)
			return rundir.OpenTrace(path)
		})
		if err != nil {
			t.Fatal(err)
		}
		run.Close()
		if len(seen) != 4 {
			t.Fatalf("threshold %d: %d files opened, want 4", tc.threshold, len(seen))
		}
		for i, p := range seen {
			if p != tc.want {
				t.Errorf("threshold %d: GC percent %d when file %d was opened, want %d", tc.threshold, p, i, tc.want)
			}
		}
	}
}

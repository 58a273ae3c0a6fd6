// Package analysistest holds what tests of the trace writers share when
// they prove that a change of encoding leaves the analysis unchanged: a
// synthetic run with every kind of halo exchange, and the collective and
// point-to-point analysis of a run directory as one JSON text.
package analysistest

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// MixedHaloRun writes a synthetic 6-rank run (two communicators,
// collectives and halo exchanges of every form, synth.Config.HaloMix)
// into a fresh directory and returns its rank files in rank order.
func MixedHaloRun(t testing.TB, seed uint64) []string {
	t.Helper()
	src := t.TempDir()
	if _, err := synth.Generate(src, synth.Config{Ranks: 6, NodeSize: 2, Steps: 400, ChunkEvents: 1000, Seed: seed,
		SplitGroups: 2, Halo: true, HaloMix: true}); err != nil {
		t.Fatalf("synth.Generate into %s: %v", src, err)
	}
	files, err := filepath.Glob(filepath.Join(src, "rank-*.gct"))
	if err != nil || len(files) != 6 {
		t.Fatalf("synth wrote %d rank files into %s (%v), want 6", len(files), src, err)
	}
	sort.Strings(files)
	return files
}

// AnalysisJSON loads the run in dir and returns its collective analysis
// (merge.Analyze) and point-to-point analysis (merge.AnalyzeP2P, clock
// interp) as one JSON text, dir replaced by "RUN" so that two directories
// holding the same run compare equal.
func AnalysisJSON(t testing.TB, dir string) string {
	t.Helper()
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	res, err := merge.Analyze(run, merge.Options{})
	if err != nil {
		t.Fatalf("analyse %s: %v", dir, err)
	}
	p2p, err := merge.AnalyzeP2P(run, merge.P2POptions{Clock: correct.ClockInterp})
	if err != nil {
		t.Fatalf("point-to-point analysis of %s: %v", dir, err)
	}
	b, err := json.Marshal([]any{res, p2p})
	if err != nil {
		t.Fatalf("marshal the analysis of %s: %v", dir, err)
	}
	return strings.ReplaceAll(string(b), dir, "RUN")
}

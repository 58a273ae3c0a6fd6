package runinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// TestSummarize_CountsEveryEventAndNamesDamagedFiles: on a synthetic run
// with known event counts the summary counts every event once per rank
// and in total, lists the hosts and epochs, and a chunk damaged in a file
// becomes a problem naming that file, with its rank not clean.
func TestSummarize_CountsEveryEventAndNamesDamagedFiles(t *testing.T) {
	const ranks, steps = 4, 2000
	for _, c := range []struct {
		name        string
		damage      bool
		wantClean   int
		wantProblem string
	}{
		{"intact", false, ranks, ""},
		{"a flipped byte in rank 2's file", true, ranks - 1, "rank-00002.gct: chunk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := synth.Generate(dir, synth.Config{Ranks: ranks, NodeSize: 2, Steps: steps, ChunkEvents: 256, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			if c.damage {
				p := filepath.Join(dir, "rank-00002.gct")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				b[len(b)/2] ^= 0xff
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			run, err := rundir.Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			s, err := Summarize(run, correct.ClockInterp)
			if err != nil {
				t.Fatal(err)
			}
			if s.Found != ranks || s.WorldSize != ranks || len(s.Ranks) != ranks || len(s.Hosts) != 2 || len(s.Epochs) == 0 {
				t.Errorf("found %d files of %d ranks, %d rank rows, %d hosts, %d epochs; want %d, %d, %d, 2, > 0",
					s.Found, s.WorldSize, len(s.Ranks), len(s.Hosts), len(s.Epochs), ranks, ranks, ranks)
			}
			var sum, ops int64
			clean := 0
			for _, r := range s.Ranks {
				sum += r.Events
				if !c.damage && r.Events != steps {
					t.Errorf("rank %d: %d events, want %d", r.Rank, r.Events, steps)
				}
				if r.Clean {
					clean++
				}
			}
			for _, o := range s.OpCounts {
				ops += o.Events
			}
			if sum != s.Events || ops != s.Events || (!c.damage && s.Events != ranks*steps) {
				t.Errorf("events: %d in total, %d summed over ranks, %d over ops (intact: %d)", s.Events, sum, ops, ranks*steps)
			}
			if clean != c.wantClean {
				t.Errorf("%d clean rank files, want %d", clean, c.wantClean)
			}
			named := c.wantProblem == "" && len(s.Problems) == 0
			for _, p := range s.Problems {
				named = named || c.wantProblem != "" && strings.Contains(p, c.wantProblem)
			}
			if !named {
				t.Errorf("problems %q, want one containing %q (none when intact)", s.Problems, c.wantProblem)
			}
		})
	}
}

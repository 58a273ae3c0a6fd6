package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace/synth"
)

// TestPostMortem_AnalyzeAndInfoReportItOnlyWhenARankDidNotFinalize: the
// post-mortem (docs/guide/crash-hang.md) is computed by tracemerge itself
// (package merge/postmortem; merge.Analyze and runinfo.Summarize leave it
// nil), so every output that carries it must show it for a run whose rank
// ended without MPI_Finalize, naming that rank, and none for a clean run.
func TestPostMortem_AnalyzeAndInfoReportItOnlyWhenARankDidNotFinalize(t *testing.T) {
	tmp := t.TempDir()
	crashed := filepath.Join(tmp, "crashed")
	clean := filepath.Join(tmp, "clean")
	gen(t, crashed, synth.Config{Ranks: 4, Steps: 300, Seed: 8, CrashedRanks: []int{2}})
	gen(t, clean, synth.Config{Ranks: 4, Steps: 300, Seed: 8})
	// output returns what one command printed or wrote.
	type output func(t *testing.T, dir, out string) string
	analyze := func(file string) output {
		return func(t *testing.T, dir, out string) string {
			var so, se bytes.Buffer
			if code := run([]string{dir, "-o", out, "--formats", "json,txt"}, &so, &se); code != exitOK && code != exitPartial {
				t.Fatalf("tracemerge %s: exit %d: %s", dir, code, se.String())
			}
			if file == "" {
				return so.String()
			}
			b, err := os.ReadFile(filepath.Join(out, file))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	info := func(args ...string) output {
		return func(t *testing.T, dir, _ string) string {
			var so, se bytes.Buffer
			if code := run(append(append([]string{"info"}, args...), dir), &so, &se); code != exitOK && code != exitPartial {
				t.Fatalf("tracemerge info %s: exit %d: %s", dir, code, se.String())
			}
			return so.String()
		}
	}
	for _, tc := range []struct {
		name    string
		out     output
		section string // what marks the post-mortem in this output
		rank2   string // how it names rank 2's end
	}{
		{"report on stdout", analyze(""), "POST-MORTEM", "rank 2"},
		{"imbalance.txt", analyze("imbalance.txt"), "POST-MORTEM", "rank 2"},
		{"imbalance.json", analyze("imbalance.json"), `"postmortem": {`, `"rank": 2,`},
		{"info", info(), "POST-MORTEM", "rank 2"},
		{"info --json", info("--json"), `"postmortem": {`, `"rank": 2,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.out(t, crashed, filepath.Join(t.TempDir(), "crashed"))
			if !strings.Contains(got, tc.section) || !strings.Contains(got, tc.rank2) {
				t.Errorf("crashed run: no post-mortem (%q) naming %q:\n%s", tc.section, tc.rank2, got)
			}
			if got := tc.out(t, clean, filepath.Join(t.TempDir(), "clean")); strings.Contains(got, tc.section) {
				t.Errorf("clean run: a post-mortem (%q):\n%s", tc.section, got)
			}
		})
	}
}

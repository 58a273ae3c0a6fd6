package merge_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/merge/runinfo"
	"github.com/gclock/gclock/trace/synth"
)

// FuzzLoad feeds arbitrary bytes as one rank file of an otherwise intact
// two-rank run through merge.Load, merge.Analyze and runinfo.Summarize
// (an external test, so that it can call merge/runinfo, which imports
// merge): whatever the bytes, nothing may panic, hang or produce an
// analysis that cannot be written as JSON.
func FuzzLoad(f *testing.F) {
	seedDir := f.TempDir()
	if _, err := synth.Generate(seedDir, synth.Config{Ranks: 2, NodeSize: 1, Steps: 300, ChunkEvents: 64, Seed: 5}); err != nil {
		f.Fatal(err)
	}
	good0, err := os.ReadFile(filepath.Join(seedDir, "rank-00000.gct"))
	if err != nil {
		f.Fatal(err)
	}
	good1, err := os.ReadFile(filepath.Join(seedDir, "rank-00001.gct"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good0)
	f.Add(good0[:len(good0)/2])
	f.Add(good0[:40])
	f.Add([]byte("GCLOCKTR"))
	f.Add([]byte{})
	flipped := append([]byte(nil), good0...)
	flipped[len(flipped)/3] ^= 0xff
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "rank-00000.gct"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "rank-00001.gct"), good1, 0o644); err != nil {
			t.Fatal(err)
		}
		run, err := rundir.Load(dir, nil)
		if err != nil {
			if _, ok := err.(*rundir.LoadError); !ok {
				t.Fatalf("Load error is %T, want *merge.LoadError: %v", err, err)
			}
			return
		}
		res, err := merge.Analyze(run, merge.Options{Capture: []merge.InstanceKey{{Comm: 1, Seq: 3}}})
		run.Close()
		if err != nil {
			t.Fatalf("Analyze: %v", err)
		}
		if _, err := json.Marshal(res.Analysis); err != nil {
			t.Fatalf("analysis not JSON-encodable: %v", err)
		}
		run2, err := rundir.Load(dir, nil)
		if err != nil {
			t.Fatalf("second Load: %v", err)
		}
		defer run2.Close()
		info, err := runinfo.Summarize(run2, correct.ClockInterp)
		if err != nil {
			t.Fatalf("Summarize: %v", err)
		}
		if _, err := json.Marshal(info); err != nil {
			t.Fatalf("info not JSON-encodable: %v", err)
		}
	})
}

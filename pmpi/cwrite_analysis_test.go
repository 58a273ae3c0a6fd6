package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// TestCWriter_AnalysisSameAsGoWritten rewrites a synthetic run (6 ranks,
// two communicators, halo exchanges of every form) twice, its chunks once
// written by the Go half (S2) and once by the C writer (zstd), the
// metadata the same, and analyses both: the collective and the
// point-to-point results are the same, byte for byte as JSON.
func TestCWriter_AnalysisSameAsGoWritten(t *testing.T) {
	src := t.TempDir()
	if _, err := synth.Generate(src, synth.Config{Ranks: 6, NodeSize: 2, Steps: 400, ChunkEvents: 1000, Seed: 4,
		SplitGroups: 2, Halo: true, HaloMix: true}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(src, "rank-*.gct"))
	if len(files) != 6 {
		t.Fatalf("synth wrote %d rank files", len(files))
	}
	results := map[string]string{}
	for _, how := range []string{"go", "c"} {
		dir := filepath.Join(t.TempDir(), "run")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rewriteRank(t, f, filepath.Join(dir, filepath.Base(f)), how == "c")
		}
		run, err := merge.Load(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := merge.Analyze(run, merge.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p2p, err := merge.AnalyzeP2P(run, merge.P2POptions{Clock: merge.ClockInterp})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal([]any{res, p2p})
		if err != nil {
			t.Fatal(err)
		}
		results[how] = strings.ReplaceAll(string(b), dir, "RUN")
	}
	if len(results["go"]) < 1000 || results["go"] != results["c"] {
		t.Fatalf("analyses differ (or are empty): %d bytes through Go, %d in C", len(results["go"]), len(results["c"]))
	}
}

// rewriteRank copies the rank file from to to: its header, communicators,
// epochs and footer through trace.Writer, its events in 1,500-event halves
// through the C writer (inC) or the Go half's path (cColumns, WriteColumns).
func rewriteRank(t *testing.T, from, to string, inC bool) {
	t.Helper()
	r, err := trace.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	evs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	w, err := trace.Create(to, m.Header, trace.WithCodec(trace.CodecS2))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{w: w, path: to}
	if inC {
		if why := rec.armCWriter(config{CWrite: true, Codec: trace.CodecS2}, 1500); why != "" {
			t.Fatal(why)
		}
	}
	for _, c := range m.Comms {
		if err := w.WriteComm(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range m.Epochs {
		if err := w.WriteEpoch(e); err != nil {
			t.Fatal(err)
		}
	}
	for len(evs) > 0 {
		n := min(len(evs), 1500)
		recs, free := cRecords(evs[:n])
		if inC {
			if !cWriterWrite(recs) {
				t.Fatal("the C writer handed a half back")
			}
		} else {
			rec.flushLocked(recs)
		}
		free()
		evs = evs[n:]
	}
	f := *m.Footer
	f.Events, f.Calls = 0, 0
	if err := w.Close(f); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/internal/analysistest"
	"github.com/gclock/gclock/trace"
)

// TestCWriter_AnalysisSameAsGoWritten rewrites a synthetic run (6 ranks,
// two communicators, halo exchanges of every form) twice, its chunks once
// written by the Go half (S2) and once by the C writer (zstd), the
// metadata the same, and analyses both: the collective and the
// point-to-point results are the same, byte for byte as JSON.
func TestCWriter_AnalysisSameAsGoWritten(t *testing.T) {
	files := analysistest.MixedHaloRun(t, 4)
	results := map[string]string{}
	for _, how := range []string{"go", "c"} {
		dir := filepath.Join(t.TempDir(), "run")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rewriteRank(t, f, filepath.Join(dir, filepath.Base(f)), how == "c")
		}
		results[how] = analysistest.AnalysisJSON(t, dir)
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

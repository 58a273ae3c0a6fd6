package trace_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gclock/gclock/internal/analysistest"
	"github.com/gclock/gclock/trace"
)

// TestFormat6_AnalysisSameAsFormats5And4: a synthetic 6-rank run (two
// communicators, halo exchanges of every form, collectives) written as
// format-6 files (chunk layout 4: a MPI_Waitall's later completions
// without timing values), as format-5 files (layout 3) and as format-4.1
// files (layout 2, the old decoder paths) gives the same collective and
// point-to-point analysis, byte for byte as JSON, with either codec.
func TestFormat6_AnalysisSameAsFormats5And4(t *testing.T) {
	files := analysistest.MixedHaloRun(t, 7)
	for _, codec := range []trace.Codec{trace.CodecZstd, trace.CodecS2} {
		results := map[int]string{}
		for _, major := range []int{6, 5, 4} {
			dir := filepath.Join(t.TempDir(), "run")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			opts := []trace.Option{trace.WithCodec(codec)}
			switch major {
			case 5:
				opts = append(opts, trace.WithFormat5())
			case 4:
				opts = append(opts, trace.WithFormat4())
			}
			for _, f := range files {
				rewrite(t, f, filepath.Join(dir, filepath.Base(f)), major, opts...)
			}
			results[major] = analysistest.AnalysisJSON(t, dir)
		}
		if len(results[6]) < 1000 || results[6] != results[5] || results[6] != results[4] {
			t.Fatalf("%v: analyses differ (or are empty): %d bytes from format 6, %d from format 5, %d from format 4.1",
				codec, len(results[6]), len(results[5]), len(results[4]))
		}
	}
}

// rewrite copies the rank file from to to with opts: header,
// communicators, events in chunks of 1,500, epochs and footer; it checks
// the copy's major version.
func rewrite(t *testing.T, from, to string, major int, opts ...trace.Option) {
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
	if len(m.Damage) != 0 || m.Footer == nil || int(m.Footer.Events) != len(evs) {
		t.Fatalf("%s: read with damage %v, %d events (footer %+v)", from, m.Damage, len(evs), m.Footer)
	}
	w, err := trace.Create(to, m.Header, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range m.Comms {
		if err := w.WriteComm(c); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(evs); i += 1500 {
		if err := w.WriteEvents(evs[i:min(i+1500, len(evs))]); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range m.Epochs {
		if err := w.WriteEpoch(e); err != nil {
			t.Fatal(err)
		}
	}
	foot := *m.Footer
	if err := w.Close(foot); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(to)
	if err != nil {
		t.Fatal(err)
	}
	if got := int(b[8]) | int(b[9])<<8; got != major {
		t.Fatalf("%s: format %d, want %d", to, got, major)
	}
	// the copy reads back whole, every event as written
	r2, err := trace.Open(to)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	back, err := r2.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Meta().Damage) != 0 || !slices.Equal(back, evs) {
		t.Fatalf("%s: read back with damage %v, %d events of %d, equal %v", to, r2.Meta().Damage, len(back), len(evs), slices.Equal(back, evs))
	}
}

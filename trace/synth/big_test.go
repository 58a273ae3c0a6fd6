package synth

import (
	"os"
	"testing"
	"time"
)

// BenchmarkGenerate_TenMillion measures the 10^7-event run the merger's
// benchmarks use (it writes about 40 MB): go test -bench TenMillion ./trace/synth
func BenchmarkGenerate_TenMillion(b *testing.B) {
	for b.Loop() {
		generateTenMillion(b)
	}
}

func generateTenMillion(t testing.TB) {
	cfg := Config{Ranks: 128, Steps: 78125, Seed: 5}
	t0 := time.Now()
	tr, err := Generate(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range tr.Files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size += st.Size()
	}
	el := time.Since(t0)
	t.Logf("%d events, %d ranks: %v (%.1f M events/s), %.1f MB, %.2f bytes/event",
		tr.TotalEvents(), cfg.Ranks, el.Round(time.Millisecond), float64(tr.TotalEvents())/el.Seconds()/1e6,
		float64(size)/1e6, float64(size)/float64(tr.TotalEvents()))
}

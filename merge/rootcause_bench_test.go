package merge

import (
	"runtime"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
)

// rcCapture keeps a copy of every event of the stream.
type rcCapture struct{ evs []datamodel.GEvent }

func (c *rcCapture) Add(e *datamodel.GEvent) error {
	c.evs = append(c.evs, *e)
	return nil
}

// BenchmarkRootCauseStream measures the delay and critical-path analysis
// alone (its own point-to-point matching included) on the events of the
// benchmark run (8 ranks, every event a collective with waits), taken
// from memory in batches as an AsyncSink hands them over (with its
// prefetches): cpu-ns/event is the stream's cost per event.
func BenchmarkRootCauseStream(b *testing.B) {
	dir := benchRun(b)
	run, err := rundir.Load(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	pass, err := Prepare(run, Options{})
	if err != nil {
		b.Fatal(err)
	}
	c := rcCapture{evs: make([]datamodel.GEvent, 0, 2_000_100)}
	pass.AddStreamSink(&c)
	if _, err := pass.Run(); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ResetTimer()
	cpu0 := cpuTime()
	var events int
	for i := 0; i < b.N; i++ {
		rc := NewRootCauseStream(run, RootCauseOptions{}, nil)
		for j := 0; j < len(c.evs); j += asyncBatch { // as an AsyncSink feeds it
			if err := addBatch(rc, rc, c.evs[j:min(j+asyncBatch, len(c.evs))]); err != nil {
				b.Fatal(err)
			}
		}
		if rc.Result() == nil {
			b.Fatal("no result")
		}
		events += len(c.evs)
	}
	b.ReportMetric((cpuTime()-cpu0)*1e9/float64(events), "cpu-ns/event")
}

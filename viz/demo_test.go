package viz

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gclock/gclock/trace"
)

// TestDemo_WritesExampleOutputs writes example outputs for looking at
// (Gantt charts, instance views, the HTML and text reports) into
// $VIZ_DEMO_DIR, or into a temporary directory when it is unset, and checks
// that each is produced and non-empty.
func TestDemo_WritesExampleOutputs(t *testing.T) {
	dir := os.Getenv("VIZ_DEMO_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	write := func(name string, f func(*bytes.Buffer) error) {
		t.Helper()
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.Len() == 0 {
			t.Fatalf("%s: empty", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hosts := []string{"n0", "n0", "n1", "n1", "n2<&>", "n2", "n3", "n3"}
	ops := []trace.Op{trace.OpAllreduce, trace.OpAllreduce, trace.OpBcast, trace.OpBarrier}
	for _, c := range []struct {
		name  string
		ranks int
		iters int
		raw   bool
		ops   []trace.Op
	}{
		{"small", 8, 40, false, ops}, {"raw", 8, 40, true, ops}, {"big", 8, 200000, false, ops},
		{"mixed128", 128, 8000, false, []trace.Op{trace.OpAllreduce, trace.OpBcast, trace.OpBarrier, trace.OpAlltoall, trace.OpGather, trace.OpReduce, trace.OpScan}},
	} {
		g := NewGantt(GanttOptions{WorldSize: c.ranks, Title: "demo " + c.name, Raw: c.raw, Hosts: hosts})
		s := synthRun{Ranks: c.ranks, Iters: c.iters, Seed: 1, Compute: 20000, Latency: 5000, Offset: 30000, Drift: 1e-5, Slow: 5, Ops: c.ops}
		if err := s.run(g.Add); err != nil {
			t.Fatal(err)
		}
		write(c.name+".svg", func(b *bytes.Buffer) error { return g.WriteSVG(b) })
	}
	inst, raw := demoInstances(8)
	write("inst.svg", func(b *bytes.Buffer) error {
		return InstanceSVG(b, inst, &raw, "Worst MPI_Allreduce (by entry skew)")
	})
	far := raw
	far.Enter, far.Exit = slices.Clone(raw.Enter), slices.Clone(raw.Exit)
	for i := range far.Enter {
		far.Enter[i] += float64(i%3) * 4e5
		far.Exit[i] += float64(i%3) * 4e5
	}
	write("inst-zoom.svg", func(b *bytes.Buffer) error { return InstanceSVG(b, inst, &far, "raw clocks far apart") })
	write("inst1.svg", func(b *bytes.Buffer) error { return InstanceSVG(b, inst, nil, "corrected only") })
	rep := demoReport(t, true)
	write("index.html", func(b *bytes.Buffer) error { return WriteHTML(b, rep) })
	write("report.txt", func(b *bytes.Buffer) error { return WriteImbalanceText(b, rep.Analysis) })
}

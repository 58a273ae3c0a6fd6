package viz

import (
	"os"
	"testing"

	"github.com/gclock/gclock/trace"
)

func TestDemoWriteFiles(t *testing.T) {
	dir := os.Getenv("VIZ_DEMO_DIR")
	if dir == "" {
		t.Skip("set VIZ_DEMO_DIR")
	}
	for _, c := range []struct {
		name  string
		iters int
		raw   bool
	}{{"small", 40, false}, {"big", 200000, false}, {"raw", 40, true}} {
		g := NewGantt(GanttOptions{WorldSize: 8, Title: "demo " + c.name, Raw: c.raw, Hosts: []string{"n0", "n0", "n1", "n1", "n2<&>", "n2", "n3", "n3"}})
		s := synthRun{Ranks: 8, Iters: c.iters, Seed: 1, Compute: 20000, Latency: 5000, Offset: 30000, Drift: 1e-5, Slow: 5,
			Ops: []trace.Op{trace.OpAllreduce, trace.OpAllreduce, trace.OpBcast, trace.OpBarrier}}
		if err := s.run(g.Add); err != nil {
			t.Fatal(err)
		}
		f, _ := os.Create(dir + "/" + c.name + ".svg")
		if err := g.WriteSVG(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

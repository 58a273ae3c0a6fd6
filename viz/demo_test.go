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

func TestDemoInstance(t *testing.T) {
	dir := os.Getenv("VIZ_DEMO_DIR")
	if dir == "" {
		t.Skip("set VIZ_DEMO_DIR")
	}
	inst, raw := demoInstances(8)
	f, _ := os.Create(dir + "/inst.svg")
	if err := InstanceSVG(f, inst, &raw, "Worst MPI_Allreduce <by entry skew>"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, _ = os.Create(dir + "/inst1.svg")
	if err := InstanceSVG(f, inst, nil, "corrected only"); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestDemoReport(t *testing.T) {
	dir := os.Getenv("VIZ_DEMO_DIR")
	if dir == "" {
		t.Skip("set VIZ_DEMO_DIR")
	}
	rep := demoReport(t, true)
	f, _ := os.Create(dir + "/index.html")
	if err := WriteHTML(f, rep); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, _ = os.Create(dir + "/report.txt")
	if err := WriteImbalanceText(f, rep.Analysis); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

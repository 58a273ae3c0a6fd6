package viz

import (
	"bytes"
	"html"
	"math"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// The Gantt computes waits itself while streaming; on a synthetic run
// (Allreduce, Bcast, Allgather, Barrier, Alltoall on the world and on split
// communicators) every lane's hatched time must equal merge's per-rank
// wait total, which uses the same per-class semantics.
func TestGantt_WaitsMatchMergeOnSynthRun(t *testing.T) {
	dir := t.TempDir()
	if _, err := synth.Generate(dir, synth.Config{Ranks: 8, Steps: 2000, Seed: 17, SplitGroups: 2}); err != nil {
		t.Fatal(err)
	}
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	p, err := merge.Prepare(run, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	start, end, ok := p.Window()
	if !ok || math.IsInf(end, 0) {
		t.Fatalf("window unknown: %v %v %v", start, end, ok)
	}
	g := NewGantt(GanttOptions{WorldSize: 8, Start: start - 1e6, End: end + 1e6, Width: 1600})
	p.AddSink(g)
	res, err := p.Run()
	if err != nil {
		t.Fatal(err)
	}
	g.resolve(math.Inf(1))
	for _, rs := range res.Analysis.Ranks {
		_, wait := g.laneShare(&g.lanes[rs.Rank], g.lo, g.hi)
		if d := math.Abs(wait - rs.TotalWait); d > 1e-4*rs.TotalWait+1 {
			t.Errorf("rank %d: Gantt wait %.0f ns, merge %.0f ns", rs.Rank, wait, rs.TotalWait)
		}
	}
}

func TestExitDelaySVG_WellFormedAndNamesLatestRank(t *testing.T) {
	for _, c := range []struct {
		name string
		e    datamodel.ExitDelay
		want string
	}{
		{"barrier, rank 15 late", datamodel.ExitDelay{Op: "MPI_Barrier", Comm: 1, Instances: 50,
			Ranks: []int32{0, 1, 2, 15}, MeanNS: []float64{0, 1e3, 2e3, 40e3}, CI95NS: []float64{0, 100, 200, 900}}, "latest: rank 15"},
		{"thousands of members", datamodel.ExitDelay{Op: "MPI_Allreduce", Comm: 1, Instances: 3,
			Ranks: make([]int32, 4096), MeanNS: make([]float64, 4096), CI95NS: make([]float64, 4096)}, "latest: rank 0"},
		{"no instances", datamodel.ExitDelay{Op: "MPI_Barrier", Comm: 1}, "no complete instances"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svg := ExitDelaySVG(c.e, c.name+" <&>")
			root, text := wellFormed(t, []byte(svg))
			if root != "svg" {
				t.Fatalf("root %q", root)
			}
			if !strings.Contains(text, c.want) {
				t.Errorf("text lacks %q: %s", c.want, text)
			}
		})
	}
}

// The reports state the wait pattern of each op, print no latency for
// rooted ops, and show the merge fields the viewer needs: who made whom
// wait, the call sites of the worst instances, the exit-delay profiles.
func TestReports_ShowWaitPatternsAndMergeFields(t *testing.T) {
	var html, text bytes.Buffer
	if err := WriteHTML(&html, demoReport(t, false)); err != nil {
		t.Fatal(err)
	}
	if err := WriteImbalanceText(&text, demoAnalysis(false)); err != nil {
		t.Fatal(err)
	}
	_, htmlText := wellFormedHTMLText(html.String())
	for _, c := range []struct{ where, doc, want string }{
		{"html", htmlText, "late broadcast"},
		{"html", htmlText, "Latency (first exit − last enter) is given for N×N ops only"},
		{"html", htmlText, "2: 20.0 ms, 0: 15.0 ms, 7: 10.0 ms"},
		{"html", htmlText, "rank 0 "},
		{"html", htmlText, "hypre_solve (par_csr.c:120)"},
		{"html", htmlText, "Exit imbalance of synchronizing operations"},
		{"html", htmlText, "latest: rank 7"},
		{"text", text.String(), "late broadcast"},
		{"text", text.String(), "made wait most"},
		{"text", text.String(), "for N×N ops only"},
	} {
		if !strings.Contains(c.doc, c.want) {
			t.Errorf("%s report lacks %q", c.where, c.want)
		}
	}
	// MPI_Bcast's row: latency printed as "-".
	for _, line := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(line, "MPI_Bcast") && !strings.Contains(line, " - ") {
			t.Errorf("Bcast row shows a latency: %q", line)
		}
	}
}

// wellFormedHTMLText returns the report's text with tags removed and
// entities unescaped (good enough for substring checks).
func wellFormedHTMLText(doc string) (string, string) {
	var b strings.Builder
	in := false
	for _, r := range doc {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
			b.WriteByte(' ')
		case !in:
			b.WriteRune(r)
		}
	}
	return doc, html.UnescapeString(b.String())
}

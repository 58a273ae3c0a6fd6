package viz

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// TestGantt_MarksRootCausesAndTheCriticalPath: root-cause delays become
// orange bands on their rank's lane (adjacent ones merged), the critical
// path one red path through the lanes; the raw view draws neither.
func TestGantt_MarksRootCausesAndTheCriticalPath(t *testing.T) {
	for _, raw := range []bool{false, true} {
		g := NewGantt(GanttOptions{Width: 400, WorldSize: 3, Start: 0, End: 30000, Raw: raw})
		for r := int32(0); r < 3; r++ {
			ev := datamodel.GEvent{Rank: r, Op: trace.OpAllreduce, Enter: 10000, Exit: 12000, RawEnter: 10000, RawExit: 12000}
			if err := g.Add(&ev); err != nil {
				t.Fatal(err)
			}
		}
		g.SetMarks([]datamodel.Mark{
			{Kind: datamodel.MarkRootCause, Rank: 2, Start: 1000, End: 9000, Label: "root cause 1: a → b"},
			{Kind: datamodel.MarkRootCause, Rank: 2, Start: 13000, End: 20000, Label: "root cause 1: a → b"},
			{Kind: datamodel.MarkCriticalPath, Rank: 2, Start: 0, End: 10000, Label: "critical path"},
			{Kind: datamodel.MarkCriticalPath, Rank: 0, Start: 10000, End: 30000, Label: "critical path"},
		})
		var buf bytes.Buffer
		if err := g.WriteSVG(&buf); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		bands := strings.Count(svg, "<title>root cause 1: a → b</title>")
		paths := strings.Count(svg, `class="critpath"`)
		if raw {
			if bands != 0 || paths != 0 {
				t.Errorf("raw view: %d bands, %d paths drawn", bands, paths)
			}
			continue
		}
		if bands != 2 || paths != 1 {
			t.Errorf("%d root-cause bands (want 2), %d critical paths (want 1)", bands, paths)
		}
		if !strings.Contains(svg, "Red line: the critical path") || !strings.Contains(svg, "Orange bands") {
			t.Error("the chart's note does not explain the marks")
		}
	}
}

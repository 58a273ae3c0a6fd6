package viz

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
)

// TestInstanceSVG_ManyMembersDrawnByRepresentatives: an instance of 16,384
// members draws at most MaxInstanceRows rows, keeps the last arriver, says
// what it shows and stays small.
func TestInstanceSVG_ManyMembersDrawnByRepresentatives(t *testing.T) {
	inst, raw := demoInstances(16384)
	var buf bytes.Buffer
	if err := InstanceSVG(&buf, inst, &raw, "big"); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	wellFormed(t, buf.Bytes())
	if !strings.Contains(svg, "of 16384 members shown") {
		t.Errorf("the view does not say that it shows representatives")
	}
	if !strings.Contains(svg, "<title>rank 16383 ·") { // the last arriver's row
		t.Errorf("the last arriver (rank 16383) is not drawn")
	}
	t.Logf("16384 members: SVG %d bytes", len(svg))
	if len(svg) > 1_500_000 {
		t.Errorf("SVG %d bytes for one instance", len(svg))
	}
	small, smallRaw := demoInstances(64)
	buf.Reset()
	if err := InstanceSVG(&buf, small, &smallRaw, "small"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "members shown") {
		t.Errorf("a 64-member instance is reduced")
	}
}

// TestWriteHTML_ManyRanksListsTheTopRanks: with more than MaxRankRows ranks
// the rank table lists the ranks that wait and make others wait most, and
// says so.
func TestWriteHTML_ManyRanksListsTheTopRanks(t *testing.T) {
	a := demoAnalysis(false)
	a.Ranks = nil
	a.WorldSize = 4096
	for r := 0; r < 4096; r++ {
		a.Ranks = append(a.Ranks, datamodel.RankSummary{Rank: int32(r), Host: "n" + strconv.Itoa(r/64), Events: 10,
			TimeInMPI: 1e6, TotalWait: float64(r), TotalLateness: float64((r * 7919) % 4096)})
	}
	page := htmlReport(t, Report{Analysis: a})
	if !regexp.MustCompile(`(1\d\d|200) of 4096 ranks listed`).MatchString(page) {
		t.Errorf("no note on the shortened rank table")
	}
	// rank 4095 waits most: listed; rank 0 waits least and is not a top cause
	if !strings.Contains(page, "<tr><td>4095</td>") {
		t.Errorf("the rank that waits most is not listed")
	}
	if strings.Contains(page, "<tr><td>1</td><td class=\"l\">n0</td>") {
		t.Errorf("rank 1 (waits little, makes nobody wait) is listed")
	}
}

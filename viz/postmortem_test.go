package viz

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
)

func TestPostMortem_SectionAtTheTopOfTextAndHTMLOnlyWhenNotClean(t *testing.T) {
	pm := &datamodel.PostMortem{
		First:     &datamodel.RankEnd{Rank: 2, How: datamodel.EndFatal, Signal: 11, SignalName: "SIGSEGV", TimeS: 0.31, Text: "SIGSEGV at address 0x0"},
		Ends:      []datamodel.RankEnd{{Rank: 2, How: datamodel.EndFatal, TimeS: 0.31, Text: "SIGSEGV at address 0x0"}},
		EndGroups: []datamodel.EndGroup{{How: datamodel.EndFatal, Text: "SIGSEGV", Ranks: []int{2}, FirstS: 0.31, LastS: 0.31}},
		InFlight: []datamodel.FlightGroup{{Op: "MPI_Allreduce", Ranks: []int{0, 1, 3},
			Text: "ranks 0-1, 3: inside MPI_Allreduce on world, instance 7, entered 0.300 s"}},
	}
	for _, tc := range []struct {
		name string
		pm   *datamodel.PostMortem
		want bool
	}{
		{"crashed run", pm, true},
		{"clean run", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &datamodel.Analysis{JobID: "j", WorldSize: 4, PostMortem: tc.pm}
			var txt, html bytes.Buffer
			if err := WriteImbalanceText(&txt, a); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTML(&html, Report{Analysis: a}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(txt.String(), "\n")
			gotTxt := len(lines) > 2 && strings.Contains(lines[2], "POST-MORTEM") &&
				strings.Contains(txt.String(), "first to end: rank 2 at 0.310 s: SIGSEGV") &&
				strings.Contains(txt.String(), "ranks 0-1, 3: inside MPI_Allreduce on world, instance 7")
			gotHTML := strings.Contains(html.String(), `id="postmortem"`) && strings.Contains(html.String(), "first to end: rank 2")
			if gotTxt != tc.want || gotHTML != tc.want {
				t.Errorf("section in text %v, in HTML %v, want %v:\n%s", gotTxt, gotHTML, tc.want, strings.Join(lines[:min(14, len(lines))], "\n"))
			}
			if !tc.want && strings.Contains(txt.String()+html.String(), "POST-MORTEM") {
				t.Errorf("a clean run got a post-mortem")
			}
		})
	}
}

package rundir

import (
	"math"
	"reflect"
	"testing"
)

// TestNoteLines_OneLinePerKindForManyRanks: notes of one kind from several
// ranks are said once, naming the ranks and summing what they count; a
// kind of one rank keeps that rank's words; free text stays per rank.
func TestNoteLines_OneLinePerKindForManyRanks(t *testing.T) {
	nf := func(r int) RankNote { return RankNote{kind: noteNoFooter, Rank: r, Text: "nf " + string(rune('0'+r))} }
	ab := func(r int, n int64, last float64) RankNote {
		return RankNote{kind: noteAbnormal, Rank: r, n: n, last: last, Text: "ab"}
	}
	scattered := make([]RankNote, 40)
	for i := range scattered {
		scattered[i] = RankNote{kind: noteNoEpoch, Rank: 3 * i, Text: "ne"}
	}
	for _, c := range []struct {
		name  string
		notes []RankNote
		want  []string
	}{
		{"one rank keeps its words", []RankNote{nf(3)}, []string{"nf 3"}},
		{"a job killed without sidecars", []RankNote{nf(0), nf(1), {Rank: 1, Text: "damage of 1"}, nf(5)},
			[]string{"3 ranks (0-1, 5): no footer: they did not finish cleanly (no live sidecar: events after their last flush are lost)", "damage of 1"}},
		{"a job killed with sidecars", []RankNote{ab(0, 10, 12.5), ab(1, 20, math.NaN()), ab(2, 30, 12.25)},
			[]string{"3 ranks (0-2) ended abnormally (no footer): 60 events recovered from their live sidecars, the last recorded calls ending 12.250 to 12.500 s after their MPI_Init"}},
		{"dropped", []RankNote{{kind: noteDropped, Rank: 4, n: 7}, {kind: noteDropped, Rank: 6, n: 2}},
			[]string{"2 ranks (4, 6): the recorder dropped 9 events (buffer exhaustion; 2 to 7 per rank)"}},
		{"ranges past 16", scattered,
			[]string{"40 ranks (0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45 and 24 more ranges): no sync epoch: their times are not corrected (raw)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := noteLines(c.notes); !reflect.DeepEqual(got, c.want) {
				t.Errorf("noteLines:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestSameTextLines_RanksOfOneNoteTogether: the clock model fallbacks of a
// run whose ranks all lack their last epoch are one line.
func TestSameTextLines_RanksOfOneNoteTogether(t *testing.T) {
	notes := []RankNote{{Rank: 0, Text: "only epoch 0"}, {Rank: 1, Text: "only epoch 0"}, {Rank: 2, Text: "no sync epoch"}, {Rank: 3, Text: "only epoch 0"}}
	want := []string{"3 ranks (0-1, 3): only epoch 0", "rank 2: no sync epoch"}
	if got := SameTextLines(notes); !reflect.DeepEqual(got, want) {
		t.Errorf("SameTextLines:\n got %q\nwant %q", got, want)
	}
}

package correct

import (
	"testing"

	"github.com/gclock/gclock/trace"
)

// TestReferenceStart_MapsALaterRanksStartByItsModel: rank 0's start and
// any start in raw mode are the reference as they are; another rank's is
// moved by its clock model's offset (rounded to ns), and stays as it is
// when its file has no epoch to give a model.
func TestReferenceStart_MapsALaterRanksStartByItsModel(t *testing.T) {
	const start = 5_000_000_000
	ep := []trace.Epoch{{Index: 0, StartNS: 1e9, EndNS: 1.1e9, Model: trace.Model{Intercept: 1500.4}}}
	for _, tc := range []struct {
		name   string
		mode   ClockMode
		rank   int
		epochs []trace.Epoch
		want   int64
	}{
		{"rank 0 is the reference", ClockInit, 0, ep, start},
		{"raw mode moves nothing", ClockRaw, 3, ep, start},
		{"rank 3 by its model", ClockInit, 3, ep, start - 1500},
		{"rank 3 without epochs", ClockInit, 3, nil, start},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReferenceStart(tc.mode, tc.rank, start, tc.epochs); got != tc.want {
				t.Errorf("ReferenceStart = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestRawShift_OnlyTimebasesSecondsApart: a rank whose start is more than
// a second from the reference start is shifted onto it; a closer one, or
// one without a start (or a run without a reference), is not.
func TestRawShift_OnlyTimebasesSecondsApart(t *testing.T) {
	const ref = 50_000_000_000
	for _, tc := range []struct {
		name  string
		ref   int64
		start int64
		want  float64
	}{
		{"seconds later", ref, ref + 3e9, -3e9},
		{"seconds earlier", ref, ref - 1e9 - 1, 1e9 + 1},
		{"one second exactly", ref, ref - 1e9, 0},
		{"microseconds apart", ref, ref + 5000, 0},
		{"no start", ref, 0, 0},
		{"no reference", 0, ref, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RawShift(tc.ref, tc.start); got != tc.want {
				t.Errorf("RawShift(%d, %d) = %g, want %g", tc.ref, tc.start, got, tc.want)
			}
		})
	}
}

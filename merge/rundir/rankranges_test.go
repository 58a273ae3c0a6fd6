package rundir

import (
	"testing"
)

func TestRankRanges_CollapsesConsecutiveRuns(t *testing.T) {
	for _, c := range []struct {
		in   []int
		sep  string
		want string
	}{
		{nil, ", ", ""},
		{[]int{4}, ", ", "4"},
		{[]int{3, 5, 6, 7, 12}, ", ", "3, 5-7, 12"},
		{[]int{0, 1, 2, 3}, ",", "0-3"},
		{[]int{1, 3, 5}, ",", "1,3,5"},
	} {
		if got := RankRanges(c.in, c.sep); got != c.want {
			t.Errorf("RankRanges(%v, %q) = %q, want %q", c.in, c.sep, got, c.want)
		}
	}
	if got := RankRanges([]int32{0, 1, 7}, ","); got != "0-1,7" {
		t.Errorf("int32: got %q", got)
	}
}

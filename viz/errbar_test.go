package viz

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// TestCSV_ErrorBarColumnsCarryTheClockError: the last two columns of
// events.csv are the estimated clock error of the enter and exit time
// (one decimal), empty where it is unknown or no estimate was set; the
// JSON Perfetto export carries the same in args.
func TestCSV_ErrorBarColumnsCarryTheClockError(t *testing.T) {
	evs := []datamodel.GEvent{
		{Rank: 0, Op: trace.OpBarrier, Root: -1, LocalEnter: 10, LocalExit: 20},
		{Rank: 1, Op: trace.OpBarrier, Root: -1, LocalEnter: 10, LocalExit: 20},
		{Rank: 2, Op: trace.OpBarrier, Root: -1, LocalEnter: 10, LocalExit: 20},
	}
	bar := func(rank int32, local int64) float64 {
		switch rank {
		case 0:
			return 0
		case 1:
			return float64(local) + 0.25
		}
		return -1
	}
	for _, tc := range []struct {
		name string
		fn   ErrorBarFunc
		want [][2]string
	}{
		{"estimate", bar, [][2]string{{"0.0", "0.0"}, {"10.2", "20.2"}, {"", ""}}},
		{"none", nil, [][2]string{{"", ""}, {"", ""}, {"", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			c := NewCSV(&b, nil)
			c.SetErrorBar(tc.fn)
			for i := range evs {
				if err := c.Add(&evs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			h := recs[0]
			if h[len(h)-2] != "enter_err_ns" || h[len(h)-1] != "exit_err_ns" {
				t.Fatalf("header %v: want enter_err_ns, exit_err_ns at the end", h)
			}
			for i, w := range tc.want {
				r := recs[i+1]
				if got := [2]string{r[len(r)-2], r[len(r)-1]}; got != w {
					t.Errorf("row %d: err columns %q, want %q", i, got, w)
				}
			}
			var js bytes.Buffer
			p := NewPerfetto(&js, nil, PerfettoErrorBar(tc.fn))
			for i := range evs {
				if err := p.Add(&evs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(js.String(), `"enter_err_ns":10.2,"exit_err_ns":20.2`); (tc.fn != nil) != (got == 1) {
				t.Errorf("trace.json has the error args %d times:\n%s", got, js.String())
			}
		})
	}
}

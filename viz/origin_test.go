package viz

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// Global times are float64 ns relative to the run origin; the CSV prints
// the absolute rank-0 time exactly, even for a CLOCK_REALTIME origin where
// a float64 of the absolute value resolves only 256 ns.
func TestCSV_AbsoluteTimesExactWithRealtimeOrigin(t *testing.T) {
	const origin = 1_800_000_000_123_456_789
	for _, c := range []struct {
		name string
		rel  float64
		want string
	}{
		{"integer ns", 1001, "1800000000123457790"},
		{"quarter ns", 123.25, "1800000000123456912.25"},
		{"before the origin", -0.5, "1800000000123456788.5"},
		{"zero", 0, "1800000000123456789"},
		{"fraction rounded to ps", 2.0000001, "1800000000123456791"},
		{"fraction below the origin", -1234.5678, "1800000000123455554.432"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewCSV(&b, nil)
			w.SetOrigin(origin)
			ev := datamodel.GEvent{Op: trace.OpBarrier, Enter: c.rel, Exit: c.rel}
			if err := w.Add(&ev); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if got := recs[1][9]; got != c.want {
				t.Errorf("global_enter_ns = %s, want %s", got, c.want)
			}
		})
	}
}

func TestGantt_AxisOriginPrintsExactAbsoluteSeconds(t *testing.T) {
	for _, c := range []struct {
		origin int64
		rel    float64
		want   string
	}{
		{1_800_000_000_123_456_789, 211, "1800000000.123457000"},
		{0, 2.5e9, "2.500000000"},
		{5, -10, "-0.000000005"},
	} {
		if got := absSeconds(c.origin, c.rel); got != c.want {
			t.Errorf("absSeconds(%d, %g) = %s, want %s", c.origin, c.rel, got, c.want)
		}
	}
}

// The same pc names different call sites on ranks with different load
// bases: the CSV and Perfetto exports ask the per-rank resolver and cache
// per (rank, pc).
func TestExports_ResolveCallSitesPerRank(t *testing.T) {
	res := func(rank int32, pc uint64) string { return fmt.Sprintf("site-of-rank-%d-%#x", rank, pc) }
	evs := []datamodel.GEvent{{Rank: 0, Op: trace.OpBarrier, Callsite: 0x401040}, {Rank: 1, Op: trace.OpBarrier, Callsite: 0x401040}}
	var b bytes.Buffer
	w := NewCSV(&b, func(uint64) string { return "pc-only" })
	w.SetRankResolve(res)
	var pb bytes.Buffer
	p := NewPerfetto(&pb, nil, PerfettoRankResolve(res))
	for i := range evs {
		if err := w.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
		if err := p.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	p.Close()
	recs, _ := csv.NewReader(&b).ReadAll()
	for i, ev := range evs {
		want := res(ev.Rank, ev.Callsite)
		if recs[i+1][11] != want {
			t.Errorf("CSV rank %d: callsite %q, want %q", ev.Rank, recs[i+1][11], want)
		}
		if !bytes.Contains(pb.Bytes(), []byte(want)) {
			t.Errorf("Perfetto lacks %q", want)
		}
	}
}

// Every op that can appear in a chart has its own colour: two ops sharing
// one would make the Gantt's dominant-op colouring ambiguous.
func TestOpColor_DistinctForRecordedOps(t *testing.T) {
	seen := map[string]trace.Op{}
	for _, op := range trace.Ops() {
		if op.IsNonblockingCollective() || (op >= trace.OpSendInit && op <= trace.OpRequestFree) ||
			op == trace.OpTestall || op == trace.OpTestany || op == trace.OpTestsome ||
			op == trace.OpRsend || op == trace.OpBsend || op == trace.OpIrsend || op == trace.OpIbsend || op == trace.OpSendrecvReplace {
			continue // drawn rarely or sharing a family colour on purpose
		}
		c := opColor(op)
		if o, dup := seen[c]; dup {
			t.Errorf("%s and %s share colour %s", o, op, c)
		}
		seen[c] = op
	}
}

// Global times are relative to the run origin, so the first events of a
// run may lie before 0; that is not "out of global order".
func TestGantt_NegativeTimesAreInOrder(t *testing.T) {
	g := NewGantt(GanttOptions{WorldSize: 2})
	feed(t, g, []datamodel.GEvent{
		{Rank: 0, Op: trace.OpBarrier, CommID: 1, Root: -1, Enter: -5000, Exit: -1000},
		{Rank: 1, Op: trace.OpBarrier, CommID: 1, Root: -1, CommRank: 1, Enter: -2000, Exit: -1000},
	})
	if g.outOfOrder != 0 {
		t.Errorf("%d events counted out of order", g.outOfOrder)
	}
}

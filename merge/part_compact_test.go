package merge

import (
	"errors"
	"math"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// TestCompactEvents_RoundTripAndBadInput: events in compact form
// (part_compact.go) come back with every field the fed root-cause stream
// reads, whole events byte for byte; a message cut anywhere or with an
// unknown form is an error, never a panic.
func TestCompactEvents_RoundTripAndBadInput(t *testing.T) {
	pl := &partPlan{}
	pl.full[trace.OpWinPost>>6] |= 1 << (trace.OpWinPost & 63) // PSCW travels whole
	evs := []datamodel.GEvent{
		{Rank: 3, Op: trace.OpIsend, Enter: 12.5, Exit: 13.25, Callsite: 0x7f0012345678, Seq: 0, Peer: 4, Tag: 9, Req: 2, CommID: 77},
		{Rank: 1023, Op: trace.OpWaitall, Enter: math.Nextafter(1e9, 2e9), Exit: 1e9 + 3, Callsite: 1, Seq: 2},
		{Rank: 0, Op: trace.OpAllreduce, Enter: -5, Exit: math.Inf(1), Callsite: math.MaxUint64, Seq: math.MaxUint32,
			CommID: 1<<63 + 5, CommRank: 17, Root: -1, Sent: 8, Recv: 8},
		{Rank: 2, Op: trace.OpBcast, Enter: math.NaN(), Exit: 0, CommID: 9, CommRank: 0, Root: 3, Sent: 1 << 40},
		{Rank: 5, Op: trace.OpWinPost, Enter: 1, Exit: 2, Peer: 6, Tag: 1, CommID: 3, CommRank: 2, Root: -1, LocalEnter: 11, Site: 4},
	}
	b := pl.appendCompact(nil, evs)
	got, err := decodeCompact(b, nil)
	if err != nil || len(got) != len(evs) {
		t.Fatalf("decoded %d events (%v), want %d", len(got), err, len(evs))
	}
	for i, e := range evs {
		g := got[i]
		want := e
		if !pl.whole(e.Op) {
			// what the compact form carries; the rest unset
			want = datamodel.GEvent{Rank: e.Rank, Op: e.Op, Enter: e.Enter, Exit: e.Exit, Callsite: e.Callsite, Seq: e.Seq,
				CommRank: -1, Root: -1, CommIdx: -1, Site: -1}
			if compactColl(e.Op) {
				want.CommID, want.CommRank, want.Root, want.Sent, want.Recv = e.CommID, e.CommRank, e.Root, e.Sent, e.Recv
			}
		}
		same := math.Float64bits(g.Enter) == math.Float64bits(want.Enter) && math.Float64bits(g.Exit) == math.Float64bits(want.Exit)
		g.Enter, g.Exit, want.Enter, want.Exit = 0, 0, 0, 0
		if !same || g != want {
			t.Errorf("event %d (%v): got %+v, want %+v", i, e.Op, got[i], want)
		}
	}
	if n := len(b) - (1 + evSize); n > 4*45 { // the four compact ones
		t.Errorf("4 events in %d bytes: not compact", n)
	}
	// a cut between events decodes the events before it; anywhere else
	// it is an error
	at := map[int]int{}
	for k := 0; k <= len(evs); k++ {
		at[len(pl.appendCompact(nil, evs[:k]))] = k
	}
	for cut := 0; cut < len(b); cut++ {
		out, err := decodeCompact(b[:cut], nil)
		if k, ok := at[cut]; ok != (err == nil) || ok && len(out) != k {
			t.Fatalf("a message cut at %d of %d bytes: %d events, %v (an event boundary: %v)", cut, len(b), len(out), err, ok)
		}
	}
	bad := append([]byte(nil), b...)
	bad[0] = 9
	if _, err := decodeCompact(bad, nil); !errors.Is(err, errCompact) {
		t.Errorf("unknown form: %v, want errCompact", err)
	}
}

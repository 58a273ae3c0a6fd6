package trace

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// haloCallEvents returns steps of a halo exchange as the recorder writes
// them: two MPI_Irecv, two MPI_Isend, MPI_Waitall's four completion
// records (seq 0..3, each with its request's peer, tag, bytes and id, all
// four with the call's enter and exit times) and an MPI_Allreduce.
func haloCallEvents(steps int) []Event {
	var evs []Event
	t0 := int64(5e9)
	for step := 0; step < steps; step++ {
		r := uint32(4*step + 1)
		j := int64(step%7) * 13 // jitter
		call := func(op Op, seq uint32, peer, tag int32, req uint32, sent, recv uint64, dur int64) {
			evs = append(evs, Event{Op: op, Comm: 0, Seq: seq, Root: -1, Peer: peer, Tag: tag, Req: req,
				Sent: sent, Recv: recv, Callsite: 0x400000 + uint64(op)<<4 + uint64(seq), EnterNS: t0, ExitNS: t0 + dur})
		}
		next := func(dur int64) { t0 += dur + 200 + j }
		call(OpIrecv, 0, 1, 1, r, 0, 0, 150+j)
		next(150 + j)
		call(OpIrecv, 0, 3, 2, r+1, 0, 0, 140)
		next(140)
		call(OpIsend, 0, 3, 1, r+2, 64, 0, 300+j)
		next(300 + j)
		call(OpIsend, 0, 1, 2, r+3, 64, 0, 280)
		next(280)
		for k := uint32(0); k < 4; k++ {
			peer, tag := int32(1+2*(k%2)), int32(k%2+1)
			var sent, recv uint64
			if k < 2 {
				recv = 64
			} else {
				sent = 64
			}
			call(OpWaitall, k, peer, tag, r+k, sent, recv, 2000+9*j)
		}
		next(2000 + 9*j)
		call(OpAllreduce, uint32(step), -1, 0, 0, 8, 8, 900+j)
		next(900 + j)
	}
	return evs
}

// TestLayout4_SameTimesHoldNoTimingValues: in a halo exchange's chunk
// exactly the MPI_Waitall records after the call's first carry twSame,
// with no timing values (the enter and dur columns are shorter than
// layout 3's by their values exactly), and both layouts decode to the
// same events with either codec.
func TestLayout4_SameTimesHoldNoTimingValues(t *testing.T) {
	evs := haloCallEvents(300)
	var c4 chunkEncoder
	c3 := chunkEncoder{layout: layout3}
	cols4, cols3 := c4.columns(evs), c3.columns(evs)
	same, saved := 0, 0
	for i, w := range cols4.TW {
		want := evs[i].Op == OpWaitall && evs[i].Seq > 0
		if got := w&twSame != 0; got != want {
			t.Fatalf("event %d (%v seq %d): twSame %v, want %v", i, evs[i].Op, evs[i].Seq, got, want)
		}
		if want {
			same++
			if w&^(twSame|twSeq) != 0 {
				t.Fatalf("event %d: widths byte 0x%02x with twSame, want no width bits", i, w)
			}
			saved += int(cols3.TW[i]&7) + 1 + int(cols3.TW[i]>>4&7) + 1
		} else if w != cols3.TW[i] {
			t.Fatalf("event %d: widths byte 0x%02x, layout 3's 0x%02x", i, w, cols3.TW[i])
		}
	}
	if same != 3*300 {
		t.Fatalf("%d events with twSame, want %d", same, 3*300)
	}
	if got, want := len(cols4.Enter)+len(cols4.Dur), len(cols3.Enter)+len(cols3.Dur)-saved; got != want {
		t.Fatalf("timing columns: %d bytes, want %d (layout 3's less the shared events' values)", got, want)
	}
	enc, err := sharedEncoder(DefaultCompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
	for _, ce := range []*chunkEncoder{&c4, &c3} {
		for _, tc := range []struct {
			name  string
			enc   bool
			flags uint8
		}{{"zstd", true, flagZstd}, {"s2+tail", false, flagS2 | flagTail}} {
			e := enc
			if !tc.enc {
				e = nil
			}
			payload, err := ce.encode(nil, evs, e)
			if err != nil {
				t.Fatal(err)
			}
			var cd chunkDecoder
			got, err := cd.decode(nil, payload, tc.flags)
			if err != nil || !reflect.DeepEqual(got, evs) {
				t.Fatalf("layout %d %s: err %v, same events %v", ce.written(), tc.name, err, reflect.DeepEqual(got, evs))
			}
			if cd.p.Layout != ce.written() {
				t.Fatalf("chunk says layout %d, want %d", cd.p.Layout, ce.written())
			}
			// in pieces of 7 events: the shared times cross the pieces
			if err := cd.start(payload, tc.flags); err != nil {
				t.Fatal(err)
			}
			var pieces []Event
			for cd.streaming {
				if pieces, err = cd.more(pieces, 7); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(pieces, evs) {
				t.Fatalf("layout %d %s: events read in pieces differ", ce.written(), tc.name)
			}
		}
	}
}

// TestLayout4_BadSameFlagsAreRefusedByName: a layout-4 chunk whose twSame
// bits and timing columns do not fit together, and a layout-3 chunk with
// bit 7 set, are refused whole, read at once or in pieces, with a
// message naming the column; nothing panics.
func TestLayout4_BadSameFlagsAreRefusedByName(t *testing.T) {
	evs := haloCallEvents(5)
	firstSame := func(tw []byte) int {
		for i, w := range tw {
			if w&twSame != 0 {
				return i
			}
		}
		panic("test data: no event with twSame")
	}
	enc, err := sharedEncoder(DefaultCompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		layout uint8
		edit   func(p *chunkPayload)
		want   string
	}{
		{"first event shares", chunkLayout, func(p *chunkPayload) { p.TW[0] = twSame }, "column tw: event 0 has the times of an event before it"},
		{"shared with widths", chunkLayout, func(p *chunkPayload) { p.TW[firstSame(p.TW)] |= 0x11 }, "widths with the times of the event before it"},
		{"shared flag dropped", chunkLayout, func(p *chunkPayload) { p.TW[firstSame(p.TW)] &^= twSame }, "column enter"},
		{"shared flag on an event with values", chunkLayout, func(p *chunkPayload) { p.TW[2] = twSame }, "column enter"},
		{"bit 7 in layout 3", layout3, func(p *chunkPayload) { p.TW[6] |= twSame }, "column tw: event 6: reserved bit 7 set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ce := chunkEncoder{layout: tc.layout}
			cols := ce.columns(evs)
			p := chunkPayload{Layout: tc.layout, N: cols.N, Seq: cols.Seq, Sites: cols.Sites, Req: cols.Req,
				Tmpl: cols.Tmpl, Templates: cols.Templates,
				Enter: bytes.Clone(cols.Enter), Dur: bytes.Clone(cols.Dur), TW: bytes.Clone(cols.TW)}
			tc.edit(&p)
			raw, err := marshalAppend(nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			payload := enc.EncodeAll(raw, nil)
			var cd chunkDecoder
			if _, err := cd.decode(nil, payload, flagZstd); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decode: err = %v, want one containing %q", err, tc.want)
			}
			if err := cd.start(payload, flagZstd); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("start (pieces): err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

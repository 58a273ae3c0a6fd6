package trace

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

// widthEdgeEvents returns events whose compute gaps and durations, zigzag
// coded, sit at both sides of every byte width's edge (2^(8k) - 1 and
// 2^(8k)), negative ones included, and the int64 extremes.
func widthEdgeEvents() []Event {
	var vals []int64
	for k := 1; k < 8; k++ {
		edge := uint64(1) << (8 * k)
		for _, z := range []uint64{edge - 1, edge} {
			vals = append(vals, int64(z>>1)^-int64(z&1)) // un-zigzag: the value whose code is z
		}
	}
	vals = append(vals, 0, 1, -1, math.MaxInt64, math.MinInt64)
	var evs []Event
	t := int64(1000)
	for i, gap := range vals {
		dur := vals[(i+3)%len(vals)]
		e := Event{Op: OpBarrier, Comm: 1, Seq: uint32(i), Root: -1, Callsite: 0x401000}
		e.EnterNS = t + gap // wraps like the recorder's int64 differences
		e.ExitNS = e.EnterNS + dur
		t = e.ExitNS
		evs = append(evs, e)
	}
	return evs
}

// TestLayout3_TimingValuesAtEveryWidthEdgeRoundTrip: gaps and durations of
// every width from 1 to 8 bytes, at the edges, come back exactly with
// either codec, and the widths column holds every width code.
func TestLayout3_TimingValuesAtEveryWidthEdgeRoundTrip(t *testing.T) {
	evs := widthEdgeEvents()
	var ce chunkEncoder
	cols := ce.columns(evs)
	seen := map[byte]bool{}
	for _, w := range cols.TW {
		seen[w&15], seen[w>>4] = true, true
	}
	for w := byte(0); w < 8; w++ {
		if !seen[w] {
			t.Errorf("no timing value of %d bytes in the test data (widths column % x)", w+1, cols.TW)
		}
	}
	if len(cols.TW) != len(evs) {
		t.Fatalf("widths column of %d bytes for %d events", len(cols.TW), len(evs))
	}
	enc, err := sharedEncoder(DefaultCompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, evs) {
			for i := range evs {
				if i < len(got) && got[i] != evs[i] {
					t.Fatalf("%s: event %d: got %+v, want %+v", tc.name, i, got[i], evs[i])
				}
			}
			t.Fatalf("%s: %d events back, want %d", tc.name, len(got), len(evs))
		}
	}
}

// TestLayout3_BadTimingColumnsAreRefusedByName: a layout-3 chunk whose
// widths and timing columns do not fit together is refused whole, read
// at once or in pieces, with a message naming the column; nothing
// panics.
func TestLayout3_BadTimingColumnsAreRefusedByName(t *testing.T) {
	evs := amgEvents(10, 5)
	evs[3].Seq += 5 // a seq difference other than 0: a flagged event
	enc, err := sharedEncoder(DefaultCompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(p *chunkPayload)
		short bool // pack 17 elements, without tw
		want  string
	}{
		{"widths column one short", func(p *chunkPayload) { p.TW = p.TW[:9] }, false, "column tw: 9 bytes for 10 events"},
		{"widths column missing", func(p *chunkPayload) { p.TW = nil }, false, "column tw: 0 bytes for 10 events"},
		{"enter column one byte short", func(p *chunkPayload) { p.Enter = p.Enter[:len(p.Enter)-1] }, false, "column enter: value 9:"},
		{"dur column one byte long", func(p *chunkPayload) { p.Dur = append(p.Dur, 0) }, false, "column dur: 1 trailing bytes"},
		{"a wider width than written", func(p *chunkPayload) { p.TW[narrowEnter(p.TW)]++ }, false, "column enter"},
		{"17 elements", func(p *chunkPayload) {}, true, "layout 3 chunk array has 17 elements, want at least 18"},
		{"reserved bit 7", func(p *chunkPayload) { p.TW[6] |= 0x80 }, false, "column tw: event 6: reserved bit 7 set"},
		{"a seq flag without its value", func(p *chunkPayload) { p.TW[firstUnflagged(p.TW)] |= twSeq }, false, "column seq"},
		{"a seq value without its flag", func(p *chunkPayload) { p.TW[firstFlagged(p.TW)] &^= twSeq }, false, "column seq"},
		{"seq flags and no seq column", func(p *chunkPayload) { p.Seq = nil }, false, "column seq: value 0: the column holds no more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ce := chunkEncoder{layout: layout3}
			cols := ce.columns(evs)
			p := chunkPayload{Layout: layout3, N: cols.N, Seq: cols.Seq, Sites: cols.Sites, Req: cols.Req,
				Tmpl: cols.Tmpl, Templates: cols.Templates,
				Enter: bytes.Clone(cols.Enter), Dur: bytes.Clone(cols.Dur), TW: bytes.Clone(cols.TW)}
			tc.edit(&p)
			raw, err := marshalAppend(nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			if tc.short { // drop the last element (tw): array16 count - 1, its bytes cut
				tw, err := marshalAppend(nil, p.TW)
				if err != nil {
					t.Fatal(err)
				}
				raw = append([]byte{0xdc, 0, chunkFields3 - 1}, raw[3:len(raw)-len(tw)]...)
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

func firstFlagged(tw []byte) int {
	for i, w := range tw {
		if w&twSeq != 0 {
			return i
		}
	}
	panic("test data: no event with a seq difference")
}

func firstUnflagged(tw []byte) int {
	for i, w := range tw {
		if w&twSeq == 0 {
			return i
		}
	}
	panic("test data: every event has a seq difference")
}

// TestLayout3_SeqDifferencesOnlyWhereFlagged: a regular stream writes no
// seq column at all; the events whose seq is not the one expected are
// the flagged ones, and only their differences are stored.
func TestLayout3_SeqDifferencesOnlyWhereFlagged(t *testing.T) {
	regular := amgEvents(4096, 9)
	var ce chunkEncoder
	cols := ce.columns(regular)
	flagged := 0
	for _, w := range cols.TW {
		flagged += int(w>>3) & 1
	}
	// The AMG-like pattern's first event on each comm carries its seq
	// (the first occurrence stores Seq itself); after that, none.
	if flagged > 4 || len(cols.Seq) > 4*10 {
		t.Errorf("regular stream: %d flagged events, seq column of %d bytes; want a handful", flagged, len(cols.Seq))
	}
	// A halo step: two MPI_Irecv, two MPI_Isend, MPI_Waitall's four
	// records (seq 0..3, a template each) and an MPI_Allreduce on the
	// same communicator: the point-to-point records are predicted by
	// their templates, the collective by its communicator.
	var halo []Event
	t0 := int64(1e6)
	for step := 0; step < 500; step++ {
		add := func(op Op, seq uint32, tag int32, req uint32) {
			halo = append(halo, Event{Op: op, Comm: 0, Seq: seq, Root: -1, Peer: 1, Tag: tag, Req: req,
				Callsite: 0x400000 + uint64(op)<<4 + uint64(seq), EnterNS: t0, ExitNS: t0 + 300})
			t0 += 500
		}
		r := uint32(4*step + 1)
		add(OpIrecv, 0, 1, r)
		add(OpIrecv, 0, 2, r+1)
		add(OpIsend, 0, 2, r+2)
		add(OpIsend, 0, 1, r+3)
		for k := uint32(0); k < 4; k++ {
			add(OpWaitall, k, int32(k%2+1), r+k)
		}
		add(OpAllreduce, uint32(step), 0, 0)
	}
	// Only the first step's MPI_Waitall records 1..3 carry their seq (a
	// template's first seq is predicted 0).
	if cols := ce.columns(halo); !bytes.Equal(cols.Seq, []byte{2, 4, 6}) {
		t.Errorf("halo steps: seq column % x, want 02 04 06 (the first Waitall's records 1..3, zigzag)", cols.Seq)
	}
	jumpy := amgEvents(300, 9)
	for i := range jumpy {
		if i%7 == 3 {
			jumpy[i].Seq += 5
		}
	}
	cols = ce.columns(jumpy)
	flagged = 0
	for _, w := range cols.TW {
		flagged += int(w>>3) & 1
	}
	if flagged < 300/7 {
		t.Errorf("%d flagged events, want at least the %d with a jump", flagged, 300/7)
	}
	var cd chunkDecoder
	enc, err := sharedEncoder(DefaultCompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
	for _, evs := range [][]Event{regular, halo, jumpy} {
		payload, err := ce.encode(nil, evs, enc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cd.decode(nil, payload, flagZstd)
		if err != nil || !reflect.DeepEqual(got, evs) {
			t.Errorf("%d events: err %v, equal %v", len(evs), err, reflect.DeepEqual(got, evs))
		}
	}
}

// narrowEnter returns an event whose enter value is narrower than 8 bytes.
func narrowEnter(tw []byte) int {
	for i, w := range tw {
		if w&7 < 7 {
			return i
		}
	}
	panic("test data: every enter value 8 bytes wide")
}

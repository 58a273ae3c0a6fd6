package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gclock/gclock/trace"
)

// TestCColumns_SameBytesAsGoEncoder checks the recorder's C chunk encoder
// (cshim/encode.c) against trace.EncodeColumns, the reference the reader
// is tested with: same bytes in every column, same call-site table.
func TestCColumns_SameBytesAsGoEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	pick64 := func() int64 {
		switch rng.IntN(6) {
		case 0:
			return math.MaxInt64
		case 1:
			return math.MinInt64
		case 2:
			return 0
		case 3:
			return -1
		default:
			return rng.Int64()
		}
	}
	pick32 := func() int32 {
		switch rng.IntN(5) {
		case 0:
			return math.MaxInt32
		case 1:
			return math.MinInt32
		case 2:
			return int32(rng.IntN(8)) - 2
		default:
			return rng.Int32()
		}
	}
	random := func(n int) []trace.Event {
		evs := make([]trace.Event, n)
		for i := range evs {
			evs[i] = trace.Event{
				Op: trace.Op(rng.IntN(math.MaxUint16 + 1)), Comm: rng.Uint32(), Seq: rng.Uint32(),
				Root: pick32(), Sent: rng.Uint64(), Recv: uint64(pick64()),
				EnterNS: pick64(), ExitNS: pick64(), Callsite: rng.Uint64(),
				Peer: pick32(), Tag: pick32(), Req: rng.Uint32(),
			}
		}
		return evs
	}
	// A loop-like run: few call sites and communicators, rising times,
	// sparse columns all zero (stored empty).
	loop := func(n int, p2p bool) []trace.Event {
		evs := make([]trace.Event, n)
		seq := map[uint32]uint32{}
		t := int64(1_700_000_000_000_000_000)
		for i := range evs {
			c := uint32(i % 3)
			e := trace.Event{Op: trace.OpAllreduce, Comm: c, Seq: seq[c], Root: -1, Sent: 8, Recv: 8,
				EnterNS: t, ExitNS: t + 1500 + int64(rng.IntN(300)), Callsite: 0x401000 + uint64(i%5)*0x40}
			if p2p {
				e.Root, e.Peer, e.Tag, e.Req = 0, int32(i%4), 7, uint32(4096+i)
			} else {
				e.Root = 0
			}
			seq[c]++
			t = e.ExitNS + 900
			evs[i] = e
		}
		return evs
	}
	// Many distinct communicators and call sites (hash-table chains).
	wide := func(n int) []trace.Event {
		evs := loop(n, true)
		for i := range evs {
			evs[i].Comm = uint32(i * 7919)
			evs[i].Callsite = uint64(i) << 20
		}
		return evs
	}
	// Runs of one communicator and call site (the encoder skips its
	// tables within a run), of different lengths.
	runs := func(n int) []trace.Event {
		evs := loop(n, false)
		seq := map[uint32]uint32{}
		for i := range evs {
			c := uint32(i/7) % 3
			evs[i].Comm, evs[i].Seq = c, seq[c]
			seq[c]++
			evs[i].Callsite = 0x402000 + uint64(i/5%4)*0x10
		}
		return evs
	}
	// Request ids as a program has them: new ids rising through the uint32
	// wrap, completions repeating older ids, calls without a request.
	reqs := func(n int) []trace.Event {
		evs := loop(n, true)
		for i := range evs {
			switch {
			case i%3 == 2:
				evs[i].Req = 0
			case i%5 == 4 && i >= 7:
				evs[i].Req = evs[i-7].Req
			default:
				evs[i].Req = uint32(math.MaxUint32 - 100 + uint32(i/2))
			}
		}
		return evs
	}
	// Calls written as several records (trace.Op.Continues): a Waitall
	// completing three requests, the two halves of a Sendrecv, a
	// Win_post per group member, between single-record calls; 5 calls
	// per round of 10 records.
	multi := func(rounds int) []trace.Event {
		var evs []trace.Event
		for i := 0; i < rounds; i++ {
			add := func(op trace.Op, seq uint32) {
				evs = append(evs, trace.Event{Op: op, Seq: seq, EnterNS: int64(i), ExitNS: int64(i) + 5, Callsite: 0x401000})
			}
			add(trace.OpIsend, 0)
			for s := uint32(0); s < 3; s++ {
				add(trace.OpWaitall, s)
			}
			add(trace.OpSendrecv, 0)
			add(trace.OpSendrecv, 1)
			add(trace.OpAllreduce, uint32(i)) // a collective's seq counts instances
			for s := uint32(0); s < 3; s++ {
				add(trace.OpWinPost, s)
			}
		}
		return evs
	}
	// Every varint length in every column: values at and next to each
	// 7-bit boundary (1, 2, 3 ... 10 bytes; the encoder writes one and two
	// bytes without its loop) as gaps, durations, seq differences, request
	// differences, template indexes and template fields.
	var edges []uint64
	for b := 7; b < 64; b += 7 {
		edges = append(edges, 1<<b-1, 1<<b, 1<<b+1)
	}
	edges = append(edges, 0, 1, math.MaxUint64)
	varintEdges := func() []trace.Event {
		var evs []trace.Event
		t := int64(1 << 40)
		for i, v := range edges {
			for j, w := range edges {
				e := trace.Event{Op: trace.OpIsend, Comm: uint32(i % 3), Seq: uint32(w), Root: -1,
					Sent: v, Recv: w, EnterNS: t + int64(v>>1), ExitNS: t + int64(v>>1) + int64(w>>1),
					Callsite: uint64(j % 200), Peer: int32(v), Tag: int32(w >> 1), Req: uint32(v)}
				t = e.ExitNS
				evs = append(evs, e)
			}
		}
		return evs
	}
	// widthEdges: compute gaps and durations whose zigzag codes sit on
	// both sides of every byte width of layout 3's timing columns
	// (2^(8k) - 1 and 2^(8k)), and the int64 extremes.
	widthEdges := func() []trace.Event {
		var vals []int64
		for k := 1; k < 8; k++ {
			for _, z := range []uint64{1<<(8*k) - 1, 1 << (8 * k)} {
				vals = append(vals, int64(z>>1)^-int64(z&1))
			}
		}
		vals = append(vals, 0, -1, math.MaxInt64, math.MinInt64)
		var evs []trace.Event
		t := int64(1 << 40)
		for i, g := range vals {
			for j, d := range vals {
				e := trace.Event{Op: trace.OpBarrier, Comm: 1, Seq: uint32(i*len(vals) + j), Root: -1, Callsite: 0x401000}
				e.EnterNS = t + g
				e.ExitNS = e.EnterNS + d
				t = e.ExitNS
				evs = append(evs, e)
			}
		}
		return evs
	}
	cases := []struct {
		name  string
		evs   []trace.Event
		calls int // -1: whatever the Go encoder counts
	}{
		{"varint-length-edges", varintEdges(), -1},
		{"timing-width-edges", widthEdges(), -1},
		{"multi-record-calls", multi(500), 2500},
		{"runs", runs(5000), -1},
		{"requests", reqs(5000), -1},
		{"one", random(1), -1},
		{"random-1000", random(1000), -1},
		// over 16,384 templates: indices of three varint bytes (the C
		// split stores a template's index bytes made once, enc_put4)
		{"three-byte-template-indices", random(20000), -1},
		{"collective-loop", loop(5000, false), -1},
		{"p2p-loop", loop(5000, true), -1},
		{"distinct-comms-and-sites", wide(4096), -1},
		{"buffer-half", loop(32768, true), -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Twice: the second call reuses the workspace (stale table
			// entries of the first chunk must not leak in).
			for round := 0; round < 2; round++ {
				got, err := encodeWithC(tc.evs)
				if err != nil {
					t.Fatal(err)
				}
				want := trace.EncodeColumns(tc.evs)
				if got.N != want.N {
					t.Fatalf("N = %d, want %d", got.N, want.N)
				}
				if tc.name == "multi-record-calls" {
					// every record of a round has its times: all but the
					// round's first have layout 4's twSame (0x80)
					same := 0
					for _, w := range got.TW {
						same += int(w >> 7)
					}
					if same != 9*500 {
						t.Errorf("round %d: %d records with the times of the one before, want %d", round, same, 9*500)
					}
				}
				if got.Calls != want.Calls || tc.calls >= 0 && want.Calls != tc.calls {
					t.Errorf("round %d: C counts %d calls, Go %d, want %d (-1: as Go)", round, got.Calls, want.Calls, tc.calls)
				}
				cols := []struct {
					name      string
					got, want []byte
				}{
					{"tmpl", got.Tmpl, want.Tmpl}, {"templates", got.Templates, want.Templates},
					{"seq", got.Seq, want.Seq}, {"enter", got.Enter, want.Enter}, {"dur", got.Dur, want.Dur},
					{"req", got.Req, want.Req}, {"tw", got.TW, want.TW},
				}
				for _, c := range cols {
					if !bytes.Equal(c.got, c.want) || (c.got == nil) != (c.want == nil) {
						t.Errorf("round %d: column %s differs: C %d bytes (nil %v), Go %d bytes (nil %v)",
							round, c.name, len(c.got), c.got == nil, len(c.want), c.want == nil)
					}
				}
				if len(got.Sites) != len(want.Sites) {
					t.Fatalf("round %d: %d call sites, want %d", round, len(got.Sites), len(want.Sites))
				}
				for i := range got.Sites {
					if got.Sites[i] != want.Sites[i] {
						t.Fatalf("round %d: site %d = %#x, want %#x", round, i, got.Sites[i], want.Sites[i])
					}
				}
			}
		})
	}
}

// TestCColumns_IgnoresFlagsAndGeneration checks that a record's flags and
// generation (no part of the event; cshim/encode.c compares templates as
// masked 16-byte lanes next to them) change no byte of the columns.
func TestCColumns_IgnoresFlagsAndGeneration(t *testing.T) {
	evs := make([]trace.Event, 4000)
	for i := range evs {
		evs[i] = trace.Event{Op: []trace.Op{trace.OpIsend, trace.OpIrecv, trace.OpWaitall}[i%3],
			Comm: uint32(i % 2), Seq: uint32(i % 3), Root: -1, Sent: uint64(8 * (i % 5)),
			EnterNS: int64(1000 + 10*i), ExitNS: int64(1005 + 10*i), Callsite: uint64(0x400000 + i%3),
			Peer: int32(i % 4), Tag: int32(i % 7), Req: uint32(i + 1)}
	}
	want := trace.EncodeColumns(evs)
	for _, salt := range []uint32{0, 0xFFFFFFFF, 0x12345678} {
		recs, free := cRecords(evs)
		stampRecords(recs, salt)
		got, err := cColumns(recs)
		if err != nil {
			free()
			t.Fatal(err)
		}
		same := got.N == want.N && got.Calls == want.Calls && bytes.Equal(got.Tmpl, want.Tmpl) &&
			bytes.Equal(got.Templates, want.Templates) && bytes.Equal(got.Seq, want.Seq) &&
			bytes.Equal(got.Enter, want.Enter) && bytes.Equal(got.Dur, want.Dur) && bytes.Equal(got.Req, want.Req)
		free() // the records; got is the encoder's memory
		if !same {
			t.Errorf("salt %#x: columns differ from the Go encoder's (tmpl column %d bytes, templates %d bytes, want %d, %d)",
				salt, len(got.Tmpl), len(got.Templates), len(want.Tmpl), len(want.Templates))
		}
	}
}

// TestCColumns_WrittenChunkReadsBack writes C-encoded chunks with
// trace.Writer.WriteColumns, with either codec, and reads every event back.
func TestCColumns_WrittenChunkReadsBack(t *testing.T) {
	for _, codec := range []trace.Codec{trace.CodecZstd, trace.CodecS2} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) { writtenChunkReadsBack(t, codec) })
	}
}

func writtenChunkReadsBack(t *testing.T, codec trace.Codec) {
	evs := make([]trace.Event, 3000)
	for i := range evs {
		evs[i] = trace.Event{Op: trace.OpIsend, Comm: uint32(i % 2), Seq: 0, Root: 0, Sent: 512,
			EnterNS: int64(1000 + 10*i), ExitNS: int64(1005 + 10*i), Callsite: uint64(0x400000 + i%3),
			Peer: int32(i % 4), Tag: 1, Req: uint32(i + 1)}
	}
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Rank: 0, WorldSize: 1}, trace.WithCodec(codec))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range [][]trace.Event{evs[:1000], evs[1000:]} {
		recs, free := cRecords(part)
		cols, err := cColumns(recs)
		if err == nil {
			err = w.WriteColumns(&cols)
		}
		free()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(trace.Footer{}); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "rank-00000.gct")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(evs) {
		t.Fatalf("read %d events, wrote %d", len(got), len(evs))
	}
	for i := range evs {
		if got[i] != evs[i] {
			t.Fatalf("event %d = %+v, want %+v", i, got[i], evs[i])
		}
	}
}

// TestPrepare_WritesNothing: gclock_encode_prepare and Writer.Prepare on
// stand-in records (prepareFlush) add no byte to the file and leave the
// next chunk's bytes exactly as without them, with either codec.
func TestPrepare_WritesNothing(t *testing.T) {
	evs := make([]trace.Event, 500)
	for i := range evs {
		evs[i] = trace.Event{Op: trace.OpAllreduce, Comm: 1, Seq: uint32(i), Root: -1, Sent: 8, Recv: 8,
			EnterNS: int64(5000 + 700*i), ExitNS: int64(5600 + 700*i), Callsite: 0x401000}
	}
	for _, codec := range []trace.Codec{trace.CodecZstd, trace.CodecS2} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) {
			write := func(prepare bool) []byte {
				var buf bytes.Buffer
				w, err := trace.NewWriter(&buf, trace.Header{Rank: 0, WorldSize: 1}, trace.WithCodec(codec))
				if err != nil {
					t.Fatal(err)
				}
				if prepare {
					before := buf.Len()
					stand, free := standInRecords(prepareEvents)
					if err := encodePrepare(8192); err != nil {
						t.Fatal(err)
					}
					cols, err := cColumns(stand)
					if err == nil {
						err = w.Prepare(&cols, 8192)
					}
					free()
					if err != nil || buf.Len() != before {
						t.Fatalf("Prepare: err %v, file grew %d → %d bytes", err, before, buf.Len())
					}
				}
				recs, free := cRecords(evs)
				defer free()
				cols, err := cColumns(recs)
				if err == nil {
					err = w.WriteColumns(&cols)
				}
				if err == nil {
					err = w.Close(trace.Footer{})
				}
				if err != nil {
					t.Fatal(err)
				}
				return buf.Bytes()
			}
			if plain, prepared := write(false), write(true); !bytes.Equal(plain, prepared) {
				t.Fatalf("with Prepare the file differs: %d vs %d bytes", len(prepared), len(plain))
			}
		})
	}
}

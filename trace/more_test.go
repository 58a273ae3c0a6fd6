package trace

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestChunkPayload_IgnoresAppendedElements(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout uint8
		fields byte
	}{
		{"layout 3", chunkLayout, chunkFields3},
		{"layout 2 (format 4.x files)", oldChunkLayout, chunkFields2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := amgEvents(300, 4)
			ce := chunkEncoder{layout: tc.layout}
			enc, err := sharedEncoder(DefaultCompressionLevel)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ce.encode(nil, evs, enc); err != nil {
				t.Fatal(err)
			}
			// A newer minor version appends an element (a new column).
			raw := bytes.Clone(ce.mp)
			if !bytes.Equal(raw[:3], []byte{0xdc, 0, tc.fields}) {
				t.Fatalf("payload starts with % x, want array16 of %d", raw[:3], tc.fields)
			}
			ext, err := msgpack.Marshal([]byte{1, 2, 3})
			if err != nil {
				t.Fatal(err)
			}
			newer := append([]byte{0xdc, 0, tc.fields + 1}, raw[3:]...)
			newer = append(newer, ext...)
			var cd chunkDecoder
			got, err := cd.decode(nil, enc.EncodeAll(newer, nil), flagZstd)
			if err != nil {
				t.Fatalf("decoding a payload with an appended element: %v", err)
			}
			if !reflect.DeepEqual(got, evs) {
				t.Error("events differ when an element is appended")
			}
			// Fewer elements than this reader needs is an error, not a panic.
			older := append([]byte{0xdc, 0, tc.fields - 1}, raw[3:]...)
			if _, err := cd.decode(nil, enc.EncodeAll(older, nil), flagZstd); err == nil {
				t.Error("payload with too few elements decoded without error")
			}
		})
	}
}

// layout1Payload is how gclock wrote a chunk before layout 2 (format
// 1.x files): every field in its own column, Req plain.
func layout1Payload(t *testing.T, evs []Event) []byte {
	t.Helper()
	var cols [12][]byte
	sites := map[uint64]uint64{}
	var dict []uint64
	last := map[uint32]int64{}
	var prevExit int64
	for i, e := range evs {
		cols[0] = putU(cols[0], uint64(e.Op))
		cols[1] = putU(cols[1], uint64(e.Comm))
		l, ok := last[e.Comm]
		if !ok {
			l = -1
		}
		cols[2] = putS(cols[2], int64(e.Seq)-(l+1))
		last[e.Comm] = int64(e.Seq)
		cols[3] = putS(cols[3], int64(e.Root))
		cols[4] = putU(cols[4], e.Sent)
		cols[5] = putU(cols[5], e.Recv)
		if i == 0 {
			cols[6] = putS(cols[6], e.EnterNS)
		} else {
			cols[6] = putS(cols[6], e.EnterNS-prevExit)
		}
		prevExit = e.ExitNS
		cols[7] = putS(cols[7], e.ExitNS-e.EnterNS)
		si, ok := sites[e.Callsite]
		if !ok {
			si = uint64(len(dict))
			sites[e.Callsite] = si
			dict = append(dict, e.Callsite)
		}
		cols[8] = putU(cols[8], si)
		cols[9] = putS(cols[9], int64(e.Peer))
		cols[10] = putS(cols[10], int64(e.Tag))
		cols[11] = putU(cols[11], uint64(e.Req))
	}
	arr := []any{uint8(1), len(evs), cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7],
		cols[8], dict, cols[9], cols[10], cols[11]}
	b, err := msgpack.Marshal(arr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChunkLayout1_StillRead: chunks of files written before layout 2
// decode to the same events, and a layout this reader does not know is
// refused by name.
func TestChunkLayout1_StillRead(t *testing.T) {
	enc, err := sharedEncoder(DefaultCompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
	for _, evs := range [][]Event{amgEvents(2000, 3), amgEvents(1, 5)} {
		var cd chunkDecoder
		got, err := cd.decode(nil, enc.EncodeAll(layout1Payload(t, evs), nil), flagZstd)
		if err != nil {
			t.Fatalf("layout 1 chunk: %v", err)
		}
		if !reflect.DeepEqual(got, evs) {
			t.Errorf("layout 1 chunk of %d events decodes differently", len(evs))
		}
		// in pieces (Reader.NextEvents): the same events
		if err := cd.start(enc.EncodeAll(layout1Payload(t, evs), nil), flagZstd); err != nil {
			t.Fatalf("layout 1 chunk, start: %v", err)
		}
		var pieces []Event
		for {
			n := len(pieces)
			if pieces, err = cd.more(pieces, 333); err != nil || len(pieces) == n {
				break
			}
		}
		if err != nil || !reflect.DeepEqual(pieces, evs) {
			t.Errorf("layout 1 chunk of %d events in pieces: %d events, err %v", len(evs), len(pieces), err)
		}
	}
	p := layout1Payload(t, amgEvents(10, 1))
	p[1] = 9 // the layout element, a positive fixint after the fixarray byte
	var cd chunkDecoder
	if _, err := cd.decode(nil, enc.EncodeAll(p, nil), flagZstd); err == nil || !strings.Contains(err.Error(), "chunk layout 9 unknown") {
		t.Errorf("layout 9: err = %v, want one naming the unknown layout", err)
	}
}

func TestWriter_AbortLeavesFileWithoutFooter(t *testing.T) {
	path := filepath.Join(t.TempDir(), RankFileName(1))
	w, err := Create(path, testHeader(), WithFsync(true))
	if err != nil {
		t.Fatal(err)
	}
	evs := amgEvents(1000, 9)
	if err := w.WriteEvents(evs); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvents(evs); err == nil {
		t.Error("WriteEvents after Abort succeeded")
	}
	if err := w.Close(Footer{}); err == nil {
		t.Error("Close after Abort succeeded")
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.ReadAll()
	if err != nil || !reflect.DeepEqual(got, evs) {
		t.Errorf("events after abort: err %v, equal %v", err, reflect.DeepEqual(got, evs))
	}
	if r.Meta().Footer != nil || len(r.Meta().Damage) != 0 || r.Meta().Complete() {
		t.Errorf("footer %v damage %v", r.Meta().Footer, r.Meta().Damage)
	}
	if s := r.Meta().Summary(); !strings.HasSuffix(s, "1 intact chunks, 0 dropped; no footer (the recorder did not finish cleanly)") {
		t.Errorf("Summary() = %q", s)
	}
}

func TestWriter_ConcurrentWritesKeepFramesWhole(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	const writers, per = 4, 20
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				evs := amgEvents(50, uint64(g*1000+i))
				if err := w.WriteEvents(evs); err != nil {
					t.Error(err)
				}
				if err := w.WriteComm(Comm{ID: uint64(g*1000 + i + 10), Local: uint32(g*1000 + i)}); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	if err := w.Close(Footer{}); err != nil {
		t.Fatal(err)
	}
	r, got, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if len(got) != writers*per*50 || m.EventChunks != writers*per || len(m.Comms) != writers*per || len(m.Damage) != 0 ||
		m.Footer.Events != uint64(len(got)) {
		t.Errorf("events %d chunks %d comms %d damage %v footer %+v", len(got), m.EventChunks, len(m.Comms), m.Damage, m.Footer)
	}
}

func TestReader_SkipsUnknownFrameKinds(t *testing.T) {
	chunks := smallChunks()
	data, _ := writeFile(t, chunks)
	// Splice a frame of a kind from the future after the header.
	he := headerEnd(t, data)
	var fr []byte
	fr = appendFrameHeader(fr, FrameKind(77), 0, []byte("future"))
	fr = append(fr, "future"...)
	newer := append(append(bytes.Clone(data[:he]), fr...), data[he:]...)
	r, got, err := readBytes(t, newer)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, concat(chunks)) || r.Meta().UnknownFrames != 1 || len(r.Meta().Damage) != 0 {
		t.Errorf("unknown frames %d damage %v equal %v", r.Meta().UnknownFrames, r.Meta().Damage, reflect.DeepEqual(got, concat(chunks)))
	}
}

func TestReader_ReadErrorsAreReturnedNotHidden(t *testing.T) {
	data, _ := writeFile(t, smallChunks())
	bad := &flakyReaderAt{data: data, failAfter: int64(len(data) / 2)}
	_, err := NewReader(bad, int64(len(data)), "rank-00001.gct")
	if !errors.Is(err, errIO) {
		t.Errorf("err = %v, want the I/O error", err)
	}
}

var errIO = errors.New("input/output error")

type flakyReaderAt struct {
	data      []byte
	failAfter int64
}

func (f *flakyReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.failAfter {
		return 0, errIO
	}
	return copy(p, f.data[off:]), nil
}

// FuzzChunkDecode feeds arbitrary bytes to the chunk decoder directly (past
// the checksums FuzzReader has to get through) both as a zstd payload and as
// the msgpack inside one.
func FuzzChunkDecode(f *testing.F) {
	enc, err := sharedEncoder(DefaultCompressionLevel)
	if err != nil {
		f.Fatal(err)
	}
	var ce chunkEncoder
	p, err := ce.encode(nil, amgEvents(40, 1), enc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p)
	f.Add(bytes.Clone(ce.mp))
	f.Add([]byte{0x9f, 1, 0x10})
	// layout 4 with shared times (a MPI_Waitall's later completions)
	if p, err = ce.encode(nil, haloCallEvents(6), enc); err != nil {
		f.Fatal(err)
	}
	f.Add(p)
	f.Add(bytes.Clone(ce.mp))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cd chunkDecoder
		for _, fl := range []uint8{flagZstd, flagS2, flagZstd | flagS2, flagS2 | flagTail, flagZstd | flagTail} {
			if evs, err := cd.decode(nil, data, fl); err == nil && len(evs) > MaxChunkEvents {
				t.Fatalf("decoded %d events", len(evs))
			}
		}
		if evs, err := cd.decode(nil, enc.EncodeAll(data, nil), flagZstd); err == nil {
			// Whatever decodes must re-encode to the same events.
			var ce chunkEncoder
			p, err := ce.encode(nil, evs, enc)
			if err != nil {
				t.Fatal(err)
			}
			again, err := cd.decode(nil, p, flagZstd)
			if err != nil || !reflect.DeepEqual(again, evs) && len(evs) > 0 {
				t.Fatalf("re-encoded chunk differs: %v", err)
			}
			// and through S2
			p, err = ce.encode(nil, evs, nil)
			if err != nil {
				t.Fatal(err)
			}
			again, err = cd.decode(nil, p, chunkFlags(nil))
			if err != nil || !reflect.DeepEqual(again, evs) && len(evs) > 0 {
				t.Fatalf("re-encoded S2 chunk differs: %v", err)
			}
		}
	})
}

func TestFlippedByte_InMetadataFrameCostsOnlyThatFrame(t *testing.T) {
	chunks := smallChunks()
	data, _ := writeFile(t, chunks)
	// Frames after the header: comm(world), epoch 0, chunk 0, comm(split), ...
	he := headerEnd(t, data)
	fh, _ := parseFrameHeader(data[he : he+frameHeaderSize])
	if fh.kind != KindComm {
		t.Fatalf("first frame after header is %s", fh.kind)
	}
	bad := bytes.Clone(data)
	bad[he+frameHeaderSize+2] ^= 0x10
	r, got, err := readBytes(t, bad)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if !reflect.DeepEqual(got, concat(chunks)) || len(m.Comms) != 1 || len(m.Damage) != 1 ||
		m.Damage[0].Kind != "comm" || m.Damage[0].Chunk != -1 || m.Footer == nil {
		t.Errorf("comms %d damage %v footer %v", len(m.Comms), m.Damage, m.Footer)
	}
	if _, ok := m.CommByLocal(0); ok {
		t.Error("the damaged world comm is still present")
	}
}

// syncCounter is an io.Writer with a Sync method that counts its calls.
type syncCounter struct {
	bytes.Buffer
	syncs int
}

func (s *syncCounter) Sync() error { s.syncs++; return nil }

func TestWriterClose_SyncsUnlessTurnedOff(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []Option
		syncs int
	}{
		{"default", nil, 1},
		{"on", []Option{WithSyncOnClose(true)}, 1},
		{"off", []Option{WithSyncOnClose(false)}, 0},
		{"off, every frame", []Option{WithSyncOnClose(false), WithFsync(true)}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sc syncCounter
			w, err := NewWriter(&sc, testHeader(), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			evs := amgEvents(200, 3)
			if err := w.WriteEvents(evs); err != nil {
				t.Fatal(err)
			}
			before := sc.syncs
			if err := w.Close(Footer{Reason: "finalize"}); err != nil {
				t.Fatal(err)
			}
			got := sc.syncs - before
			switch {
			case tc.syncs >= 0 && got != tc.syncs:
				t.Errorf("Close called Sync %d times, want %d", got, tc.syncs)
			case tc.syncs < 0 && got != 1: // the footer frame's own sync
				t.Errorf("Close with WithFsync(true) called Sync %d times, want 1 (the footer frame)", got)
			}
			r, back, err := readBytes(t, sc.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if len(back) != len(evs) || r.Meta().Footer == nil || r.Meta().Footer.Reason != "finalize" {
				t.Errorf("read back %d events (want %d), footer %+v", len(back), len(evs), r.Meta().Footer)
			}
		})
	}
}

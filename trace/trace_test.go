package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// writeFile writes a complete trace into memory and returns the bytes, the
// events of each chunk, and the end offset of each chunk's frame.
func writeFile(t testing.TB, chunks [][]Event, opts ...Option) (data []byte, ends []int64) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	comms := testComms()
	if err := w.WriteComm(comms[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEpoch(testEpochs()[0]); err != nil {
		t.Fatal(err)
	}
	for i, c := range chunks {
		if err := w.WriteEvents(c); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, w.Offset()-frameHeaderSize-spanPayloadSize) // the EVENTS frame's end; its SPAN frame follows
		if i == 0 {
			if err := w.WriteComm(comms[1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.WriteEpoch(testEpochs()[1]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Footer{Dropped: 3, EndNS: 5000, Reason: "finalize", BufferBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), ends
}

func readBytes(t testing.TB, data []byte) (*Reader, []Event, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), int64(len(data)), "rank-00007.gct")
	if err != nil {
		return nil, nil, err
	}
	evs, err := r.ReadAll()
	return r, evs, err
}

func concat(chunks [][]Event) []Event {
	var all []Event
	for _, c := range chunks {
		all = append(all, c...)
	}
	return all
}

func smallChunks() [][]Event {
	all := amgEvents(100, 1)
	return [][]Event{all[:20], all[20:45], all[45:60], all[60:100]}
}

// TestRoundTrip_PreservesEveryField: a file of the current format (6,
// chunk layout 4), one of format 5 (layout 3) and one of format 4.1
// (layout 2, as recorders before format 5 wrote them: the old decoder
// paths), with either codec, read
// back with every field, in chunks and whole.
func TestRoundTrip_PreservesEveryField(t *testing.T) {
	for _, f := range []struct {
		name         string
		major, minor int
		opts         []Option
	}{
		{"format 6", FormatVersion, FormatMinor, nil},
		{"format 5", 5, format5Minor, []Option{withFormat5()}},
		{"format 4.1", 4, format4Minor, []Option{withFormat4()}},
	} {
		for _, codec := range []Codec{CodecZstd, CodecS2} {
			t.Run(f.name+"/"+codec.String(), func(t *testing.T) {
				path := roundTrip(t, codec, f.major, f.opts...)
				pre, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if major, minor := binary.LittleEndian.Uint16(pre[8:]), binary.LittleEndian.Uint16(pre[10:]); int(major) != f.major || int(minor) != f.minor {
					t.Errorf("preamble says %d.%d, want %d.%d", major, minor, f.major, f.minor)
				}
			})
		}
	}
}

// roundTrip writes a file with every kind of frame (opts added to the
// codec's) and checks that it reads back the same; it returns its path.
func roundTrip(t *testing.T, codec Codec, major int, opts ...Option) string {
	rng := rand.New(rand.NewPCG(3, 4))
	chunks := [][]Event{amgEvents(5000, 2), randomEvents(rng, 300), amgEvents(1, 3)}
	dir := t.TempDir()
	path := filepath.Join(dir, RankFileName(7))
	w, err := Create(path, testHeader(), append([]Option{WithCodec(codec)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range testComms() {
		if err := w.WriteComm(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range chunks {
		if err := w.WriteEvents(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range testEpochs() {
		if err := w.WriteEpoch(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteEvents(nil); err != nil {
		t.Fatal(err)
	}
	foot := Footer{Dropped: 2, EndNS: 77, Reason: "finalize", BufferBytes: 4096}
	if err := w.Close(foot); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvents(chunks[0]); err == nil {
		t.Error("WriteEvents after Close succeeded")
	}

	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := r.Meta()
	wantH := testHeader()
	wantH.Version = major
	if !reflect.DeepEqual(m.Header, wantH) {
		t.Errorf("header:\n got %+v\nwant %+v", m.Header, wantH)
	}
	if !reflect.DeepEqual(m.Comms, testComms()) {
		t.Errorf("comms:\n got %+v\nwant %+v", m.Comms, testComms())
	}
	if !reflect.DeepEqual(m.Epochs, testEpochs()) {
		t.Errorf("epochs:\n got %+v\nwant %+v", m.Epochs, testEpochs())
	}
	foot.Events = uint64(len(concat(chunks)))
	// Calls: the records that start a call. Counted here by hand: a
	// record continues a call when it is a later record (Seq > 0) of a
	// point-to-point op or of MPI_Win_post/start.
	for _, e := range concat(chunks) {
		multi := e.Op >= OpSend && e.Op <= OpRequestFree || e.Op == OpWinPost || e.Op == OpWinStart
		if !multi || e.Seq == 0 {
			foot.Calls++
		}
	}
	if foot.Calls == foot.Events || foot.Calls == 0 {
		t.Errorf("test data has %d calls in %d records: it should hold continuation records and calls", foot.Calls, foot.Events)
	}
	if m.Footer == nil || *m.Footer != foot {
		t.Errorf("footer: got %+v want %+v", m.Footer, foot)
	}
	if m.EventChunks != len(chunks) || len(m.Damage) != 0 || !m.Complete() {
		t.Errorf("EventChunks=%d Damage=%v Complete=%v", m.EventChunks, m.Damage, m.Complete())
	}
	var got [][]Event
	var buf []Event
	for {
		buf, err = r.NextChunk(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, append([]Event(nil), buf...))
	}
	if !reflect.DeepEqual(got, chunks) {
		t.Errorf("events differ after round trip")
	}
	all, err := r.ReadAll()
	if err != nil || !reflect.DeepEqual(all, concat(chunks)) {
		t.Errorf("ReadAll after iteration: err=%v, equal=%v", err, reflect.DeepEqual(all, concat(chunks)))
	}
	return path
}

func TestEventCodec_RoundTripsRandomEvents(t *testing.T) {
	var ce chunkEncoder
	var cd chunkDecoder
	enc, err := sharedEncoder(3)
	if err != nil {
		t.Fatal(err)
	}
	var dst []Event
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed*31))
		n := rng.IntN(700)
		if seed%50 == 0 {
			n = 0
		}
		in := randomEvents(rng, n)
		payload, err := ce.encode(nil, in, enc)
		if err != nil {
			t.Fatalf("seed %d: encode: %v", seed, err)
		}
		dst, err = cd.decode(dst, payload, flagZstd)
		if err != nil {
			t.Fatalf("seed %d: decode: %v", seed, err)
		}
		if len(dst) != len(in) || (len(in) > 0 && !reflect.DeepEqual(dst, in)) {
			t.Fatalf("seed %d: %d events in, %d out, not equal", seed, len(in), len(dst))
		}
		if payload, err = ce.encode(nil, in, nil); err != nil {
			t.Fatalf("seed %d: S2 encode: %v", seed, err)
		}
		if dst, err = cd.decode(dst, payload, chunkFlags(nil)); err != nil {
			t.Fatalf("seed %d: S2 decode: %v", seed, err)
		}
		if len(dst) != len(in) || (len(in) > 0 && !reflect.DeepEqual(dst, in)) {
			t.Fatalf("seed %d: S2: %d events in, %d out, not equal", seed, len(in), len(dst))
		}
		if _, err := cd.decode(dst, payload, flagZstd); err == nil {
			t.Fatalf("seed %d: an S2 payload decoded as zstd", seed)
		}
	}
}

func TestWriteEvents_SplitsChunksLongerThanMax(t *testing.T) {
	evs := amgEvents(MaxChunkEvents+10, 5)
	data, _ := writeFile(t, [][]Event{evs})
	r, got, err := readBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta().EventChunks != 2 || !reflect.DeepEqual(got, evs) {
		t.Errorf("chunks=%d, equal=%v", r.Meta().EventChunks, reflect.DeepEqual(got, evs))
	}
}

func TestTruncation_EveryOffsetKeepsCompleteChunks(t *testing.T) {
	chunks := smallChunks()
	data, ends := writeFile(t, chunks)
	hdrEnd := headerEnd(t, data)
	for cut := 0; cut <= len(data); cut++ {
		r, got, err := readBytes(t, data[:cut])
		if cut < int(hdrEnd) {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("cut %d (inside preamble/header): err = %v, want *FormatError", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		var want []Event
		for i, e := range ends {
			if e <= int64(cut) {
				want = append(want, chunks[i]...)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("cut %d: got %d events, want %d", cut, len(got), len(want))
		}
		m := r.Meta()
		if cut < len(data) && (m.Footer != nil || len(m.Damage) == 0 && !endsAtFrame(t, data, cut)) {
			t.Fatalf("cut %d: footer=%v damage=%v", cut, m.Footer, m.Damage)
		}
	}
}

// headerEnd returns the offset after the header frame.
func headerEnd(t testing.TB, data []byte) int64 {
	fh, ok := parseFrameHeader(data[preambleSize : preambleSize+frameHeaderSize])
	if !ok {
		t.Fatal("bad header frame in test data")
	}
	return int64(preambleSize + frameHeaderSize + int(fh.length))
}

// endsAtFrame reports whether cut falls exactly on a frame boundary.
func endsAtFrame(t testing.TB, data []byte, cut int) bool {
	pos := headerEnd(t, data)
	for pos < int64(cut) {
		fh, _ := parseFrameHeader(data[pos : pos+frameHeaderSize])
		pos += frameHeaderSize + int64(fh.length)
	}
	return pos == int64(cut)
}

func TestFlippedByte_DropsExactlyThatChunk(t *testing.T) {
	chunks := smallChunks()
	data, ends := writeFile(t, chunks)
	starts := make([]int64, len(ends))
	for i := range ends {
		starts[i] = chunkStart(t, data, i)
	}
	for i := range chunks {
		for off := starts[i]; off < ends[i]; off++ {
			for _, mask := range []byte{0x01, 0x80, 0xff} {
				bad := bytes.Clone(data)
				bad[off] ^= mask
				r, got, err := readBytes(t, bad)
				if err != nil {
					t.Fatalf("chunk %d byte %d: %v", i, off, err)
				}
				var others [][]Event
				for j := range chunks {
					if j != i {
						others = append(others, chunks[j])
					}
				}
				if !reflect.DeepEqual(got, concat(others)) {
					t.Fatalf("chunk %d byte %d ^%#x: got %d events, want %d", i, off, mask, len(got), len(concat(others)))
				}
				m := r.Meta()
				if len(m.Damage) != 1 || m.Damage[0].Offset != starts[i] || m.Footer == nil || len(m.Epochs) != 2 || len(m.Comms) != 2 {
					t.Fatalf("chunk %d byte %d: damage %v, footer %v, epochs %d comms %d", i, off, m.Damage, m.Footer, len(m.Epochs), len(m.Comms))
				}
				if off >= starts[i]+frameHeaderSize {
					want := fmt.Sprintf("rank-00007.gct: chunk %d at byte %d: checksum mismatch", i, starts[i])
					if m.Damage[0].Err != want || m.Damage[0].Chunk != i {
						t.Fatalf("damage message %q (chunk %d), want %q", m.Damage[0].Err, m.Damage[0].Chunk, want)
					}
				}
			}
		}
	}
}

// chunkStart returns the offset of the i-th EVENTS frame.
func chunkStart(t testing.TB, data []byte, i int) int64 {
	pos := headerEnd(t, data)
	for n := 0; ; {
		fh, ok := parseFrameHeader(data[pos : pos+frameHeaderSize])
		if !ok {
			t.Fatal("bad test data")
		}
		if fh.kind == KindEvents {
			if n == i {
				return pos
			}
			n++
		}
		pos += frameHeaderSize + int64(fh.length)
	}
}

func TestCorruptLength_ResynchronisesOnNextFrame(t *testing.T) {
	chunks := smallChunks()
	data, _ := writeFile(t, chunks)
	for _, tc := range []struct {
		name      string
		length    uint32
		fixHeader bool // recompute the header check so the bad length looks valid
	}{
		{"huge length, header check broken", 1 << 27, false},
		{"short length, header check broken", 3, false},
		{"short length, header check recomputed", 5, true},
		{"long length within file, header check recomputed", 200, true},
		{"length past end of file, header check recomputed", 1 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := bytes.Clone(data)
			s := chunkStart(t, bad, 1)
			h := bad[s : s+frameHeaderSize]
			h[4], h[5], h[6], h[7] = byte(tc.length), byte(tc.length>>8), byte(tc.length>>16), byte(tc.length>>24)
			if tc.fixHeader {
				c := headerCRC(h)
				h[2], h[3] = byte(c), byte(c>>8)
			}
			r, got, err := readBytes(t, bad)
			if err != nil {
				t.Fatal(err)
			}
			want := concat([][]Event{chunks[0], chunks[2], chunks[3]})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %d events, want %d; damage %v", len(got), len(want), r.Meta().Damage)
			}
			if r.Meta().Footer == nil || len(r.Meta().Damage) != 1 {
				t.Errorf("footer %v damage %v", r.Meta().Footer, r.Meta().Damage)
			}
		})
	}
}

func TestUndecodableChunk_IsSkippedAndRecorded(t *testing.T) {
	chunks := smallChunks()
	data, _ := writeFile(t, chunks)
	bad := garbleChunk(t, data, 2)
	r, got, err := readBytes(t, bad)
	if err != nil {
		t.Fatal(err)
	}
	want := concat([][]Event{chunks[0], chunks[1], chunks[3]})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %d events, want %d", len(got), len(want))
	}
	d := r.Meta().Damage
	if len(d) != 1 || d[0].Chunk != 2 || !strings.Contains(d[0].Err, "chunk 2 at byte") || !strings.Contains(d[0].Err, "undecodable") {
		t.Errorf("damage = %v", d)
	}
	if _, err := r.ReadAll(); err != nil || len(r.Meta().Damage) != 1 {
		t.Errorf("second pass: err %v, damage recorded %d times", err, len(r.Meta().Damage))
	}
	if got, want := r.Meta().Summary(), "rank-00007.gct: 3 intact chunks, 1 dropped"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

// garbleChunk returns a copy of data whose chunk idx has a payload of
// garbage of the same length and a valid checksum: the CRC passes,
// decoding fails.
func garbleChunk(t *testing.T, data []byte, idx int) []byte {
	t.Helper()
	s := chunkStart(t, data, idx)
	fh, _ := parseFrameHeader(data[s : s+frameHeaderSize])
	bad := bytes.Clone(data)
	p := bad[s+frameHeaderSize : s+frameHeaderSize+int64(fh.length)]
	for i := range p {
		p[i] = byte(i * 7)
	}
	var hdr []byte
	hdr = appendFrameHeader(hdr, KindEvents, flagZstd, p)
	copy(bad[s:], hdr)
	return bad
}

// TestNextEvents_PiecesAreTheChunks reads files in pieces of several sizes
// and wants exactly NextChunk's events and damage: every event once, in
// order, an undecodable chunk skipped whole.
func TestNextEvents_PiecesAreTheChunks(t *testing.T) {
	chunks := smallChunks()
	data, _ := writeFile(t, chunks)
	files := []struct {
		name string
		data []byte
		want []Event
	}{
		{"intact", data, concat(chunks)},
		{"chunk 2 undecodable", garbleChunk(t, data, 2), concat([][]Event{chunks[0], chunks[1], chunks[3]})},
		{"chunk 0 undecodable", garbleChunk(t, data, 0), concat(chunks[1:])},
	}
	for _, f := range files {
		for _, max := range []int{1, 3, 7, 20, 40, 1000, 0} {
			t.Run(fmt.Sprintf("%s/max=%d", f.name, max), func(t *testing.T) {
				r, err := NewReader(bytes.NewReader(f.data), int64(len(f.data)), "rank-00007.gct")
				if err != nil {
					t.Fatal(err)
				}
				var got, buf []Event
				for {
					buf, err = r.NextEvents(buf, max)
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if len(buf) == 0 || (max > 0 && len(buf) > max) {
						t.Fatalf("piece of %d events with max %d", len(buf), max)
					}
					got = append(got, buf...)
				}
				if !reflect.DeepEqual(got, f.want) {
					t.Errorf("got %d events, want %d (or they differ)", len(got), len(f.want))
				}
				if wantBad := len(f.want) != len(concat(chunks)); (len(r.Meta().Damage) == 1) != wantBad {
					t.Errorf("damage = %v", r.Meta().Damage)
				}
				r.Rewind()
				again, err := r.ReadAll()
				if err != nil || !reflect.DeepEqual(again, f.want) {
					t.Errorf("ReadAll after pieces and Rewind: %d events, err %v", len(again), err)
				}
			})
		}
	}
}

func TestOpen_RejectsNonTraceWithClearMessage(t *testing.T) {
	good, _ := writeFile(t, smallChunks())
	hdrEnd := headerEnd(t, good)
	withVersion := func(major uint16) []byte {
		b := bytes.Clone(good)
		b[8], b[9] = byte(major), byte(major>>8)
		return b
	}
	corruptHeader := bytes.Clone(good)
	corruptHeader[hdrEnd-1] ^= 0x55
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty file", nil, "file is empty"},
		{"wrong magic", []byte("PK\x03\x04 this is a zip file"), "not a gclock trace"},
		{"text file", []byte("hello"), "not a gclock trace"},
		{"magic prefix only", []byte("GCLOC"), "truncated gclock trace"},
		{"unsupported version", withVersion(FormatVersion + 1), fmt.Sprintf("unsupported format version %d.%d", FormatVersion+1, FormatMinor)},
		{"version 0", withVersion(0), fmt.Sprintf("unsupported format version 0.%d", FormatMinor)},
		{"preamble only", good[:preambleSize], "truncated header frame"},
		{"header frame cut", good[:hdrEnd-1], "truncated header frame"},
		{"header checksum", corruptHeader, "header frame checksum mismatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(tc.data), int64(len(tc.data)), "rank-00003.gct")
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want *FormatError", err)
			}
			if !strings.HasPrefix(err.Error(), "rank-00003.gct: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("message %q lacks file name or %q", err, tc.want)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.gct")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
}

// failingWriter accepts limit bytes, then fails like a full disk.
type failingWriter struct {
	bytes.Buffer
	limit int
}

var errDiskFull = errors.New("no space left on device")

func (f *failingWriter) Write(p []byte) (int, error) {
	room := f.limit - f.Len()
	if room >= len(p) {
		return f.Buffer.Write(p)
	}
	f.Buffer.Write(p[:max(room, 0)])
	return max(room, 0), errDiskFull
}

func TestWriter_DiskFullIsAnErrorAndLeavesReadablePrefix(t *testing.T) {
	chunks := smallChunks()
	write := func(limit int) (*failingWriter, error) {
		fw := &failingWriter{limit: limit}
		var firstErr error
		w, err := NewWriter(fw, testHeader())
		if err != nil {
			firstErr = err
		} else {
			for _, c := range chunks {
				if err := w.WriteEvents(c); err != nil && firstErr == nil {
					firstErr = err
				}
			}
			if err := w.Close(Footer{}); err != nil && firstErr == nil {
				firstErr = err
			}
			if err := w.WriteComm(Comm{}); err == nil && firstErr != nil {
				t.Fatalf("limit %d: write after failure succeeded", limit)
			}
		}
		return fw, firstErr
	}
	complete, err := write(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	full := complete.Bytes()
	for limit := 0; limit < len(full); limit += 7 {
		fw, firstErr := write(limit)
		if !errors.Is(firstErr, errDiskFull) {
			t.Fatalf("limit %d: first error %v, want disk full", limit, firstErr)
		}
		if !strings.Contains(firstErr.Error(), "frame at byte") {
			t.Errorf("limit %d: error %q lacks context", limit, firstErr)
		}
		if limit < int(headerEnd(t, full)) {
			continue
		}
		if _, _, err := readBytes(t, fw.Bytes()); err != nil {
			t.Fatalf("limit %d: partial file unreadable: %v", limit, err)
		}
	}
}

func TestMeta_LooksUpCommsAndEpochs(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	comms := testComms()
	freed := comms[1]
	comms[1].FreedNS = 0
	for _, c := range []Comm{comms[0], comms[1], freed} {
		if err := w.WriteComm(c); err != nil {
			t.Fatal(err)
		}
	}
	ep := testEpochs()
	for _, e := range []Epoch{ep[1], ep[0]} {
		if err := w.WriteEpoch(e); err != nil {
			t.Fatal(err)
		}
	}
	r, _, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if m.Footer != nil {
		t.Error("footer present in a file written without Close")
	}
	if c, ok := m.CommByLocal(1); !ok || c.FreedNS != 99 || len(m.Comms) != 2 {
		t.Errorf("CommByLocal(1) = %+v, %v (comms %d); want the re-written comm with FreedNS", c, ok, len(m.Comms))
	}
	if c, ok := m.CommByID(CommWorldID); !ok || c.Kind != "world" {
		t.Errorf("CommByID(world) = %+v, %v", c, ok)
	}
	if _, ok := m.CommByLocal(9); ok {
		t.Error("CommByLocal(9) found a comm")
	}
	if e, ok := m.Epoch(1); !ok || e.Algorithm != "hca3" {
		t.Errorf("Epoch(1) = %+v, %v", e, ok)
	}
	if e, ok := m.LastEpoch(); !ok || e.Index != 1 || m.Epochs[0].Index != 0 {
		t.Errorf("epochs not sorted by index: %+v", m.Epochs)
	}
	if _, ok := m.Epoch(5); ok {
		t.Error("Epoch(5) found")
	}
}

func TestRankFileName(t *testing.T) {
	for _, tc := range []struct {
		rank int
		want string
	}{{0, "rank-00000.gct"}, {7, "rank-00007.gct"}, {123456, "rank-123456.gct"}} {
		if got := RankFileName(tc.rank); got != tc.want {
			t.Errorf("RankFileName(%d) = %q, want %q", tc.rank, got, tc.want)
		}
		if r, ok := ParseRankFileName(tc.want); !ok || r != tc.rank {
			t.Errorf("ParseRankFileName(%q) = %d, %v", tc.want, r, ok)
		}
	}
	for _, bad := range []string{"rank-7.gct", "rank-0007.gct", "rank-000007.gct", "rank-+0007.gct", "rank--0007.gct",
		"rank-00007.gct.bak", "notes.txt", "rank-abcde.gct", ""} {
		if r, ok := ParseRankFileName(bad); ok {
			t.Errorf("ParseRankFileName(%q) = %d, true; want not a rank file", bad, r)
		}
	}
}

func TestCreate_ReportsUnwritablePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", RankFileName(0))
	_, err := Create(path, testHeader())
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("Create in a missing directory: %v", err)
	}
}

func TestBytesPerEvent_AMGPatternAtMostSix(t *testing.T) {
	for _, codec := range []Codec{CodecZstd, CodecS2} {
		t.Run(codec.String(), func(t *testing.T) { bytesPerEventAMG(t, codec) })
	}
}

func bytesPerEventAMG(t *testing.T, codec Codec) {
	evs := amgEvents(1<<18, 11)
	for _, n := range []int{4096, 16384, 65536} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{}, WithCodec(codec))
		if err != nil {
			t.Fatal(err)
		}
		start := buf.Len()
		for i := 0; i+n <= len(evs); i += n {
			if err := w.WriteEvents(evs[i : i+n]); err != nil {
				t.Fatal(err)
			}
		}
		per := float64(buf.Len()-start) / float64(len(evs)/n*n)
		t.Logf("AMG-like pattern, chunks of %d events: %.2f bytes/event on disk (frame headers included)", n, per)
		if per > 6 {
			t.Errorf("chunks of %d: %.2f bytes/event, want <= 6", n, per)
		}
	}
}

func FuzzReader(f *testing.F) {
	good, _ := writeFile(f, smallChunks())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:headerEnd(f, good)+5])
	f.Add([]byte(Magic))
	f.Add([]byte("not a trace"))
	bad := bytes.Clone(good)
	bad[len(bad)/3] ^= 0xff
	f.Add(bad)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), int64(len(data)), "fuzz.gct")
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			return
		}
		m := r.Meta()
		if m.EventChunks != len(m.Chunks) {
			t.Fatalf("EventChunks %d != len(Chunks) %d", m.EventChunks, len(m.Chunks))
		}
		if _, err := r.ReadAll(); err != nil {
			t.Fatalf("ReadAll on in-memory data: %v", err)
		}
	})
}

// TestFooterCount_MismatchIsDamage: a footer that counts other events than
// the file's chunks hold (two processes wrote the file, e.g. a forked
// child's exit before the recorder ignored it) is reported once, at the
// end of the first full pass, whether read whole or in pieces; an intact
// file and one whose chunks were lost to other damage are not reported.
func TestFooterCount_MismatchIsDamage(t *testing.T) {
	chunks := smallChunks()
	all := concat(chunks)
	write := func(footerEvents uint64) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, testHeader())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			if err := w.WriteEvents(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(Footer{Events: footerEvents, Reason: "finalize"}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	intact := write(0) // Close fills in the count
	for _, tc := range []struct {
		name     string
		data     []byte
		max      int // NextEvents pieces; 0: ReadAll
		wantText string
	}{
		{"intact", intact, 0, ""},
		{"intact, pieces", intact, 7, ""},
		{"footer counts fewer", write(60), 0, "the footer counts 60 events, the file's event chunks hold 100"},
		{"footer counts fewer, pieces", write(60), 7, "the footer counts 60 events, the file's event chunks hold 100"},
		{"footer counts more", write(150), 0, "the footer counts 150 events, the file's event chunks hold 100"},
		{"a chunk lost, count not checked", garbleChunk(t, intact, 1), 0, "chunk 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), int64(len(tc.data)), "rank-00007.gct")
			if err != nil {
				t.Fatal(err)
			}
			var got, buf []Event
			for pass := 0; pass < 2; pass++ { // a second pass adds nothing
				r.Rewind()
				got = got[:0]
				for {
					if tc.max > 0 {
						buf, err = r.NextEvents(buf, tc.max)
					} else {
						buf, err = r.NextChunk(buf)
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, buf...)
				}
			}
			dmg := r.Meta().Damage
			if tc.wantText == "" {
				if len(dmg) != 0 || !reflect.DeepEqual(got, all) {
					t.Fatalf("intact file: damage %v, %d events", dmg, len(got))
				}
				return
			}
			if len(dmg) != 1 || !strings.Contains(dmg[0].Err, tc.wantText) || !strings.HasPrefix(dmg[0].Err, "rank-00007.gct: ") {
				t.Fatalf("damage %v, want one entry naming the file and containing %q", dmg, tc.wantText)
			}
		})
	}
}

func TestCreate_FileSizeLimitRefusesFramesAndKeepsFooter(t *testing.T) {
	chunks := make([][]Event, 40)
	for i := range chunks {
		chunks[i] = amgEvents(2000, uint64(i+1))
	}
	for _, limit := range []int64{SizeLimitReserve + 1000, SizeLimitReserve + 20000, SizeLimitReserve + 60000} {
		t.Run(strconv.FormatInt(limit, 10), func(t *testing.T) {
			old := fileSizeLimit
			fileSizeLimit = func() int64 { return limit }
			defer func() { fileSizeLimit = old }()
			path := filepath.Join(t.TempDir(), RankFileName(0))
			w, err := Create(path, testHeader())
			if err != nil {
				t.Fatal(err)
			}
			written := 0
			var refused error
			for _, c := range chunks {
				if err := w.WriteEvents(c); err != nil {
					refused = err
					break
				}
				written++
			}
			if !errors.Is(refused, ErrSizeLimit) || !strings.Contains(refused.Error(), path) {
				t.Fatalf("after %d chunks: error %v, want ErrSizeLimit naming %s", written, refused, path)
			}
			before := w.Offset()
			if before > limit-SizeLimitReserve {
				t.Fatalf("events end at byte %d, past the limit %d less the reserve", before, limit)
			}
			if err := w.Close(Footer{Reason: "error", Stopped: refused.Error()}); err != nil {
				t.Fatalf("closing within the reserve: %v", err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() > limit {
				t.Fatalf("file of %d bytes exceeds the limit %d", st.Size(), limit)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, evs, err := readBytes(t, data)
			if err != nil {
				t.Fatal(err)
			}
			m := r.Meta()
			if m.Footer == nil || m.Footer.Reason != "error" || m.Footer.Stopped != refused.Error() || len(m.Damage) != 0 {
				t.Fatalf("footer %+v, damage %v", m.Footer, m.Damage)
			}
			if want := concat(chunks[:written]); len(evs) != len(want) {
				t.Fatalf("read %d events, wrote %d", len(evs), len(want))
			}
		})
	}
}

// TestCreate_DescriptorTakenByTheApplication: the application closes the
// Writer's descriptor and opens a file of its own, which gets the same
// number. The Writer never writes to nor closes that descriptor; it
// reopens its file by path and goes on, or, when the file is gone, fails.
func TestCreate_DescriptorTakenByTheApplication(t *testing.T) {
	for _, removed := range []bool{false, true} {
		t.Run(fmt.Sprintf("removed=%v", removed), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, RankFileName(0))
			w, err := Create(path, testHeader())
			if err != nil {
				t.Fatal(err)
			}
			first, second := amgEvents(1000, 1), amgEvents(1000, 2)
			if err := w.WriteEvents(first); err != nil {
				t.Fatal(err)
			}
			fd := w.id.fd
			if err := syscall.Close(fd); err != nil {
				t.Fatal(err)
			}
			if removed {
				if err := os.Rename(path, path+".moved"); err != nil {
					t.Fatal(err)
				}
			}
			own := filepath.Join(dir, "own.txt")
			ofd, err := syscall.Open(own, syscall.O_RDWR|syscall.O_CREAT|syscall.O_TRUNC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if ofd != fd {
				t.Fatalf("the application's file got descriptor %d, not the closed %d", ofd, fd)
			}
			if _, err := syscall.Write(ofd, []byte("mine\n")); err != nil {
				t.Fatal(err)
			}
			werr := w.WriteEvents(second)
			cerr := w.Close(Footer{Reason: "finalize"})
			if removed {
				if !errors.Is(werr, ErrFileReplaced) || !strings.Contains(werr.Error(), path) || cerr == nil {
					t.Fatalf("write %v, close %v: want ErrFileReplaced naming %s, then a failed Close", werr, cerr, path)
				}
			} else {
				if werr != nil || cerr != nil || w.Reopened() != 1 {
					t.Fatalf("write %v, close %v, reopened %d: want the file reopened once", werr, cerr, w.Reopened())
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				r, evs, err := readBytes(t, data)
				if err != nil || r.Meta().Footer == nil || len(r.Meta().Damage) != 0 || len(evs) != len(first)+len(second) {
					t.Fatalf("reopened file: %v, footer %+v, damage %v, %d events", err, r.Meta().Footer, r.Meta().Damage, len(evs))
				}
			}
			runtime.GC()
			runtime.GC()
			// The application's descriptor is still open, its file untouched.
			if _, err := syscall.Write(ofd, []byte("more\n")); err != nil {
				t.Fatalf("the application's descriptor was closed: %v", err)
			}
			syscall.Close(ofd)
			if b, err := os.ReadFile(own); err != nil || string(b) != "mine\nmore\n" {
				t.Fatalf("the application's file holds %q (%v)", b, err)
			}
		})
	}
}

// TestMeta_CommIndexFollowsComms: the lookups see Comms set or extended
// directly (as tests and merge sources do), and among comms sharing a Local
// or an ID the last in Comms wins.
func TestMeta_CommIndexFollowsComms(t *testing.T) {
	m := &Meta{Comms: []Comm{{ID: 1, Local: 0, Kind: "world"}, {ID: 5, Local: 3, Kind: "dup"}}}
	if c, ok := m.CommByLocal(3); !ok || c.ID != 5 {
		t.Fatalf("CommByLocal(3) = %+v, %v", c, ok)
	}
	m.Comms = append(m.Comms, Comm{ID: 6, Local: 3, Kind: "split"}, Comm{ID: 5, Local: 4, Kind: "dup"})
	for _, c := range []struct {
		local uint32
		id    uint64
		kind  string
	}{{3, 6, "split"}, {4, 5, "dup"}, {0, 1, "world"}} {
		if got, ok := m.CommByLocal(c.local); !ok || got.ID != c.id || got.Kind != c.kind {
			t.Errorf("CommByLocal(%d) = %+v, %v; want id %d %s", c.local, got, ok, c.id, c.kind)
		}
	}
	if got, ok := m.CommByID(5); !ok || got.Local != 4 {
		t.Errorf("CommByID(5) = %+v, %v; want the one with Local 4", got, ok)
	}
	m.addComm(Comm{ID: 6, Local: 3, Kind: "split", FreedNS: 9})
	if got, _ := m.CommByLocal(3); got.FreedNS != 9 || len(m.Comms) != 4 {
		t.Errorf("re-written comm: %+v, %d comms", got, len(m.Comms))
	}
}

// BenchmarkReader_ManyComms reads a file of 100,000 communicators each
// written twice (created, freed): a program that creates and frees one per
// step. The lookup by (ID, Local) was a scan, so reading was quadratic.
func BenchmarkReader_ManyComms(b *testing.B) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 100000; i++ {
		c := Comm{ID: CommID(CommWorldID, uint32(i), 0), Local: uint32(2 + i), Parent: CommWorldID, Kind: "dup", Members: []int32{0, 1}}
		if err := w.WriteComm(c); err != nil {
			b.Fatal(err)
		}
		c.FreedNS = 1
		if err := w.WriteComm(c); err != nil {
			b.Fatal(err)
		}
	}
	benchOpen(b, buf.Bytes(), func(m *Meta) int { return len(m.Comms) }, 100000)
}

// benchOpen times opening data (its metadata folded); count must give want.
func benchOpen(b *testing.B, data []byte, count func(*Meta) int, want int) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := NewReader(bytes.NewReader(data), int64(len(data)), "many")
		if err != nil {
			b.Fatal(err)
		}
		if n := count(r.Meta()); n != want {
			b.Fatalf("%d read, want %d", n, want)
		}
	}
}

// TestMeta_CommMembersByReference: a COMM frame that names its members by
// an earlier communicator (Comm.Same, version 3) is read with them; one
// naming a communicator the file does not define is damage, not a silent
// empty communicator.
func TestMeta_CommMembersByReference(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	members := []int32{0, 1, 2, 3}
	for _, c := range []Comm{
		{ID: CommWorldID, Local: 0, Kind: "world", Members: members},
		{ID: 10, Local: 2, Parent: CommWorldID, Kind: "dup", Same: 1, CreatedNS: 5},
		{ID: 10, Local: 2, Parent: CommWorldID, Kind: "dup", Same: 3, CreatedNS: 5, FreedNS: 7}, // freed: names itself
		{ID: 11, Local: 3, Parent: CommWorldID, Kind: "dup", Same: 3},
		{ID: 12, Local: 4, Parent: CommWorldID, Kind: "dup", Same: 9}, // local 8: never written
	} {
		if err := w.WriteComm(c); err != nil {
			t.Fatal(err)
		}
	}
	r, _, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	for _, c := range []struct {
		local   uint32
		members []int32
		freed   int64
	}{{2, members, 7}, {3, members, 0}, {4, nil, 0}} {
		got, ok := m.CommByLocal(c.local)
		if !ok || !reflect.DeepEqual(got.Members, c.members) || got.FreedNS != c.freed {
			t.Errorf("CommByLocal(%d) = %+v, %v; want members %v freed %d", c.local, got, ok, c.members, c.freed)
		}
	}
	if len(m.Damage) != 1 || !strings.Contains(m.Damage[0].Err, "names its members by local index 8") {
		t.Errorf("damage %+v, want one naming local 8", m.Damage)
	}
}

// BenchmarkReader_ManyEpochs reads a file of 43,200 resync epochs (a day
// at the default GCLOCK_RESYNC of 2 s).
func BenchmarkReader_ManyEpochs(b *testing.B) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 43200; i++ {
		e := Epoch{Index: i, Algorithm: "resync", StartNS: int64(i) * 2e9, EndNS: int64(i)*2e9 + 1e5, Model: Model{T0: int64(i) * 2e9, Slope: 1e-6}}
		if err := w.WriteEpoch(e); err != nil {
			b.Fatal(err)
		}
	}
	benchOpen(b, buf.Bytes(), func(m *Meta) int { return len(m.Epochs) }, 43200)
}

// TestReader_SpansGiveTheHorizon: every chunk is followed by a SPAN frame
// with its events and first and last entry time; Horizon is the earliest
// start among the chunks not yet read, by NextChunk and by NextEvents, and
// says it cannot promise anything when a chunk left has no span (its SPAN
// frame damaged).
func TestReader_SpansGiveTheHorizon(t *testing.T) {
	// two threads' chunks that overlap: starts 1000, 500, 3000, 2000
	mk := func(from, n int64) []Event {
		var evs []Event
		for i := int64(0); i < n; i++ {
			evs = append(evs, Event{Op: OpBarrier, EnterNS: from + 10*i, ExitNS: from + 10*i + 5, Root: -1})
		}
		return evs
	}
	chunks := [][]Event{mk(1000, 50), mk(500, 30), mk(3000, 20), mk(2000, 40)}
	data, _ := writeFile(t, chunks)
	r, _, err := readBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range r.Meta().Chunks {
		want := chunks[i]
		if !c.Spanned || c.Events != len(want) || c.First != want[0].EnterNS || c.Last != want[len(want)-1].EnterNS {
			t.Errorf("chunk %d: span %+v, want %d events from %d to %d", i, c, len(want), want[0].EnterNS, want[len(want)-1].EnterNS)
		}
	}
	want := []int64{500, 500, 2000, 2000, math.MaxInt64} // before each chunk is read, and at the end
	r.Rewind()
	for i := 0; ; i++ {
		if h, ok := r.Horizon(); !ok || h != want[i] {
			t.Errorf("before chunk %d: horizon %d %v, want %d", i, h, ok, want[i])
		}
		if _, err := r.NextChunk(nil); err != nil {
			break
		}
	}
	r.Rewind()
	if _, err := r.NextEvents(nil, 7); err != nil { // a first piece of chunk 0
		t.Fatal(err)
	}
	if h, ok := r.Horizon(); !ok || h != 500 {
		t.Errorf("within chunk 0: horizon %d %v, want 500 (chunk 1's start)", h, ok)
	}
	// Within chunk 2 (3000...3190), whose rest comes after what it handed
	// out: chunk 3's start (2000) bounds it, not chunk 2's own start.
	// Within the last chunk (2000...2390): its first record may be a flush
	// mark that the span looks past, so one event handed out promises its
	// span's First; from the second on, the last one handed out.
	for _, c := range []struct {
		chunk, piece int
		want         int64
	}{{2, 1, 2000}, {2, 7, 2000}, {3, 1, 2000}, {3, 2, 2010}, {3, 39, 2380}} {
		r.Rewind()
		for range c.chunk {
			if _, err := r.NextChunk(nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.NextEvents(nil, c.piece); err != nil {
			t.Fatal(err)
		}
		if h, ok := r.Horizon(); !ok || h != c.want {
			t.Errorf("after %d events of chunk %d: horizon %d %v, want %d", c.piece, c.chunk, h, ok, c.want)
		}
	}
	// In start order the chunks come 500, 1000, 2000, 3000, and the
	// horizon before each is its own start.
	r.InStartOrder()
	r.Rewind()
	for i, first := range []int64{500, 1000, 2000, 3000, math.MaxInt64} {
		if h, ok := r.Horizon(); !ok || h != first {
			t.Errorf("in start order, before chunk %d: horizon %d %v, want %d", i, h, ok, first)
		}
		evs, err := r.NextChunk(nil)
		if err == io.EOF && first == math.MaxInt64 {
			break
		}
		if err != nil || len(evs) == 0 || evs[0].EnterNS != first {
			t.Fatalf("in start order, chunk %d: %d events from %v, %v; want the one from %d", i, len(evs), evs[:min(1, len(evs))], err, first)
		}
	}
	// A damaged SPAN frame: the chunk is read, nothing promised before it.
	bad := bytes.Clone(data)
	pos := chunkStart(t, bad, 2)
	fh, _ := parseFrameHeader(bad[pos : pos+frameHeaderSize])
	bad[pos+frameHeaderSize+int64(fh.length)+frameHeaderSize] ^= 0xff // the span's payload
	r2, got, err := readBytes(t, bad)
	if err != nil || len(got) != 140 {
		t.Fatalf("damaged span: %d events, %v", len(got), err)
	}
	if r2.Meta().Chunks[2].Spanned {
		t.Error("a chunk whose SPAN frame is damaged has a span")
	}
	r2.Rewind()
	if _, ok := r2.Horizon(); ok {
		t.Error("Horizon promises a time before a chunk without span")
	}
	r2.InStartOrder() // a chunk without span: file order
	r2.Rewind()
	if evs, err := r2.NextChunk(nil); err != nil || evs[0].EnterNS != 1000 {
		t.Errorf("start order asked of a file with a chunk without span: first chunk %v, %v; want file order (1000)", evs[:min(1, len(evs))], err)
	}
}

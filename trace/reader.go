package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/vmihailenco/msgpack/v5"
)

// Reader reads one trace file. Open scans every frame once (verifying
// checksums, decoding metadata, but not decompressing events) to build
// Meta; NextChunk then streams events chunk by chunk. A Reader is not safe
// for concurrent use; open one per goroutine.
type Reader struct {
	r      io.ReaderAt
	closer io.Closer
	meta   Meta
	next   int          // next index into meta.Chunks
	bad    map[int]bool // chunks already reported undecodable
	// seen counts the events of the chunks decoded since the last Rewind,
	// for the footer check at the end of a pass (checkFooterCount).
	seen    uint64
	checked bool
	buf     []byte
	dec     chunkDecoder
	sufMin  []int64 // Horizon: earliest span First from each chunk on (reading order)
	order   []int   // InStartOrder: chunk indices in reading order; nil: file order
	// streamLast, streamN: the entry time of the last event NextEvents
	// handed out of the chunk it is inside, and how many it handed (Horizon)
	streamLast int64
	streamN    int
}

// Open opens and scans the trace file at path.
// Its file is kept open only while read when a run has more files than
// the process may hold open (filepool.go).
func Open(path string) (*Reader, error) {
	f, size, err := openPooled(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	r, err := NewReader(f, size, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader scans the size bytes of r as a trace file; name is used in
// messages. Problems that make the whole file unreadable (not a trace,
// unsupported version, missing or corrupt header frame) return a
// *FormatError; damage after the header is recorded in Meta().Damage.
func NewReader(r io.ReaderAt, size int64, name string) (*Reader, error) {
	// the scan reads the file through a read-ahead buffer (readahead.go)
	ahead := &readAhead{r: r, size: size}
	defer ahead.release()
	rd := &Reader{r: ahead, meta: Meta{Name: name, Size: size}, bad: map[int]bool{}}
	pos, err := rd.readHeader()
	if err != nil {
		return nil, err
	}
	if err := rd.scan(pos); err != nil {
		return nil, err
	}
	rd.r = r
	// The scan's payload buffer (the largest frame's size) is not kept
	// for the whole pass: at 16,384 ranks open at once that was ≈ 35 MB.
	// It goes back to the pool (bufpool.go) for the next Open.
	putBuf(rd.buf)
	rd.buf = nil
	// So is the scan's communicator index (three small maps, ≈ 600 bytes
	// a rank, 10 MB at 16,384 ranks): Meta.index builds it again if
	// CommByLocal or CommByID is ever asked.
	rd.meta.idx = commIndex{}
	return rd, nil
}

// Meta returns the file's metadata. Damage grows when NextChunk finds an
// undecodable chunk.
func (r *Reader) Meta() *Meta { return &r.meta }

// Close closes the file if the Reader was made by Open.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	err := r.closer.Close()
	r.closer = nil
	return err
}

func (r *Reader) formatErr(off int64, err error, format string, args ...any) *FormatError {
	return &FormatError{Path: r.meta.Name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// readAt reads exactly len(p) bytes at off; io.ErrUnexpectedEOF if the file
// is shorter.
func (r *Reader) readAt(p []byte, off int64) error {
	n, err := r.r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (r *Reader) readHeader() (int64, error) {
	size := r.meta.Size
	if size == 0 {
		return 0, r.formatErr(0, nil, "not a gclock trace: file is empty")
	}
	pre := make([]byte, min(size, int64(preambleSize)))
	if err := r.readAt(pre, 0); err != nil {
		return 0, r.formatErr(0, err, "reading preamble")
	}
	if len(pre) < len(Magic) || string(pre[:len(Magic)]) != Magic {
		if len(pre) < len(Magic) && string(pre) == Magic[:len(pre)] {
			return 0, r.formatErr(0, nil, "truncated gclock trace: %d bytes, shorter than the %d-byte preamble", size, preambleSize)
		}
		got := pre[:min(len(pre), len(Magic))]
		return 0, r.formatErr(0, nil, "not a gclock trace: starts with %q, want magic %q", got, Magic)
	}
	if len(pre) < preambleSize {
		return 0, r.formatErr(int64(len(Magic)), nil, "truncated gclock trace: %d bytes, shorter than the %d-byte preamble", size, preambleSize)
	}
	major := binary.LittleEndian.Uint16(pre[8:10])
	minor := binary.LittleEndian.Uint16(pre[10:12])
	if major < OldestFormatVersion || major > FormatVersion {
		return 0, r.formatErr(8, nil, "unsupported format version %d.%d (this reader reads versions %d.x to %d.x); use a tracemerge built for version %d",
			major, minor, OldestFormatVersion, FormatVersion, major)
	}
	r.meta.Minor = int(minor)
	pos := int64(preambleSize)
	var hb [frameHeaderSize]byte
	if size-pos < frameHeaderSize {
		return 0, r.formatErr(pos, nil, "truncated header frame: file ends %d bytes after the preamble", size-pos)
	}
	if err := r.readAt(hb[:], pos); err != nil {
		return 0, r.formatErr(pos, err, "reading header frame")
	}
	fh, ok := parseFrameHeader(hb[:])
	if !ok {
		return 0, r.formatErr(pos, nil, "corrupt header frame (frame header check failed)")
	}
	if fh.kind != KindHeader {
		return 0, r.formatErr(pos, nil, "first frame is %s, want header", fh.kind)
	}
	end := pos + frameHeaderSize + int64(fh.length)
	if end > size {
		return 0, r.formatErr(pos, nil, "truncated header frame: needs %d bytes, file has %d", end, size)
	}
	payload := make([]byte, fh.length)
	if err := r.readAt(payload, pos+frameHeaderSize); err != nil {
		return 0, r.formatErr(pos, err, "reading header frame")
	}
	if crc32c(payload) != fh.pcrc {
		return 0, r.formatErr(pos, nil, "header frame checksum mismatch")
	}
	if err := msgpack.Unmarshal(payload, &r.meta.Header); err != nil {
		return 0, r.formatErr(pos, err, "undecodable header frame")
	}
	return end, nil
}

// frameName names a frame in messages: "chunk 12" or "comm frame".
func frameName(kind FrameKind, chunk int) string {
	if kind == KindEvents {
		return "chunk " + itoa(chunk)
	}
	return kind.String() + " frame"
}

func (r *Reader) damage(chunk int, off, skipped int64, kind, what string) {
	msg := r.meta.Name + ": "
	if kind == KindEvents.String() {
		msg += "chunk " + itoa(chunk) + " at byte " + fmt.Sprint(off) + ": " + what
	} else if kind != "" {
		msg += kind + " frame at byte " + fmt.Sprint(off) + ": " + what
	} else {
		msg += "at byte " + fmt.Sprint(off) + ": " + what
	}
	r.meta.Damage = append(r.meta.Damage, Damage{Chunk: chunk, Offset: off, Bytes: skipped, Kind: kind, Err: msg})
}

// addSpan attaches a SPAN frame to the chunk it names (the EVENTS frame
// before it, normally the last chunk found); a span of a chunk that was
// not found intact, or of another length, is ignored.
func (r *Reader) addSpan(p []byte) {
	if len(p) != spanPayloadSize {
		return
	}
	idx := int(binary.LittleEndian.Uint32(p[0:]))
	for i := len(r.meta.Chunks) - 1; i >= 0 && i >= len(r.meta.Chunks)-2; i-- {
		if c := &r.meta.Chunks[i]; c.Index == idx {
			c.Events = int(binary.LittleEndian.Uint32(p[4:]))
			c.First = int64(binary.LittleEndian.Uint64(p[8:]))
			c.Last = int64(binary.LittleEndian.Uint64(p[16:]))
			c.Spanned = c.Last >= c.First
			return
		}
	}
}

// InStartOrder makes NextChunk and NextEvents read the chunks in the order
// of their first events (their SPAN frames' First; ties in file order)
// instead of file order; call it before the first read. A
// thread that calls MPI rarely keeps its buffer half open for long, so its
// chunk reaches the file late but starts early: read in file order, every
// event of the other threads after its start was held back until it came
// (up to ExactReorderLimit events in tracemerge, then out of order: 44 of
// the 54 calls of such a thread among 3·10^6 of the main thread's); in
// start order it is read when it starts and held in its stead. A file
// with a chunk without span is read in file order.
func (r *Reader) InStartOrder() {
	cs := r.meta.Chunks
	r.order, r.sufMin = nil, nil
	for _, c := range cs {
		if !c.Spanned {
			return
		}
	}
	r.order = make([]int, len(cs))
	for i := range r.order {
		r.order[i] = i
	}
	sort.SliceStable(r.order, func(a, b int) bool { return cs[r.order[a]].First < cs[r.order[b]].First })
}

// chunkAt is the i-th chunk in reading order.
func (r *Reader) chunkAt(i int) ChunkInfo {
	if r.order != nil {
		return r.meta.Chunks[r.order[i]]
	}
	return r.meta.Chunks[i]
}

// Horizon returns a local time before which no event of the chunks not
// yet read (by NextChunk or NextEvents) starts: the earliest First of
// their SPAN frames, math.MaxInt64 when none is left. ok is false when a
// chunk left has no span (written before minor version 1, or its SPAN
// frame was lost). tracemerge emits a rank's events up to it.
func (r *Reader) Horizon() (ns int64, ok bool) {
	cs := r.meta.Chunks
	if r.sufMin == nil || len(r.sufMin) != len(cs)+1 {
		r.sufMin = make([]int64, len(cs)+1)
		r.sufMin[len(cs)] = math.MaxInt64
		for i := len(cs) - 1; i >= 0; i-- {
			v := int64(math.MinInt64) // no span: nothing can be promised
			if c := r.chunkAt(i); c.Spanned && r.sufMin[i+1] != math.MinInt64 {
				v = min(c.First, r.sufMin[i+1])
			}
			r.sufMin[i] = v
		}
	}
	i := min(r.next, len(cs))
	v := r.sufMin[i]
	if r.dec.streaming && i > 0 && v != math.MinInt64 {
		// NextEvents is inside chunk i-1: its rest is still to come, and
		// starts no earlier than what it handed out last (a thread's
		// chunk is in call order from its second record on: the first
		// may be the flush mark of a call whose earlier records follow,
		// which the span's First looks past). Its span's First alone
		// would hold back every event of the chunk: a run of more than
		// 64 ranks is read in pieces, and every rank's order then fell
		// back to its heap, holding its whole chunk (10,000 ranks, 2,000
		// events each: 2.6 GB of heaps).
		c := r.chunkAt(i - 1)
		if !c.Spanned {
			return math.MinInt64, false
		}
		rest := c.First
		if r.streamN >= 2 {
			rest = max(rest, r.streamLast)
		}
		v = min(v, rest)
	}
	return v, v != math.MinInt64
}

// expandRuns fills c.Members from c.Runs (version 4), at most as many as
// the header's world size.
func (r *Reader) expandRuns(c *Comm) error {
	if len(c.Members) > 0 {
		return fmt.Errorf("communicator %#x gives both a member list and member runs", c.ID)
	}
	limit := MaxRunMembers
	if ws := r.meta.Header.WorldSize; ws > 0 && ws < limit {
		limit = ws
	}
	m, err := unpackShared(c.Runs, limit)
	if err != nil {
		return fmt.Errorf("communicator %#x: %w", c.ID, err)
	}
	c.Members, c.Runs = m, nil
	return nil
}

// payloadAt reads a frame's payload into r.buf.
func (r *Reader) payloadAt(pos int64, length uint32) ([]byte, error) {
	if cap(r.buf) < int(length) {
		putBuf(r.buf)
		r.buf = getBuf(int(length))
	}
	p := r.buf[:length]
	if err := r.readAt(p, pos+frameHeaderSize); err != nil {
		return nil, err
	}
	return p, nil
}

// validFrameAt reports whether a complete frame with intact header and
// payload checksums starts at pos.
func (r *Reader) validFrameAt(pos int64) bool {
	var hb [frameHeaderSize]byte
	if r.meta.Size-pos < frameHeaderSize || r.readAt(hb[:], pos) != nil {
		return false
	}
	fh, ok := parseFrameHeader(hb[:])
	return ok && r.payloadOK(pos, fh)
}

func (r *Reader) payloadOK(pos int64, fh frameHeader) bool {
	if pos+frameHeaderSize+int64(fh.length) > r.meta.Size {
		return false
	}
	p, err := r.payloadAt(pos, fh.length)
	return err == nil && crc32c(p) == fh.pcrc
}

// resync returns the offset of the next valid frame at or after from, or
// the file size if there is none.
func (r *Reader) resync(from int64) int64 {
	const window = 64 << 10
	size := r.meta.Size
	buf := make([]byte, window+frameHeaderSize)
	for base := from; base+frameHeaderSize <= size; base += window {
		n := min(int64(len(buf)), size-base)
		b := buf[:n]
		if r.readAt(b, base) != nil {
			return size
		}
		for i := 0; i+frameHeaderSize <= len(b) && i < window; i++ {
			fh, ok := parseFrameHeader(b[i : i+frameHeaderSize])
			// Only kinds and flags this reader knows are resync targets:
			// with the 16-bit header check that leaves about one false
			// candidate per 4e8 bytes of garbage, each costing a CRC.
			if ok && fh.kind <= KindFooter && fh.flags&reservedMask == 0 && r.payloadOK(base+int64(i), fh) {
				return base + int64(i)
			}
		}
	}
	return size
}

// scan walks the frames after the header, filling meta.
func (r *Reader) scan(pos int64) error {
	size := r.meta.Size
	chunk := 0
	var hb [frameHeaderSize]byte
	for pos < size {
		if size-pos < frameHeaderSize {
			r.damage(-1, pos, size-pos, "", fmt.Sprintf("truncated frame header (%d of %d bytes at end of file)", size-pos, frameHeaderSize))
			break
		}
		if err := r.readAt(hb[:], pos); err != nil {
			return fmt.Errorf("trace: %s: reading frame at byte %d: %w", r.meta.Name, pos, err)
		}
		fh, ok := parseFrameHeader(hb[:])
		if !ok {
			next := r.resync(pos + 1)
			r.damage(-1, pos, next-pos, "", fmt.Sprintf("unreadable frame header; skipped %d bytes to %s", next-pos, where(next, size)))
			pos = next
			continue
		}
		kind := fh.kind.String()
		if fh.kind != KindEvents && fh.kind > KindFooter {
			kind = ""
		}
		idx := -1
		if fh.kind == KindEvents {
			idx = chunk
			chunk++
		}
		end := pos + frameHeaderSize + int64(fh.length)
		if end > size {
			next := r.resync(pos + 1)
			r.damage(idx, pos, next-pos, kind, fmt.Sprintf("truncated: frame needs %d bytes, %d remain", end-pos, size-pos))
			pos = next
			continue
		}
		payload, err := r.payloadAt(pos, fh.length)
		if err != nil {
			return fmt.Errorf("trace: %s: reading %s at byte %d: %w", r.meta.Name, frameName(fh.kind, idx), pos, err)
		}
		if crc32c(payload) != fh.pcrc {
			// The header check vouches for the length; trust it only if a
			// valid frame (or the end of file) follows, else rescan.
			next := end
			if end != size && !r.validFrameAt(end) {
				next = r.resync(pos + 1)
			}
			r.damage(idx, pos, next-pos, kind, "checksum mismatch")
			pos = next
			continue
		}
		if fh.flags&reservedMask != 0 {
			r.damage(idx, pos, end-pos, kind, fmt.Sprintf("unsupported frame flags 0x%02x", fh.flags))
			pos = end
			continue
		}
		switch fh.kind {
		case KindEvents:
			r.meta.EventChunks++
			codec := CodecZstd
			if fh.flags&flagS2 != 0 {
				codec = CodecS2
			}
			r.meta.Chunks = append(r.meta.Chunks, ChunkInfo{Index: idx, Offset: pos, Bytes: int(fh.length), Codec: codec})
		case KindComm:
			var c Comm
			err := msgpack.Unmarshal(payload, &c)
			if err == nil && len(c.Runs) > 0 {
				err = r.expandRuns(&c)
			}
			if err != nil {
				r.damage(-1, pos, end-pos, kind, "undecodable: "+err.Error())
			} else if !r.meta.addComm(c) {
				r.damage(-1, pos, end-pos, kind, fmt.Sprintf("communicator %#x names its members by local index %d, which no intact frame of this file defines", c.ID, c.Same-1))
			}
		case KindEpoch:
			var e Epoch
			if err := msgpack.Unmarshal(payload, &e); err != nil {
				r.damage(-1, pos, end-pos, kind, "undecodable: "+err.Error())
			} else {
				r.meta.addEpoch(e)
			}
		case KindFooter:
			var f Footer
			if err := msgpack.Unmarshal(payload, &f); err != nil {
				r.damage(-1, pos, end-pos, kind, "undecodable: "+err.Error())
			} else {
				r.meta.Footer = &f
			}
		case KindSpan:
			r.addSpan(payload)
		case KindHeader:
			r.damage(-1, pos, end-pos, kind, "unexpected second header frame (ignored)")
		default:
			r.meta.UnknownFrames++
		}
		pos = end
	}
	return nil
}

func where(next, size int64) string {
	if next >= size {
		return "the end of the file"
	}
	return "the next valid frame at byte " + fmt.Sprint(next)
}

// Release drops the buffers the reader keeps between chunks (the
// compressed and decompressed chunk, the decoder's templates and state);
// a later read allocates them again. Call it between reads, never while
// events of a chunk are still to be handed out (NextEvents): tracemerge
// calls it when a rank's stream has ended, so that thousands of finished
// readers do not hold their last chunk.
//
// The compressed chunk goes back to the pool (bufpool.go); the
// decompressed one does not: readers of many ranks hold theirs at once
// and end together, and 16,384 of them kept in the pool (until the
// collector empties it) raised the peak RSS more than their reuse saved.
func (r *Reader) Release() {
	d := &r.dec
	d.raw, d.p, d.tm, d.s2, d.whole, d.wholeAt, d.streaming = nil, chunkPayload{}, nil, stream2{}, nil, 0, false
	d.br.Reset(nil)
	putBuf(r.buf)
	r.buf = nil
}

// sizeRaw makes the decoder's block buffer hold the chunk in payload
// before it is decompressed, from the pool (the decoder appends to
// dec.raw[:0], and allocated a new buffer for every first chunk of a
// reader). Call it only when the decoder is not in the middle of a
// chunk: its old buffer goes back to the pool.
func (r *Reader) sizeRaw(payload []byte, flags uint8) {
	n := decodedSize(payload, flags)
	if n <= cap(r.dec.raw) {
		return
	}
	d := &r.dec
	d.p, d.s2, d.streaming = chunkPayload{Sites: d.p.Sites[:0]}, stream2{}, false
	d.br.Reset(nil)
	putBuf(d.raw)
	d.raw = getBuf(n)[:0]
}

// NextChunk decodes the next intact event chunk into dst[:0] (reusing its
// storage) and returns it. Chunks that turn out undecodable are skipped and
// added to Meta().Damage. At the end it returns io.EOF.
func (r *Reader) NextChunk(dst []Event) ([]Event, error) {
	r.dec.streaming = false
	for {
		ci, payload, flags, err := r.nextPayload()
		if err != nil {
			return dst[:0], err
		}
		r.sizeRaw(payload, flags)
		evs, err := r.dec.decode(dst, payload, flags)
		if err != nil {
			r.decodeDamage(ci, "undecodable payload: "+err.Error())
			continue
		}
		r.dropPayload(flags)
		r.seen += uint64(len(evs))
		return evs, nil
	}
}

// NextEvents is NextChunk in pieces of at most max events (max <= 0: whole
// chunks), in dst[:0]. Each chunk is still decoded and checked whole
// before its first piece (an undecodable chunk is skipped whole, as by
// NextChunk), but only a piece is ever written out: a reader of one of
// many ranks then holds max events instead of a chunk's (8192 × 72 bytes
// by default), which, touched fresh for every rank, was the largest cost
// of analysing 1024 ranks. Do not mix with NextChunk within a chunk.
func (r *Reader) NextEvents(dst []Event, max int) ([]Event, error) {
	if max <= 0 {
		return r.NextChunk(dst)
	}
	for {
		if r.dec.streaming {
			out, err := r.dec.more(dst[:0], max)
			if len(out) > 0 {
				r.streamLast = out[len(out)-1].EnterNS
				r.streamN += len(out)
			}
			if len(out) > 0 || err != nil {
				return out, err
			}
			continue // used up: streaming is off now
		}
		ci, payload, flags, err := r.nextPayload()
		if err != nil {
			return dst[:0], err
		}
		r.streamN = 0
		r.sizeRaw(payload, flags)
		if err := r.dec.start(payload, flags); err != nil {
			r.decodeDamage(ci, "undecodable payload: "+err.Error())
		} else {
			r.seen += uint64(r.dec.events())
			r.dropPayload(flags)
		}
	}
}

// dropPayload lets the compressed payload of the chunk just loaded go
// when nothing refers to it any more: the codec decompressed the block
// into the decoder's own buffer, and without flagTail no column aliases
// the payload. A rank holds its chunk for as long as its events last (the
// whole pass, for a rank of one chunk): ≈ 2.7 kB a rank, 44 MB at
// 16,384 ranks, for one allocation per chunk.
func (r *Reader) dropPayload(flags uint8) {
	if flags&flagTail == 0 {
		putBuf(r.buf)
		r.buf = nil
	}
}

// nextPayload reads the next event chunk whose checksum holds (chunks that
// fail it are recorded as damage and skipped); io.EOF after the last.
func (r *Reader) nextPayload() (ChunkInfo, []byte, uint8, error) {
	for r.next < len(r.meta.Chunks) {
		ci := r.chunkAt(r.next)
		r.next++
		var hb [frameHeaderSize]byte
		err := r.readAt(hb[:], ci.Offset)
		var payload []byte
		if err == nil {
			payload, err = r.payloadAt(ci.Offset, uint32(ci.Bytes))
		}
		if err != nil {
			return ci, nil, 0, fmt.Errorf("trace: %s: reading chunk %d at byte %d: %w", r.meta.Name, ci.Index, ci.Offset, err)
		}
		fh, ok := parseFrameHeader(hb[:])
		if !ok || fh.length != uint32(ci.Bytes) || crc32c(payload) != fh.pcrc {
			r.decodeDamage(ci, "checksum mismatch (file changed since Open)")
			continue
		}
		return ci, payload, fh.flags, nil
	}
	r.checkFooterCount()
	return ChunkInfo{}, nil, 0, io.EOF
}

// checkFooterCount runs once, at the end of the first pass that decoded
// every event chunk: a footer counting other than the events the chunks
// hold means the file was written by more than one process (or not by
// one gclock Writer), and is reported as damage. Files whose chunks were
// lost to damage already are not checked: their counts cannot agree.
func (r *Reader) checkFooterCount() {
	f := r.meta.Footer
	if r.checked || f == nil {
		return
	}
	for _, d := range r.meta.Damage {
		if d.Kind == KindEvents.String() || d.Chunk >= 0 || d.Kind == "" {
			return
		}
	}
	r.checked = true
	if f.Events != r.seen {
		r.damage(-1, 0, 0, KindFooter.String(), fmt.Sprintf(
			"the footer counts %d events, the file's event chunks hold %d (written by more than one process?)",
			f.Events, r.seen))
	}
}

func (r *Reader) decodeDamage(ci ChunkInfo, what string) {
	if r.bad[ci.Index] {
		return
	}
	r.bad[ci.Index] = true
	r.meta.decodeFailed++
	r.damage(ci.Index, ci.Offset, int64(frameHeaderSize+ci.Bytes), KindEvents.String(), what)
}

// Rewind makes the next NextChunk return the first chunk again.
func (r *Reader) Rewind() { r.next, r.dec.streaming, r.seen = 0, false, 0 }

// ReadAll rewinds and returns the events of every intact chunk, in file
// order.
func (r *Reader) ReadAll() ([]Event, error) {
	r.Rewind()
	var all, chunk []Event
	for {
		var err error
		chunk, err = r.NextChunk(chunk)
		if errors.Is(err, io.EOF) {
			return all, nil
		}
		if err != nil {
			return all, err
		}
		all = append(all, chunk...)
	}
}

// HasMagic reports whether b (the first bytes of a file) starts with the
// gclock trace magic, for telling trace files from other files cheaply.
func HasMagic(b []byte) bool { return bytes.HasPrefix(b, []byte(Magic)) }

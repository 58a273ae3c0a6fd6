package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// MaxChunkEvents bounds the events in one EVENTS frame. WriteEvents splits
// longer slices into several frames; the reader rejects larger counts.
const MaxChunkEvents = 1 << 20

// chunkLayout is the column layout version inside the EVENTS payloads
// this package writes: 4, layout 3 (templates with the timing columns'
// values in as many bytes as each needs and their widths in a column of
// their own) in which an event with the enter and exit times of the event
// before it (the records of one call: a MPI_Waitall's completions) holds
// no timing values, only twSame in its widths byte (format 6,
// docs/reference/trace-format.md, D91). Chunks of layout 3 (files of
// format 5.x), layout 2 (format 2.x to 4.x) and layout 1 (format 1.x) are
// still read.
const chunkLayout = 4

// layout3 is the layout of format 5.x files, which the Writer still writes
// with withFormat5 (tests of the format-5 decoder path).
const layout3 = 3

// oldChunkLayout is the layout of format 2.x to 4.x files, which the
// Writer still writes with withFormat4 (tests of the old decoder path).
const oldChunkLayout = 2

// maxDecoded bounds the decompressed size of one EVENTS payload.
const maxDecoded = 256 << 20

// chunkPayload is the msgpack form (an array, in this field order) of one
// event chunk, before compression. Every column is a byte string of N
// varints (encoding/binary: Uvarint for unsigned, zigzag Varint for
// signed); an empty column means "all N values are zero". Layout 1 has
// every field in its own column; layout 2 leaves Op, Comm, Root, Sent,
// Recv, Site, Peer and Tag empty, keeps them in Templates and gives each
// event a template index (Tmpl), and codes Req as differences; layout 3
// is layout 2 with Enter and Dur's zigzag values in 1 to 8 little-endian
// bytes each, as TW says (one byte per event: Enter's width minus one in
// bits 0-2, twSeq, Dur's width minus one in bits 4-6, bit 7 zero), and
// only the Seq differences other than 0 in Seq (the events with twSeq). See docs/reference/trace-format.md.
type chunkPayload struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Layout    uint8    // chunkLayout
	N         int      // events in the chunk
	Op        []byte   // uvarint op
	Comm      []byte   // uvarint comm local index
	Seq       []byte   // varint seq - (previous seq on same comm in chunk + 1); previous starts at -1
	Root      []byte   // varint root
	Sent      []byte   // uvarint bytes sent
	Recv      []byte   // uvarint bytes received
	Enter     []byte   // varint: first = EnterNS; then EnterNS - previous ExitNS
	Dur       []byte   // varint ExitNS - EnterNS
	Site      []byte   // uvarint index into Sites
	Sites     []uint64 // distinct callsites in first-appearance order
	Peer      []byte   // varint peer
	Tag       []byte   // varint tag
	Req       []byte   // layout 1: uvarint request id; 2: 0 = none, else 1 + zigzag(Req - previous non-zero Req)
	Tmpl      []byte   // layout 2: uvarint template index
	Templates []byte   // layout 2: per template op, comm, root, sent, recv, site index, peer, tag
	TW        []byte   // layout 3: per event the widths minus one of its Enter (bits 0-2) and Dur (bits 4-6) values, twSeq
}

// multiRecord reports whether op may write several records per call
// (Op.Continues' ops), whose seq numbers a record 0, 1, ... of one call.
// Layout 3 expects such an event's seq to be its template's previous one
// in the chunk (0 at first: the n-th record of a call is a template of
// its own, with seq n) and every other event's the previous seq of the
// other events on its comm, plus 1; layout 2 expects the latter for all.
func multiRecord(op Op) bool {
	return op >= OpSend && op <= OpRequestFree || op == OpWinPost || op == OpWinStart
}

// twSeq marks, in an event's TW byte (layout 3), a Seq difference other
// than 0: the next value of the Seq column. An event without it has the
// difference 0.
const twSeq = 0x08

// twSame marks, in an event's TW byte (layout 4), an event whose EnterNS
// and ExitNS are those of the event before it in the chunk: it has no
// value in the Enter and Dur columns, and its width bits are 0. The
// records of one call that writes several (MPI_Waitall's completions,
// MPI_Startall's starts) share the call's times (D91).
const twSame = 0x80

// chunkPayload2 is chunkPayload as layout 2 packs it (no TW element).
type chunkPayload2 struct {
	_msgpack                     struct{} `msgpack:",as_array"`
	Layout                       uint8
	N                            int
	Op, Comm, Seq, Root          []byte
	Sent, Recv, Enter, Dur, Site []byte
	Sites                        []uint64
	Peer, Tag, Req, Tmpl, Tmpls  []byte
}

// encoders are shared per level: creating a zstd encoder is expensive and
// EncodeAll is safe for concurrent use.
var (
	encMu    sync.Mutex
	encoders = map[zstd.EncoderLevel]*zstd.Encoder{}

	decOnce sync.Once
	decoder *zstd.Decoder
	decErr  error
)

func sharedEncoder(level zstd.EncoderLevel) (*zstd.Encoder, error) {
	encMu.Lock()
	defer encMu.Unlock()
	if e, ok := encoders[level]; ok {
		return e, nil
	}
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level),
		zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
	if err != nil {
		return nil, fmt.Errorf("trace: creating zstd encoder: %w", err)
	}
	encoders[level] = e
	return e, nil
}

func sharedDecoder() (*zstd.Decoder, error) {
	decOnce.Do(func() {
		decoder, decErr = zstd.NewReader(nil,
			zstd.WithDecoderMaxMemory(maxDecoded),
			zstd.WithDecoderConcurrency(0))
		if decErr != nil {
			decErr = fmt.Errorf("trace: creating zstd decoder: %w", decErr)
		}
	})
	return decoder, decErr
}

// chunkEncoder holds reusable buffers for encoding event chunks.
type chunkEncoder struct {
	p    chunkPayload
	cols [6][]byte // seq, enter, dur, req, tmpl, tw
	// layout is the chunk layout written: chunkLayout, layout3 for a
	// writer made withFormat5, oldChunkLayout for one made withFormat4; 0
	// means chunkLayout.
	layout uint8
	trows  []byte
	sites  map[uint64]uint64
	tmpls  map[tmplKey]uint64
	// tmplCache is a direct-mapped cache in front of tmpls: a few dozen
	// templates make up a regular program's chunk, and a map lookup per
	// event would be most of the encoding time. Entries hold index+1.
	tmplCache [256]struct {
		k    tmplKey
		idx1 uint64
	}
	// keys and next hold each template and the one that followed it last
	// (index+1): a program repeats its sequence of calls, so that one is
	// tried first.
	keys   []tmplKey
	next   []uint64
	tseq   []int64 // layout 3: each multi-record template's last seq (multiRecord)
	nsites []uint64
	seq    seqTracker
	mp     []byte
	blk    []byte // the S2 block before it is framed
}

// tmplKey is what a layout-2 template holds: the fields of an event other
// than its seq, times and request id.
type tmplKey struct {
	sent, recv, site uint64
	comm             uint32
	root, peer, tag  int32
	op               Op
}

func (k *tmplKey) hash() uint64 {
	a := k.site ^ uint64(k.op)<<48 ^ uint64(uint32(k.peer))<<16 ^ uint64(uint32(k.root))<<40
	b := k.sent ^ k.recv<<24 ^ uint64(uint32(k.tag))<<32 ^ uint64(k.comm)
	return a*0x9E3779B97F4A7C15 ^ b*0xC2B2AE3D27D4EB4F
}

// Columns is one event chunk split into the columns of chunk layout 4
// (chunkPayload's fields, see docs/reference/trace-format.md): N events; Tmpl
// and Req columns of N varints each (an all-zero Req column left empty);
// Seq the varint Seq differences other than 0, of the events TW flags
// (twSeq; layout 2: N varints); Enter and Dur a zigzag value in 1 to 8
// little-endian bytes for each event without twSame (layout 3: for every
// event), their widths minus one in TW (N bytes: Enter's in bits 0-2,
// Dur's in bits 4-6; 0 with twSame; empty in layout 2, whose Enter and Dur
// are varints); Templates the rows of the fields events share (op, comm,
// root, sent, recv, call-site index, peer, tag) in first-use order; Sites
// the distinct call sites in first-use order. The recorder builds it in C
// straight from its buffer records (cshim/encode.c) and writes it with
// Writer.WriteColumns; EncodeColumns builds the same bytes from Events (the
// reference the C encoder is tested against).
type Columns struct {
	N int
	// Calls counts the events that start a call (not Op.Continues); the
	// Writer sums it into Footer.Calls. Not stored in the chunk.
	Calls int
	// First and Last are the chunk's earliest and latest local enter
	// times when Spanned; the writer then follows the EVENTS frame with a
	// SPAN frame (tracemerge orders a rank's overlapping chunks with it).
	First, Last                    int64
	Spanned                        bool
	Seq, Enter, Dur, Req, Tmpl, TW []byte
	Templates                      []byte
	Sites                          []uint64
}

// EncodeColumns splits evs into the columns of one chunk (Writer.
// WriteEvents' encoding).
func EncodeColumns(evs []Event) Columns {
	var c chunkEncoder
	return c.columns(evs)
}

// columns splits evs into the columns of a chunk of c's layout; the
// result aliases buffers of c that the next call reuses.
func (c *chunkEncoder) columns(evs []Event) Columns {
	for i := range c.cols {
		c.cols[i] = c.cols[i][:0]
	}
	c.trows = c.trows[:0]
	if c.sites == nil {
		c.sites = make(map[uint64]uint64)
		c.tmpls = make(map[tmplKey]uint64)
	}
	clear(c.sites)
	clear(c.tmpls)
	clear(c.tmplCache[:])
	c.keys, c.next, c.tseq = c.keys[:0], c.next[:0], c.tseq[:0]
	c.seq.reset()
	sites := c.nsites[:0]
	var prevEnter, prevExit int64
	var prevReq uint32
	anyReq := false
	prev := -1
	calls := 0
	old := c.layout == oldChunkLayout
	same := c.layout == 0 || c.layout == chunkLayout // twSame is written
	for i := range evs {
		e := &evs[i]
		if !e.Op.Continues(e.Seq) {
			calls++
		}
		k := tmplKey{sent: e.Sent, recv: e.Recv, site: e.Callsite, comm: e.Comm,
			root: e.Root, peer: e.Peer, tag: e.Tag, op: e.Op}
		var idx uint64
		if prev >= 0 && c.next[prev] != 0 && c.keys[c.next[prev]-1] == k {
			idx = c.next[prev] - 1
		} else if ce := &c.tmplCache[k.hash()>>56]; ce.idx1 != 0 && ce.k == k {
			idx = ce.idx1 - 1
		} else {
			var ok bool
			idx, ok = c.tmpls[k]
			if !ok {
				idx = uint64(len(c.tmpls))
				c.tmpls[k] = idx
				c.keys = append(c.keys, k)
				c.next = append(c.next, 0)
				c.tseq = append(c.tseq, 0)
				si, ok := c.sites[e.Callsite]
				if !ok {
					si = uint64(len(sites))
					c.sites[e.Callsite] = si
					sites = append(sites, e.Callsite)
				}
				c.trows = putU(c.trows, uint64(e.Op))
				c.trows = putU(c.trows, uint64(e.Comm))
				c.trows = putS(c.trows, int64(e.Root))
				c.trows = putU(c.trows, e.Sent)
				c.trows = putU(c.trows, e.Recv)
				c.trows = putU(c.trows, si)
				c.trows = putS(c.trows, int64(e.Peer))
				c.trows = putS(c.trows, int64(e.Tag))
			}
			ce.k, ce.idx1 = k, idx+1
		}
		if prev >= 0 {
			c.next[prev] = idx + 1
		}
		prev = int(idx)
		c.cols[4] = putU(c.cols[4], idx)
		var sd int64
		if !old && multiRecord(e.Op) {
			sd = int64(e.Seq) - c.tseq[idx]
			c.tseq[idx] = int64(e.Seq)
		} else {
			sd = int64(e.Seq) - (c.seq.last(e.Comm) + 1)
			c.seq.set(e.Comm, int64(e.Seq))
		}
		flag := byte(0)
		if old || sd != 0 {
			c.cols[0] = putS(c.cols[0], sd)
			flag = twSeq
		}
		gap := e.EnterNS - prevExit // the first event's is its EnterNS
		if i == 0 {
			gap = e.EnterNS
		}
		if same && i > 0 && e.EnterNS == prevEnter && e.ExitNS == prevExit {
			c.cols[5] = append(c.cols[5], flag|twSame) // no timing values
		} else if old {
			c.cols[1] = putS(c.cols[1], gap)
			c.cols[2] = putS(c.cols[2], e.ExitNS-e.EnterNS)
		} else {
			g, d := zigzag(gap), zigzag(e.ExitNS-e.EnterNS)
			wg, wd := width8(g), width8(d)
			c.cols[1] = putLE(c.cols[1], g, wg)
			c.cols[2] = putLE(c.cols[2], d, wd)
			c.cols[5] = append(c.cols[5], byte(wg-1)|flag|byte(wd-1)<<4)
		}
		prevEnter, prevExit = e.EnterNS, e.ExitNS
		if e.Req == 0 {
			c.cols[3] = append(c.cols[3], 0)
		} else {
			d := int64(e.Req) - int64(prevReq)
			c.cols[3] = putU(c.cols[3], uint64(d<<1)^uint64(d>>63)+1)
			prevReq = e.Req
			anyReq = true
		}
	}
	c.nsites = sites
	req := c.cols[3]
	if !anyReq {
		req = nil // all zero: stored empty
	}
	first, last := int64(0), int64(0)
	for i := range evs {
		if e := evs[i].EnterNS; i == 0 || e < first {
			first = e
		}
		last = max(last, evs[i].EnterNS)
	}
	var tw []byte
	seq := c.cols[0]
	if !old {
		tw = c.cols[5]
		if len(seq) == 0 {
			seq = nil // no difference other than 0: stored empty
		}
	}
	return Columns{N: len(evs), Calls: calls, Seq: seq, Enter: c.cols[1], Dur: c.cols[2], Req: req,
		Tmpl: c.cols[4], TW: tw, Templates: c.trows, Sites: sites, First: first, Last: last, Spanned: len(evs) > 0}
}

// encode appends the compressed EVENTS payload for evs to dst: zstd with
// enc, S2 when enc is nil.
func (c *chunkEncoder) encode(dst []byte, evs []Event, enc *zstd.Encoder) ([]byte, error) {
	cols := c.columns(evs)
	return c.compress(dst, &cols, enc)
}

// chunkPayloadTail is chunkPayload as the S2 writer packs it: the enter
// and dur columns are not in the compressed block but follow it raw
// (flagTail), and their elements hold their lengths.
type chunkPayloadTail struct {
	_msgpack                    struct{} `msgpack:",as_array"`
	Layout                      uint8
	N                           int
	Op, Comm, Seq               []byte
	Root, Sent, Recv            []byte
	EnterLen, DurLen            uint64
	Site                        []byte
	Sites                       []uint64
	Peer, Tag, Req, Tmpl, Tmpls []byte
	TW                          []byte
}

// chunkPayloadTail2 is chunkPayloadTail of layout 2 (no TW element).
type chunkPayloadTail2 struct {
	_msgpack                    struct{} `msgpack:",as_array"`
	Layout                      uint8
	N                           int
	Op, Comm, Seq               []byte
	Root, Sent, Recv            []byte
	EnterLen, DurLen            uint64
	Site                        []byte
	Sites                       []uint64
	Peer, Tag, Req, Tmpl, Tmpls []byte
}

// chunkFlags is the EVENTS frame flags of chunks compressed with enc:
// zstd compresses everything; S2 (enc nil) leaves the enter and dur
// columns out of its block (docs/reference/trace-format.md, D21).
func chunkFlags(enc *zstd.Encoder) uint8 {
	if enc == nil {
		return flagS2 | flagTail
	}
	return flagZstd
}

// compress appends cols as a compressed EVENTS payload to dst (frame flags
// chunkFlags(enc)).
func (c *chunkEncoder) compress(dst []byte, cols *Columns, enc *zstd.Encoder) ([]byte, error) {
	var err error
	old := c.layout == oldChunkLayout
	if enc != nil {
		if old {
			p := chunkPayload2{Layout: oldChunkLayout, N: cols.N, Seq: cols.Seq, Enter: cols.Enter, Dur: cols.Dur,
				Sites: cols.Sites, Req: cols.Req, Tmpl: cols.Tmpl, Tmpls: cols.Templates}
			c.mp, err = marshalAppend(c.mp[:0], &p)
		} else {
			c.p = chunkPayload{
				Layout: c.written(), N: cols.N,
				Seq: cols.Seq, Enter: cols.Enter, Dur: cols.Dur, Sites: cols.Sites,
				Req: cols.Req, Tmpl: cols.Tmpl, Templates: cols.Templates, TW: cols.TW,
			}
			c.mp, err = marshalAppend(c.mp[:0], &c.p)
			c.p = chunkPayload{} // drop aliases of the caller's memory
		}
		if err != nil {
			return dst, fmt.Errorf("encoding event chunk: %w", err)
		}
		return enc.EncodeAll(c.mp, dst), nil
	}
	// S2: the timing columns are mostly jitter, which S2 compresses about
	// 2.5× at a third of a flush's CPU time; they are stored raw after the
	// block instead.
	if old {
		pt := chunkPayloadTail2{
			Layout: oldChunkLayout, N: cols.N,
			Seq: cols.Seq, EnterLen: uint64(len(cols.Enter)), DurLen: uint64(len(cols.Dur)), Sites: cols.Sites,
			Req: cols.Req, Tmpl: cols.Tmpl, Tmpls: cols.Templates,
		}
		c.mp, err = marshalAppend(c.mp[:0], &pt)
	} else {
		pt := chunkPayloadTail{
			Layout: c.written(), N: cols.N,
			Seq: cols.Seq, EnterLen: uint64(len(cols.Enter)), DurLen: uint64(len(cols.Dur)), Sites: cols.Sites,
			Req: cols.Req, Tmpl: cols.Tmpl, Tmpls: cols.Templates, TW: cols.TW,
		}
		c.mp, err = marshalAppend(c.mp[:0], &pt)
	}
	if err != nil {
		return dst, fmt.Errorf("encoding event chunk: %w", err)
	}
	n := s2.MaxEncodedLen(len(c.mp))
	if n < 0 {
		return dst, fmt.Errorf("encoding event chunk: %d bytes too large for S2", len(c.mp))
	}
	c.blk = slices.Grow(c.blk[:0], n)
	blk := s2.Encode(c.blk[:n], c.mp)
	dst = binary.AppendUvarint(dst, uint64(len(blk)))
	dst = append(dst, blk...)
	dst = append(dst, cols.Enter...)
	return append(dst, cols.Dur...), nil
}

// written is the layout c writes (chunkLayout when c.layout is 0).
func (c *chunkEncoder) written() uint8 {
	if c.layout == 0 {
		return chunkLayout
	}
	return c.layout
}

// putU appends v as a uvarint; values below 128 (most columns' usual
// values) take one append.
func putU(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return binary.AppendUvarint(b, v)
}

// putS appends v as a zigzag varint (binary.AppendVarint's encoding).
func putS(b []byte, v int64) []byte {
	return putU(b, zigzag(v))
}

// zigzag maps small magnitudes to small values (encoding/binary's varint
// mapping).
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// width8 is the number of bytes that hold v, 1 to 8 (0 takes one): the
// width of a layout-3 timing value.
func width8(v uint64) int { return (bits.Len64(v|1) + 7) >> 3 }

// putLE appends the w low bytes of v, little-endian.
func putLE(b []byte, v uint64, w int) []byte {
	var a [8]byte
	binary.LittleEndian.PutUint64(a[:], v)
	return append(b, a[:w]...)
}

// marshalAppend msgpack-encodes v, reusing buf's storage. Map keys are
// sorted so equal input gives byte-identical files.
func marshalAppend(buf []byte, v any) ([]byte, error) {
	w := sliceWriter{b: buf}
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&w)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return buf, err
	}
	return w.b, nil
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// chunkDecoder holds reusable buffers for decoding event chunks.
type chunkDecoder struct {
	raw []byte
	p   chunkPayload
	br  bytes.Reader
	md  *msgpack.Decoder
	seq seqTracker
	tm  []Event // layouts 2 and 3: the templates' fields
	tsq []int64 // layout 3: each multi-record template's last seq
	s2  stream2 // layouts 2 and 3: the chunk being decoded

	// Pieces (Reader.NextEvents): a checked chunk handed out max events at
	// a time; layout 1 is decoded whole into whole first.
	streaming bool
	whole     []Event
	wholeAt   int
}

// stream2 is the running state of a layout-2 chunk's decoding, kept
// between pieces.
type stream2 struct {
	cols      [5]column
	tw        []byte // layouts 3 and 4: the timing widths, one byte per event; nil in layout 2
	n, i      int
	prevEnter int64
	prevExit  int64
	prevReq   uint32
}

// seqTracker remembers the last Seq per comm index within one chunk: a
// small array for the usual low indices, a map beyond.
type seqTracker struct {
	small [16]int64
	big   map[uint32]int64
}

func (s *seqTracker) reset() {
	for i := range s.small {
		s.small[i] = -1
	}
	clear(s.big)
}

func (s *seqTracker) last(comm uint32) int64 {
	if comm < uint32(len(s.small)) {
		return s.small[comm]
	}
	if v, ok := s.big[comm]; ok {
		return v
	}
	return -1
}

func (s *seqTracker) set(comm uint32, v int64) {
	if comm < uint32(len(s.small)) {
		s.small[comm] = v
		return
	}
	if s.big == nil {
		s.big = make(map[uint32]int64)
	}
	s.big[comm] = v
}

// chunkFields is the number of array elements of a layout-1 chunk,
// chunkFields2 of a layout-2 chunk; later minor versions may append more,
// which are skipped.
const (
	chunkFields  = 15
	chunkFields2 = 17
	chunkFields3 = 18
)

// parse decodes the msgpack array of a chunk payload without reflection;
// the byte columns alias raw (no copies). A layout-2 enter or dur element
// that is an integer is that column's length in tail, the raw bytes after
// the compressed block (flagTail), taken in element order; the tail must
// be used up exactly.
func (d *chunkDecoder) parse(raw, tail []byte) error {
	if d.md == nil {
		d.md = msgpack.NewDecoder(nil)
	}
	d.br.Reset(raw)
	md := d.md
	md.Reset(&d.br)
	n, err := md.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < chunkFields {
		return fmt.Errorf("chunk array has %d elements, want at least %d", n, chunkFields)
	}
	sites := d.p.Sites[:0]
	d.p = chunkPayload{}
	lay, err := md.DecodeUint8()
	if err != nil {
		return fmt.Errorf("layout: %w", err)
	}
	d.p.Layout = lay
	switch {
	case lay == 1:
	case lay == 2 && n >= chunkFields2:
	case lay == 2:
		return fmt.Errorf("layout 2 chunk array has %d elements, want at least %d", n, chunkFields2)
	case (lay == 3 || lay == 4) && n >= chunkFields3:
	case lay == 3 || lay == 4:
		return fmt.Errorf("layout %d chunk array has %d elements, want at least %d", lay, n, chunkFields3)
	default:
		return fmt.Errorf("chunk layout %d unknown (this reader reads layouts 1 to 4: a file from a newer gclock?)", lay)
	}
	if d.p.N, err = md.DecodeInt(); err != nil {
		return fmt.Errorf("event count: %w", err)
	}
	bin := func(name string) ([]byte, error) {
		k, err := md.DecodeBytesLen()
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", name, err)
		}
		if k <= 0 {
			return nil, nil
		}
		pos := len(raw) - d.br.Len()
		if k > d.br.Len() {
			return nil, fmt.Errorf("column %s: %d bytes, only %d left", name, k, d.br.Len())
		}
		if _, err := d.br.Seek(int64(k), io.SeekCurrent); err != nil {
			return nil, err
		}
		return raw[pos : pos+k : pos+k], nil
	}
	// fromTail takes an integer element's column out of tail.
	fromTail := func(name string) ([]byte, error) {
		k, err := md.DecodeUint64()
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", name, err)
		}
		if k > uint64(len(tail)) {
			return nil, fmt.Errorf("column %s: %d bytes after the compressed block, only %d left", name, k, len(tail))
		}
		c := tail[:k:k]
		tail = tail[k:]
		if k == 0 {
			return nil, nil
		}
		return c, nil
	}
	cols := []*[]byte{&d.p.Op, &d.p.Comm, &d.p.Seq, &d.p.Root, &d.p.Sent, &d.p.Recv, &d.p.Enter, &d.p.Dur, &d.p.Site}
	names := []string{"op", "comm", "seq", "root", "sent", "recv", "enter", "dur", "site"}
	for i, c := range cols {
		if lay >= 2 && (i == 6 || i == 7) {
			code, err := md.PeekCode()
			if err != nil {
				return fmt.Errorf("column %s: %w", names[i], err)
			}
			if msgpcode.IsFixedNum(code) || (code >= msgpcode.Uint8 && code <= msgpcode.Int64) {
				if *c, err = fromTail(names[i]); err != nil {
					return err
				}
				continue
			}
		}
		if *c, err = bin(names[i]); err != nil {
			return err
		}
	}
	ns, err := md.DecodeArrayLen()
	if err != nil {
		return fmt.Errorf("callsite dictionary: %w", err)
	}
	if ns > d.br.Len() {
		return fmt.Errorf("callsite dictionary: %d entries in %d bytes", ns, d.br.Len())
	}
	for i := 0; i < ns; i++ {
		v, err := md.DecodeUint64()
		if err != nil {
			return fmt.Errorf("callsite dictionary: %w", err)
		}
		sites = append(sites, v)
	}
	d.p.Sites = sites
	for i, c := range []*[]byte{&d.p.Peer, &d.p.Tag, &d.p.Req} {
		if *c, err = bin([]string{"peer", "tag", "req"}[i]); err != nil {
			return err
		}
	}
	known := chunkFields
	if lay >= 2 {
		if d.p.Tmpl, err = bin("tmpl"); err != nil {
			return err
		}
		if d.p.Templates, err = bin("templates"); err != nil {
			return err
		}
		known = chunkFields2
	}
	if lay >= 3 {
		if d.p.TW, err = bin("tw"); err != nil {
			return err
		}
		known = chunkFields3
	}
	for i := known; i < n; i++ {
		if err := md.Skip(); err != nil {
			return fmt.Errorf("extension element %d: %w", i, err)
		}
	}
	if len(tail) != 0 {
		return fmt.Errorf("%d bytes after the compressed block that no column uses", len(tail))
	}
	return nil
}

var errColumn = errors.New("bad column")

// column iterates over the varints of one column.
type column struct {
	name string
	b    []byte
	n    int // values expected
	got  int
	err  error
}

func (c *column) uvarint() uint64 {
	if c.err != nil || c.b == nil {
		return 0 // a nil (empty) column is all zeros
	}
	v, k := binary.Uvarint(c.b)
	if k <= 0 {
		c.err = fmt.Errorf("column %s: value %d: truncated or overlong varint: %w", c.name, c.got, errColumn)
		return 0
	}
	c.b = c.b[k:]
	c.got++
	return v
}

func (c *column) varint() int64 {
	u := c.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// needVarint reads a zigzag varint that must be there: the column is not
// one of all zeros (layout 3's seq column, whose values the widths column
// flags).
func (c *column) needVarint() int64 {
	if c.err == nil && c.b == nil {
		c.err = fmt.Errorf("column %s: value %d: the column holds no more: %w", c.name, c.got, errColumn)
		return 0
	}
	return c.varint()
}

// fixed reads a layout-3 timing value of w bytes (1 to 8), little-endian
// and zigzag-coded.
func (c *column) fixed(w int) int64 {
	if c.err != nil {
		return 0
	}
	if w < 1 || w > 8 {
		c.err = fmt.Errorf("column %s: value %d: width %d outside 1..8: %w", c.name, c.got, w, errColumn)
		return 0
	}
	if len(c.b) < w {
		c.err = fmt.Errorf("column %s: value %d: %d bytes, only %d left: %w", c.name, c.got, w, len(c.b), errColumn)
		return 0
	}
	var u uint64
	for k := w - 1; k >= 0; k-- {
		u = u<<8 | uint64(c.b[k])
	}
	c.b = c.b[w:]
	c.got++
	return int64(u>>1) ^ -int64(u&1)
}

func (c *column) check() error {
	if c.err != nil {
		return c.err
	}
	if c.got != 0 && c.got != c.n {
		return fmt.Errorf("column %s: %d values, want %d: %w", c.name, c.got, c.n, errColumn)
	}
	if len(c.b) != 0 {
		return fmt.Errorf("column %s: %d trailing bytes: %w", c.name, len(c.b), errColumn)
	}
	return nil
}

// decode decompresses (flags: flagZstd or flagS2, either with flagTail)
// and decodes one EVENTS payload into dst[:0].
func (d *chunkDecoder) decode(dst []Event, payload []byte, flags uint8) ([]Event, error) {
	if err := d.load(payload, flags); err != nil {
		return dst[:0], err
	}
	if d.p.Layout >= 2 {
		return d.decode2(dst)
	}
	return d.decode1(dst)
}

// start prepares the chunk in payload to be handed out in pieces (more):
// the whole chunk is checked first (check2), so an undecodable chunk is
// refused whole as decode refuses it, but no event is written (layouts 2
// to 4; a layout-1 chunk is decoded whole into d.whole).
func (d *chunkDecoder) start(payload []byte, flags uint8) error {
	d.streaming = false
	if err := d.load(payload, flags); err != nil {
		return err
	}
	if d.p.Layout < 2 {
		w, err := d.decode1(d.whole)
		d.whole = w
		if err != nil {
			return err
		}
		d.wholeAt, d.streaming = 0, true
		return nil
	}
	if err := d.prep2(); err != nil {
		return err
	}
	first := d.s2 // the columns at the first event (check2 moves d.s2's own slices on)
	if !d.checkFast() {
		if err := d.check2(); err != nil {
			return err
		}
		if err := d.end2(); err != nil {
			return err
		}
	}
	// again from the first event: prep2's state, which check2 did not
	// touch but for d.s2 (the templates, seq trackers and widths stand)
	d.s2 = first
	d.wholeAt, d.streaming = -1, true
	return nil
}

// checkFast is check2 and end2 at once for a chunk of layout 3 or 4 whose
// columns are all well formed, as nearly every chunk is, by their lengths
// and bytes instead of value by value: every template index one byte
// below the number of templates, the timing columns exactly as long as
// the widths of the events with times, the seq and req columns exactly
// as many varints of at most 9 bytes as the widths and the event count
// want. True: check2 and end2 would pass the chunk. False: something is
// off or unusual, and check2 and end2 find what, with their messages. It
// changes no state.
func (d *chunkDecoder) checkFast() bool {
	st := &d.s2
	if st.tw == nil || st.i != 0 || len(d.tm) > 0x80 {
		return false
	}
	cols := &st.cols
	nt := len(d.tm)
	if len(cols[0].b) != st.n {
		return false
	}
	for _, b := range cols[0].b {
		if int(b) >= nt {
			return false
		}
	}
	// widths 1 to 8 (prep2 refused the others where twSame is set)
	we, wd, nseq := 0, 0, 0
	for _, w := range st.tw {
		if w&twSeq != 0 {
			nseq++
		}
		if w&twSame == 0 {
			we += int(w&7) + 1
			wd += int(w>>4) + 1
		}
	}
	if we != len(cols[2].b) || wd != len(cols[3].b) || !varints(cols[1].b, nseq) {
		return false
	}
	return cols[4].b == nil || varints(cols[4].b, st.n) // no req column: all zeros
}

// varints reports whether b holds exactly k varints, none longer than 9
// bytes (binary.Uvarint reads every such one; a longer one is left to it).
func varints(b []byte, k int) bool {
	if len(b) > 0 && b[len(b)-1] >= 0x80 {
		return false
	}
	run, cnt := 0, 0
	for _, c := range b {
		if c < 0x80 {
			cnt, run = cnt+1, 0
		} else if run++; run >= 9 {
			return false
		}
	}
	return cnt == k
}

// check2 reads the rest of the prepared layout-2, 3 or 4 chunk's columns
// as more2 does and stops where more2 would stop, with more2's error,
// without writing the events: start's check of a chunk it then hands out
// in pieces. It decoded the events into a scratch buffer before
// (2026-11-29, D97): every event of a rank read in pieces was decoded
// twice, and the first decode, the template copy and the seq bookkeeping
// included, cost more than the walk over the columns
// (TestStart_CheckFindsWhatDecodeFinds keeps both in step).
func (d *chunkDecoder) check2() error {
	st := &d.s2
	cols := &st.cols
	nt := uint64(len(d.tm))
	for i := st.i; i < st.n; i++ {
		if ti := cols[0].uvarint(); ti >= nt {
			if cols[0].err != nil {
				break // end2 reports it
			}
			return fmt.Errorf("column tmpl: index %d at event %d outside the chunk's %d templates: %w", ti, i, len(d.tm), errColumn)
		}
		var w byte
		if st.tw != nil {
			w = st.tw[i]
			if w&twSeq != 0 {
				cols[1].needVarint()
			}
		} else {
			cols[1].uvarint()
		}
		if w&twSame == 0 {
			if st.tw != nil {
				cols[2].fixed(int(w&7) + 1)
				cols[3].fixed(int(w>>4) + 1)
			} else {
				cols[2].uvarint()
				cols[3].uvarint()
			}
		}
		cols[4].uvarint()
	}
	st.i = st.n
	return nil
}

// events is the number of events of the chunk start prepared.
func (d *chunkDecoder) events() int {
	if d.wholeAt >= 0 {
		return len(d.whole)
	}
	return d.s2.n
}

// more appends up to max events of the started chunk to dst; none when
// the chunk is used up (then streaming is off).
func (d *chunkDecoder) more(dst []Event, max int) ([]Event, error) {
	if !d.streaming {
		return dst, nil
	}
	if d.wholeAt >= 0 {
		k := min(max, len(d.whole)-d.wholeAt)
		dst = append(dst, d.whole[d.wholeAt:d.wholeAt+k]...)
		if d.wholeAt += k; d.wholeAt >= len(d.whole) {
			d.streaming = false
		}
		return dst, nil
	}
	out, err := d.more2(dst, max)
	if err != nil || d.s2.i >= d.s2.n {
		d.streaming = false
	}
	return out, err
}

// load decompresses one EVENTS payload and parses its columns into d.p.
func (d *chunkDecoder) load(payload []byte, flags uint8) error {
	var tail []byte
	if flags&flagTail != 0 {
		l, k := binary.Uvarint(payload)
		if k <= 0 || l > uint64(len(payload)-k) {
			return fmt.Errorf("event chunk: compressed block length unreadable or beyond the %d-byte payload", len(payload))
		}
		payload, tail = payload[k:k+int(l)], payload[k+int(l):]
		flags &^= flagTail
	}
	switch flags {
	case flagZstd:
		dec, err := sharedDecoder()
		if err != nil {
			return err
		}
		if d.raw, err = dec.DecodeAll(payload, d.raw[:0]); err != nil {
			return fmt.Errorf("zstd: %w", err)
		}
	case flagS2:
		n, err := s2.DecodedLen(payload)
		if err != nil {
			return fmt.Errorf("s2: %w", err)
		}
		if n > maxDecoded {
			return fmt.Errorf("s2: block decodes to %d bytes, more than %d", n, maxDecoded)
		}
		if cap(d.raw) < n {
			d.raw = make([]byte, n)
		}
		if d.raw, err = s2.Decode(d.raw[:n], payload); err != nil {
			return fmt.Errorf("s2: %w", err)
		}
	default:
		return fmt.Errorf("event chunk flags 0x%02x: want exactly one codec (zstd or s2)", flags)
	}
	if err := d.parse(d.raw, tail); err != nil {
		return fmt.Errorf("msgpack: %w", err)
	}
	return nil
}

// decode1 decodes the parsed layout-1 chunk d.p into dst[:0].
func (d *chunkDecoder) decode1(dst []Event) ([]Event, error) {
	p := &d.p
	n := p.N
	// Every event has a non-empty op varint, so n is bounded by the data
	// actually present; this stops a tiny payload from allocating n events.
	if n > 0 && len(p.Op) < n {
		return dst[:0], fmt.Errorf("column op: %d bytes for %d events: %w", len(p.Op), n, errColumn)
	}
	cols := [12]column{
		{name: "op", b: p.Op}, {name: "comm", b: p.Comm}, {name: "seq", b: p.Seq},
		{name: "root", b: p.Root}, {name: "sent", b: p.Sent}, {name: "recv", b: p.Recv},
		{name: "enter", b: p.Enter}, {name: "dur", b: p.Dur}, {name: "site", b: p.Site},
		{name: "peer", b: p.Peer}, {name: "tag", b: p.Tag}, {name: "req", b: p.Req},
	}
	for i := range cols {
		cols[i].n = n
		if len(cols[i].b) == 0 {
			cols[i].b = nil
		}
	}
	if cap(dst) < n {
		dst = make([]Event, n)
	}
	dst = dst[:n]
	d.seq.reset()
	var prevExit int64
	for i := 0; i < n; i++ {
		e := &dst[i]
		op := cols[0].uvarint()
		if op > 0xffff {
			return dst[:0], fmt.Errorf("column op: value %d at event %d out of range: %w", op, i, errColumn)
		}
		e.Op = Op(op)
		comm := cols[1].uvarint()
		if comm > 0xffffffff {
			return dst[:0], fmt.Errorf("column comm: value %d at event %d out of range: %w", comm, i, errColumn)
		}
		e.Comm = uint32(comm)
		sq := d.seq.last(e.Comm) + 1 + cols[2].varint()
		e.Seq = uint32(sq)
		d.seq.set(e.Comm, int64(e.Seq))
		e.Root = int32(cols[3].varint())
		e.Sent = cols[4].uvarint()
		e.Recv = cols[5].uvarint()
		if i == 0 {
			e.EnterNS = cols[6].varint()
		} else {
			e.EnterNS = prevExit + cols[6].varint()
		}
		e.ExitNS = e.EnterNS + cols[7].varint()
		prevExit = e.ExitNS
		si := cols[8].uvarint()
		switch {
		case si < uint64(len(p.Sites)):
			e.Callsite = p.Sites[si]
		case si == 0 && len(p.Sites) == 0:
			e.Callsite = 0
		default:
			return dst[:0], fmt.Errorf("column site: index %d at event %d outside dictionary of %d: %w", si, i, len(p.Sites), errColumn)
		}
		e.Peer = int32(cols[9].varint())
		e.Tag = int32(cols[10].varint())
		e.Req = uint32(cols[11].uvarint())
	}
	for i := range cols {
		if err := cols[i].check(); err != nil {
			return dst[:0], err
		}
	}
	return dst, nil
}

// decode2 decodes the parsed layout-2 or layout-3 chunk d.p into dst[:0].
func (d *chunkDecoder) decode2(dst []Event) ([]Event, error) {
	if err := d.prep2(); err != nil {
		return dst[:0], err
	}
	if cap(dst) < d.s2.n {
		dst = make([]Event, 0, d.s2.n)
	}
	dst, err := d.more2(dst[:0], d.s2.n)
	if err == nil {
		err = d.end2()
	}
	if err != nil {
		return dst[:0], err
	}
	return dst, nil
}

// prep2 reads the templates of the parsed layout-2 or layout-3 chunk d.p
// and sets d.s2 to its first event.
func (d *chunkDecoder) prep2() error {
	p := &d.p
	n := p.N
	// Every event has a non-empty template index, so n is bounded by the
	// data actually present; this stops a tiny payload from allocating n
	// events.
	if n > 0 && len(p.Tmpl) < n {
		return fmt.Errorf("column tmpl: %d bytes for %d events: %w", len(p.Tmpl), n, errColumn)
	}
	nseq, ntime := n, n // the seq column's values, the timing columns'
	if p.Layout >= 3 {
		if len(p.TW) != n {
			return fmt.Errorf("column tw: %d bytes for %d events: %w", len(p.TW), n, errColumn)
		}
		nseq = 0
		for i, w := range p.TW {
			switch {
			case w&twSame == 0:
			case p.Layout == 3:
				return fmt.Errorf("column tw: event %d: reserved bit 7 set (0x%02x): %w", i, w, errColumn)
			case i == 0:
				return fmt.Errorf("column tw: event 0 has the times of an event before it (0x%02x): %w", w, errColumn)
			case w&^(twSame|twSeq) != 0:
				return fmt.Errorf("column tw: event %d: widths with the times of the event before it (0x%02x): %w", i, w, errColumn)
			default:
				ntime--
			}
			nseq += int(w>>3) & 1
		}
	}
	// Templates: 8 varints each, in first-use order.
	d.tm = d.tm[:0]
	tc := column{name: "templates", b: p.Templates}
	for len(tc.b) > 0 && tc.err == nil {
		if len(d.tm) >= n {
			return fmt.Errorf("column templates: more templates than the chunk's %d events: %w", n, errColumn)
		}
		op := tc.uvarint()
		comm := tc.uvarint()
		root := tc.varint()
		sent := tc.uvarint()
		recv := tc.uvarint()
		si := tc.uvarint()
		peer := tc.varint()
		tag := tc.varint()
		if tc.err != nil {
			break
		}
		t := len(d.tm)
		switch {
		case op > 0xffff:
			return fmt.Errorf("column templates: op %d of template %d out of range: %w", op, t, errColumn)
		case comm > 0xffffffff:
			return fmt.Errorf("column templates: comm %d of template %d out of range: %w", comm, t, errColumn)
		case si >= uint64(len(p.Sites)):
			return fmt.Errorf("column templates: site index %d of template %d outside dictionary of %d: %w", si, t, len(p.Sites), errColumn)
		}
		d.tm = append(d.tm, Event{Op: Op(op), Comm: uint32(comm), Root: int32(root), Sent: sent, Recv: recv,
			Callsite: p.Sites[si], Peer: int32(peer), Tag: int32(tag)})
	}
	if tc.err != nil {
		return tc.err
	}
	d.s2 = stream2{n: n, cols: [5]column{
		{name: "tmpl", b: p.Tmpl}, {name: "seq", b: p.Seq}, {name: "enter", b: p.Enter},
		{name: "dur", b: p.Dur}, {name: "req", b: p.Req},
	}}
	for i := range d.s2.cols {
		d.s2.cols[i].n = n
		if len(d.s2.cols[i].b) == 0 {
			d.s2.cols[i].b = nil
		}
	}
	if p.Layout >= 3 {
		d.s2.tw = p.TW[:n:n]
		d.s2.cols[1].n = nseq
		d.s2.cols[2].n, d.s2.cols[3].n = ntime, ntime
	}
	d.seq.reset()
	d.tsq = slices.Grow(d.tsq[:0], len(d.tm))[:len(d.tm)]
	clear(d.tsq)
	return nil
}

// more2 appends the next events of the layout-2 or layout-3 chunk (at
// most max) to dst. A column that runs out stops the chunk (end2 reports
// it).
func (d *chunkDecoder) more2(dst []Event, max int) ([]Event, error) {
	st := &d.s2
	cols := &st.cols
	k := min(max, st.n-st.i)
	base := len(dst)
	dst = slices.Grow(dst, k)[:base+k]
	prevExit, prevReq := st.prevExit, st.prevReq
	j := 0
	for ; j < k; j++ {
		i := st.i + j
		e := &dst[base+j]
		var ti uint64 // cols[0].uvarint(), its one-byte case inlined (nearly every index)
		if b := cols[0].b; len(b) > 0 && b[0] < 0x80 && cols[0].err == nil {
			ti, cols[0].b, cols[0].got = uint64(b[0]), b[1:], cols[0].got+1
		} else {
			ti = cols[0].uvarint()
		}
		if ti >= uint64(len(d.tm)) {
			if cols[0].err != nil {
				st.i = st.n
				return dst[:base+j], nil
			}
			return dst[:base], fmt.Errorf("column tmpl: index %d at event %d outside the chunk's %d templates: %w", ti, i, len(d.tm), errColumn)
		}
		*e = d.tm[ti]
		var w byte // layouts 3 and 4: the event's widths byte, read once
		if st.tw != nil {
			w = st.tw[i]
		}
		var sd int64
		if st.tw == nil {
			sd = cols[1].varint()
		} else if w&twSeq != 0 {
			sd = cols[1].needVarint()
		}
		if st.tw != nil && multiRecord(e.Op) {
			e.Seq = uint32(d.tsq[ti] + sd)
			d.tsq[ti] = int64(e.Seq)
		} else {
			e.Seq = uint32(d.seq.last(e.Comm) + 1 + sd)
			d.seq.set(e.Comm, int64(e.Seq))
		}
		if w&twSame != 0 {
			// layout 4: the times of the event before (never the first,
			// never in layout 3: prep2), the last piece's at j 0
			e.EnterNS, e.ExitNS = st.prevEnter, prevExit
			if j > 0 {
				e.EnterNS = dst[base+j-1].EnterNS
			}
		} else {
			var gap, dur int64
			if st.tw != nil {
				gap, dur = cols[2].fixed(int(w&7)+1), cols[3].fixed(int(w>>4)+1)
			} else {
				gap, dur = cols[2].varint(), cols[3].varint()
			}
			if i == 0 {
				e.EnterNS = gap
			} else {
				e.EnterNS = prevExit + gap
			}
			e.ExitNS = e.EnterNS + dur
			prevExit = e.ExitNS
		}
		var r uint64 // cols[4].uvarint(), as ti
		if b := cols[4].b; len(b) > 0 && b[0] < 0x80 && cols[4].err == nil {
			r, cols[4].b, cols[4].got = uint64(b[0]), b[1:], cols[4].got+1
		} else {
			r = cols[4].uvarint()
		}
		if r != 0 {
			r--
			prevReq += uint32(int64(r>>1) ^ -int64(r&1))
			e.Req = prevReq
		}
	}
	st.i += k
	if k > 0 {
		st.prevEnter = dst[base+k-1].EnterNS
	}
	st.prevExit, st.prevReq = prevExit, prevReq
	return dst, nil
}

// end2 checks that every column of the layout-2 or layout-3 chunk was
// used up exactly.
func (d *chunkDecoder) end2() error {
	for i := range d.s2.cols {
		if err := d.s2.cols[i].check(); err != nil {
			return err
		}
	}
	return nil
}

package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// RankFileName returns the file name of a rank's trace, "rank-%05d.gct".
func RankFileName(rank int) string {
	return fmt.Sprintf("rank-%05d.gct", rank)
}

// ParseRankFileName returns the rank of a file named by RankFileName
// ("rank-00007.gct" -> 7); ok is false for any other name.
func ParseRankFileName(name string) (rank int, ok bool) {
	const prefix, suffix = "rank-", ".gct"
	if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
		return 0, false
	}
	digits := name[len(prefix) : len(name)-len(suffix)]
	if len(digits) < 5 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || digits[0] == '+' || digits[0] == '-' || RankFileName(n) != name {
		return 0, false
	}
	return n, true
}

// Option configures a Writer.
type Option func(*options)

type options struct {
	codec     Codec
	level     int
	syncEvery bool
	noSyncEnd bool // Close does not fsync (WithSyncOnClose(false))
	name      string
	format4   bool // withFormat4: a format-4.1 file with layout-2 chunks
	format5   bool // withFormat5: a format-5.0 file with layout-3 chunks
}

// withFormat5 makes the Writer write a file of format 5.0 (chunk layout
// 3: every event with its own timing values), as recorders before format
// 6 did: the tests' way to check that this reader still reads them and
// that both layouts decode to the same events. Chunks given as Columns
// (WriteColumns) must then be layout 3's too.
func withFormat5() Option {
	return func(o *options) { o.format5 = true }
}

// withFormat4 makes the Writer write a file of format 4.1 (chunk layout
// 2, varint timing columns), as recorders before format 5 did: the tests'
// way to check that this reader still reads them. Chunks given as Columns
// (WriteColumns) must then be layout 2's too.
func withFormat4() Option {
	return func(o *options) { o.format4 = true }
}

// DefaultCompressionLevel is the zstd level used unless
// WithCompressionLevel says otherwise: zstd's fastest speed. The recorder
// encodes on the rank's own core, so encoder time is time taken from the
// application: level 1 encodes 32768-event AMG-like chunks about 1.9× as
// fast as level 3 (23.5 vs 12.6 M events/s) for 4.0 instead of 3.1
// bytes/event, still well under the 6 B/event goal (BenchmarkEncodeChunk,
// 2026-11-22; docs/explanation/decisions.md D6).
const DefaultCompressionLevel = 1

// WithCompressionLevel sets the zstd level for event chunks, on zstd's
// scale (1 fastest .. 22 smallest; klauspost maps it onto its four speeds:
// 1 fastest, 2-4 default, 5-8 better, 9+ best). It selects CodecZstd.
func WithCompressionLevel(level int) Option {
	return func(o *options) { o.codec, o.level = CodecZstd, level }
}

// Codec is the compression of event chunks (the EVENTS frame's flags say
// which one a chunk uses; readers take both).
type Codec uint8

const (
	// CodecZstd compresses event chunks with zstd (smallest files).
	CodecZstd Codec = iota
	// CodecS2 compresses event chunks with S2, about 3.5× as fast as
	// zstd's fastest level for about 1.7× the bytes (docs/explanation/decisions.md
	// D16): the recorder's default, where encoding time is taken from the
	// application.
	CodecS2
)

// ParseCodec reads a codec name: "zstd" or "s2".
func ParseCodec(s string) (Codec, error) {
	switch s {
	case "zstd":
		return CodecZstd, nil
	case "s2":
		return CodecS2, nil
	}
	return CodecZstd, fmt.Errorf("unknown chunk codec %q (want zstd or s2)", s)
}

// String returns the codec's name.
func (c Codec) String() string {
	if c == CodecS2 {
		return "s2"
	}
	return "zstd"
}

// WithCodec selects the codec of event chunks (default CodecZstd).
func WithCodec(c Codec) Option {
	return func(o *options) { o.codec = c }
}

// WithFsync makes the writer fsync the file after every frame. Without it
// each frame is handed to the kernel in one write call (so a killed process
// leaves only complete frames or one detectably truncated tail), but a
// machine crash may lose frames still in the page cache.
func WithFsync(on bool) Option {
	return func(o *options) { o.syncEvery = on }
}

// WithSyncOnClose says whether Close fsyncs the file after the footer
// (default true). Without it a finished file is complete in the page cache
// when Close returns and reaches the disk with the kernel's writeback; only
// a machine crash before that loses it. The recorder turns it off unless
// GCLOCK_FSYNC=1: an fsync per rank in MPI_Finalize cost 2.6 ms on a VM's
// disk, and thousands of ranks syncing at once on a parallel file system
// far more.
func WithSyncOnClose(on bool) Option {
	return func(o *options) { o.noSyncEnd = !on }
}

// WithName sets the name used in error messages (default: the path for
// Create, "trace" for NewWriter).
func WithName(name string) Option {
	return func(o *options) { o.name = name }
}

// Writer writes one rank's trace file as a stream of frames. Every Write*
// call encodes one frame and hands it to the underlying writer in a single
// Write call, without user-space buffering, so after it returns the frame
// is in the file (in the page cache; see WithFsync and Sync). A Writer is
// safe for concurrent use. After the first write error every later call
// returns that error: the file then ends in a truncated frame, which the
// reader reports as damage.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	file *os.File // non-nil when created by Create
	id   fileID   // file's descriptor and inode (idOK: known)
	idOK bool
	lost bool   // file's descriptor was taken and the file not reopened: never close it
	path string // file's path (Create): to reopen it
	// reopened counts the times the descriptor was found taken and the
	// file reopened.
	reopened int
	opts     options
	enc      *zstd.Encoder
	ce       chunkEncoder
	buf      []byte
	mp       []byte
	// later: frames of freed communicators, written with the next frame
	// (WriteComm)
	later  []byte
	off    int64
	events uint64
	calls  uint64 // Columns.Calls summed: Footer.Calls
	chunks int
	err    error
	closed bool
	// shared: another writer of EVENTS frames to the same descriptor
	// (SetShared), nil if none.
	shared SharedFile
}

// SharedState is what a Writer and another writer of EVENTS frames to the
// same file (the recorder's C chunk writer, cshim/cwrite.c) share: the
// file's end and counts, which both advance, and what the other writer
// needs to know of the file.
type SharedState struct {
	Off           int64 // bytes in the file
	Chunks        int   // EVENTS frames in the file
	Events, Calls uint64
	// WriteErr is the error of the other writer's failed write of a frame
	// of ErrLen bytes (part of it may be in the file), nil if none.
	WriteErr error
	ErrLen   int64
	// Set by the Writer: the descriptor and the file it must name, and
	// whether the other writer may write now (the Writer usable, no frame
	// of its own waiting to go with the next one, no fsync per frame).
	FD       int
	Dev, Ino uint64
	Armed    bool
}

// SharedFile is the other writer's side of a shared file. Lock waits until
// it is between frames and keeps it there; Unlock lets it go on with the
// given state. Lock and Unlock may be called from different threads.
type SharedFile interface {
	Lock() SharedState
	Unlock(SharedState)
}

// SetShared makes s a second writer of EVENTS frames to w's file: from now
// on each of w's frames is written with s locked, after w took up the
// position and counts s left, and s gets them back (with Armed) after it.
// Only for a Writer made by Create.
func (w *Writer) SetShared(s SharedFile) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shared != nil || s == nil {
		return
	}
	s.Lock()
	w.shared = s
	s.Unlock(w.sharedState())
}

// begin takes the shared file's lock (SetShared) and w's position and
// counts from it; the returned function gives them back. Called with mu
// held, before anything that writes or reads them.
func (w *Writer) begin() func() {
	if w.shared == nil {
		return func() {}
	}
	st := w.shared.Lock()
	w.off, w.chunks, w.events, w.calls = st.Off, st.Chunks, st.Events, st.Calls
	if st.WriteErr != nil && w.err == nil {
		w.err = fmt.Errorf("trace: %s: writing events frame of %d bytes, the file now %d bytes: %w",
			w.opts.name, st.ErrLen, st.Off, st.WriteErr)
	}
	return func() { w.shared.Unlock(w.sharedState()) }
}

// sharedState is what w publishes to the shared file's other writer.
func (w *Writer) sharedState() SharedState {
	st := SharedState{Off: w.off, Chunks: w.chunks, Events: w.events, Calls: w.calls, FD: -1}
	if w.file != nil && w.idOK {
		st.FD, st.Dev, st.Ino = w.id.fd, w.id.dev, w.id.ino
	}
	st.Armed = st.FD >= 0 && w.err == nil && !w.closed && !w.lost && !w.opts.syncEvery && len(w.later) == 0
	return st
}

var errClosed = errors.New("writer is closed")

var zeroFrameHeader [frameHeaderSize]byte

// Create creates (truncating) the file at path and writes the preamble and
// header frame.
func Create(path string, h Header, opts ...Option) (*Writer, error) {
	f, err := openFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("trace: creating %s: %w", path, err)
	}
	opts = append([]Option{WithName(path)}, opts...)
	id, idOK := identify(f)
	w, err := newWriter(f, f, h, opts, func(w *Writer) { w.id, w.idOK, w.path = id, idOK, path })
	if err != nil {
		switch {
		case w == nil:
			f.Close()
		case !w.lost: // w.file: f, or the file reopened in its place
			w.file.Close()
		}
		return nil, err
	}
	return w, nil
}

// NewWriter writes the preamble and header frame to w and returns a Writer
// appending frames to it. Close does not close w.
func NewWriter(w io.Writer, h Header, opts ...Option) (*Writer, error) {
	return newWriter(w, nil, h, opts, nil)
}

func newWriter(w io.Writer, f *os.File, h Header, opts []Option, init func(*Writer)) (*Writer, error) {
	o := options{level: DefaultCompressionLevel, name: "trace"}
	for _, opt := range opts {
		opt(&o)
	}
	var enc *zstd.Encoder
	if o.codec == CodecZstd {
		var err error
		if enc, err = sharedEncoder(zstd.EncoderLevelFromZstd(o.level)); err != nil {
			return nil, err
		}
	}
	tw := &Writer{w: w, file: f, opts: o, enc: enc}
	if init != nil {
		init(tw)
	}
	h.Version = FormatVersion
	major, minor := uint16(FormatVersion), uint16(FormatMinor)
	if o.format4 {
		h.Version, major, minor = 4, 4, format4Minor
		tw.ce.layout = oldChunkLayout
	} else if o.format5 {
		h.Version, major, minor = 5, 5, format5Minor
		tw.ce.layout = layout3
	}
	payload, err := marshalAppend(nil, &h)
	if err != nil {
		return nil, fmt.Errorf("trace: %s: encoding header: %w", o.name, err)
	}
	tw.buf = appendPreamble(tw.buf[:0], major, minor)
	tw.buf = appendFrameHeader(tw.buf, KindHeader, 0, payload)
	tw.buf = append(tw.buf, payload...)
	if err := tw.flush("header"); err != nil {
		return tw, err
	}
	return tw, nil
}

// flush writes w.buf as one Write call; called with mu held.
func (w *Writer) flush(what string) error {
	if len(w.later) > 0 { // in the same write
		w.buf, w.later = append(w.later, w.buf...), w.buf[:0]
	}
	if err := w.checkOwned(); err != nil {
		return err
	}
	if err := w.checkSizeLimit(what); err != nil {
		return err
	}
	n, err := w.w.Write(w.buf)
	if err == nil && n != len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("trace: %s: writing %s frame at byte %d (%d of %d bytes written): %w",
			w.opts.name, what, w.off, n, len(w.buf), err)
		w.off += int64(n)
		return w.err
	}
	w.off += int64(n)
	if w.opts.syncEvery {
		return w.syncLocked()
	}
	return nil
}

// ErrFileReplaced is wrapped by the error of a Writer whose file
// descriptor no longer refers to its file and which could not reopen it.
var ErrFileReplaced = errors.New("its file descriptor was closed by someone else (the application?) " +
	"and the file could not be reopened: nothing more is written through it, and it is not closed")

// lostFiles keeps the *os.File of every descriptor taken from a Writer
// reachable, so that no finalizer closes a number that now belongs to the
// application.
var (
	lostMu    sync.Mutex
	lostFiles []*os.File
)

// checkOwned makes sure the Writer's descriptor still refers to the file
// it created (one fstat per frame). The recorder runs inside the user's
// application, which may close descriptors it does not own and open its
// own files, which get the same numbers: a write would corrupt them. Then
// the descriptor is left alone (never written, never closed) and the file
// reopened by its path, if it is still the same file; else the Writer
// fails with ErrFileReplaced.
func (w *Writer) checkOwned() error {
	if w.file == nil || !w.idOK || w.id.same() {
		return nil
	}
	lostMu.Lock()
	lostFiles = append(lostFiles, w.file)
	lostMu.Unlock()
	f, err := openFile(w.path, os.O_WRONLY, 0)
	if err == nil {
		id, ok := identify(f)
		if ok && id.dev == w.id.dev && id.ino == w.id.ino {
			if _, err = f.Seek(w.off, io.SeekStart); err == nil {
				w.file, w.w, w.id = f, f, id
				w.reopened++
				return nil
			}
		}
		f.Close()
	}
	w.lost = true
	w.err = fmt.Errorf("trace: %s: %w", w.opts.name, ErrFileReplaced)
	return w.err
}

// Reopened returns how often the Writer found its descriptor taken by
// someone else and reopened its file.
func (w *Writer) Reopened() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reopened
}

// ErrSizeLimit is wrapped by the error of a write that the process's file
// size limit (RLIMIT_FSIZE, "ulimit -f") would not allow.
var ErrSizeLimit = errors.New("the file size limit (RLIMIT_FSIZE, ulimit -f) would be exceeded")

// SizeLimitReserve is the part of the file size limit that event frames
// leave to metadata frames, so that a file whose events reached the limit
// can still be closed with its footer.
const SizeLimitReserve = 64 << 10

// checkSizeLimit refuses a frame that would take a file made by Create past
// the process's file size limit: the kernel would write part of it and
// kill the process (SIGXFSZ) at the next write, and the recorder runs
// inside the user's application. A refused frame leaves the Writer usable
// (a later, smaller metadata frame such as the footer may still fit), and
// nothing of it is written.
func (w *Writer) checkSizeLimit(what string) error {
	if w.file == nil {
		return nil
	}
	limit := fileSizeLimit()
	if limit < 0 {
		return nil
	}
	room := limit
	if what == KindEvents.String() {
		room -= SizeLimitReserve
	}
	if end := w.off + int64(len(w.buf)); end > room {
		return fmt.Errorf("trace: %s: %s frame of %d bytes at byte %d: %w (%d bytes)",
			w.opts.name, what, len(w.buf), w.off, ErrSizeLimit, limit)
	}
	return nil
}

func (w *Writer) syncLocked() error {
	s, ok := w.w.(interface{ Sync() error })
	if !ok {
		return nil
	}
	if err := s.Sync(); err != nil {
		w.err = fmt.Errorf("trace: %s: fsync: %w", w.opts.name, err)
		return w.err
	}
	return nil
}

func (w *Writer) usable() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("trace: %s: %w", w.opts.name, errClosed)
	}
	return nil
}

// WriteEvents writes evs as one EVENTS frame (several if longer than
// MaxChunkEvents). An empty slice writes nothing.
func (w *Writer) WriteEvents(evs []Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	if err := w.usable(); err != nil {
		return err
	}
	for len(evs) > 0 {
		n := min(len(evs), MaxChunkEvents)
		if err := w.writeChunk(evs[:n]); err != nil {
			return err
		}
		evs = evs[n:]
	}
	return nil
}

func (w *Writer) writeChunk(evs []Event) error {
	cols := w.ce.columns(evs)
	return w.writeColumns(&cols)
}

// WriteColumns writes one chunk already split into columns (the
// recorder's C encoder) as one EVENTS frame. The caller's buffers may be
// reused once it returns.
func (w *Writer) WriteColumns(cols *Columns) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	if err := w.usable(); err != nil {
		return err
	}
	if cols.N <= 0 {
		return nil
	}
	if cols.N > MaxChunkEvents {
		return fmt.Errorf("trace: %s: chunk of %d events exceeds %d", w.opts.name, cols.N, MaxChunkEvents)
	}
	return w.writeColumns(cols)
}

// Prepare encodes cols as WriteColumns would and discards the result, then
// sizes the writer's buffers for a chunk of events events and touches their
// memory: the allocations and page faults of a first chunk happen now, not
// in the first WriteColumns, which the recorder calls in the middle of the
// application's run. Nothing is written and nothing is counted.
func (w *Writer) Prepare(cols *Columns, events int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	if cols.N > 0 && cols.N <= MaxChunkEvents {
		var err error
		w.buf = append(w.buf[:0], zeroFrameHeader[:]...)
		w.buf, err = w.ce.compress(w.buf, cols, w.enc)
		if err != nil {
			w.buf = w.buf[:0]
			return fmt.Errorf("trace: %s: preparing a chunk: %w", w.opts.name, err)
		}
	}
	// A chunk's packed columns take about 8 bytes per event in a loop
	// (times of 1–3 bytes each, one-byte template, seq and request codes).
	n := min(max(events, 0), MaxChunkEvents) * prepareBytesPerEvent
	w.buf = prepareBuf(w.buf, n+frameHeaderSize)
	w.ce.mp = prepareBuf(w.ce.mp, n)
	w.ce.blk = prepareBuf(w.ce.blk, s2.MaxEncodedLen(n))
	return nil
}

// prepareBytesPerEvent sizes Prepare's buffers per event.
const prepareBytesPerEvent = 8

// prepareBuf returns b emptied, with capacity for n bytes, all of it
// written once (so its pages are present).
func prepareBuf(b []byte, n int) []byte {
	if n <= 0 {
		return b[:0]
	}
	b = slices.Grow(b[:0], n)
	clear(b[:cap(b)])
	return b[:0]
}

func (w *Writer) writeColumns(cols *Columns) error {
	w.buf = w.buf[:0]
	var err error
	// Encode the payload after room for the frame header, then fill it in.
	w.buf = append(w.buf, zeroFrameHeader[:]...)
	w.buf, err = w.ce.compress(w.buf, cols, w.enc)
	if err != nil {
		return fmt.Errorf("trace: %s: chunk %d: %w", w.opts.name, w.chunks, err)
	}
	payload := w.buf[frameHeaderSize:]
	if len(payload) > MaxFramePayload {
		return fmt.Errorf("trace: %s: chunk %d: payload of %d bytes exceeds %d", w.opts.name, w.chunks, len(payload), MaxFramePayload)
	}
	flags := chunkFlags(w.enc)
	appendFrameHeader(w.buf[:0], KindEvents, flags, payload)
	if cols.Spanned { // written with the chunk, in one write
		w.buf = appendSpanFrame(w.buf, uint32(w.chunks), uint32(cols.N), cols.First, cols.Last)
	}
	if err := w.flush("events"); err != nil {
		return err
	}
	w.chunks++
	w.events += uint64(cols.N)
	w.calls += uint64(max(cols.Calls, 0))
	return nil
}

// appendSpanFrame appends a SPAN frame (KindSpan) to dst.
func appendSpanFrame(dst []byte, chunk, n uint32, first, last int64) []byte {
	var p [spanPayloadSize]byte
	binary.LittleEndian.PutUint32(p[0:], chunk)
	binary.LittleEndian.PutUint32(p[4:], n)
	binary.LittleEndian.PutUint64(p[8:], uint64(first))
	binary.LittleEndian.PutUint64(p[16:], uint64(last))
	at := len(dst)
	dst = append(dst, zeroFrameHeader[:]...)
	dst = append(dst, p[:]...)
	appendFrameHeader(dst[at:at], KindSpan, 0, dst[at+frameHeaderSize:])
	return dst
}

// writeMeta writes one msgpack metadata frame; called with mu held.
func (w *Writer) writeMeta(kind FrameKind, v any) error {
	if err := w.usable(); err != nil {
		return err
	}
	var err error
	w.mp, err = marshalAppend(w.mp[:0], v)
	if err != nil {
		return fmt.Errorf("trace: %s: encoding %s frame: %w", w.opts.name, kind, err)
	}
	return w.writePayload(kind, w.mp)
}

// writePayload writes one frame of the given kind around payload; called
// with mu held.
func (w *Writer) writePayload(kind FrameKind, payload []byte) error {
	w.buf = appendFrameHeader(w.buf[:0], kind, 0, payload)
	w.buf = append(w.buf, payload...)
	return w.flush(kind.String())
}

// WriteComm appends a communicator definition. Writing a comm again with
// the same ID and Local (e.g. with FreedNS set) replaces the earlier one in
// Meta. The frame of a freed communicator (FreedNS set) is written with
// the next frame, in the same write, or by Sync or Close (up to 64 kB of
// them wait): a program that creates and frees a communicator per step
// then pays one write a step, not two. A process killed in between loses
// only when those communicators were freed; Abort drops them.
func (w *Writer) WriteComm(c Comm) error {
	if len(c.Runs) == 0 {
		if runs := PackMembers(c.Members); runs != nil {
			c.Runs, c.Members = runs, nil
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	if err := w.usable(); err != nil {
		return err
	}
	w.mp = appendComm(w.mp[:0], &c)
	if c.FreedNS != 0 && len(w.later) < maxLater {
		w.later = appendFrameHeader(w.later, KindComm, 0, w.mp)
		w.later = append(w.later, w.mp...)
		return nil
	}
	return w.writePayload(KindComm, w.mp)
}

// maxLater bounds the bytes of freed communicators' frames that wait for
// the next frame.
const maxLater = 64 << 10

// WriteEpoch appends a sync epoch. An epoch with an Index already written
// replaces the earlier one in Meta.
func (w *Writer) WriteEpoch(e Epoch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	return w.writeMeta(KindEpoch, &e)
}

// Sync commits the file to stable storage (fsync) when the underlying
// writer supports it; frames are already in the file after each Write*
// (but freed communicators' frames, which Sync writes first).
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	if w.err != nil {
		return w.err
	}
	if len(w.later) > 0 {
		w.buf = w.buf[:0]
		if err := w.flush("communicator"); err != nil {
			return err
		}
	}
	return w.syncLocked()
}

// Events returns the number of events written so far.
func (w *Writer) Events() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	return w.events
}

// Offset returns the number of bytes written so far (not counting freed
// communicators' frames waiting for the next write).
func (w *Writer) Offset() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	return w.off
}

// Close writes the footer frame, syncs (unless WithSyncOnClose(false)), and
// closes the file if the Writer was made by Create. If f.Events is 0 it is
// set to the number of events written, and f.Calls, if 0, to the calls
// among them (Columns.Calls). Close after Close returns an error; a file is
// closed even when writing the footer failed.
func (w *Writer) Close(f Footer) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	if w.closed {
		return fmt.Errorf("trace: %s: %w", w.opts.name, errClosed)
	}
	if f.Events == 0 {
		f.Events = w.events
	}
	if f.Calls == 0 {
		f.Calls = w.calls
	}
	err := w.writeMeta(KindFooter, &f)
	if err == nil && !w.opts.noSyncEnd {
		err = w.syncLocked()
	}
	w.closed = true
	if w.file != nil && !w.lost {
		if cerr := w.file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("trace: %s: closing: %w", w.opts.name, cerr)
		}
	}
	return err
}

// Abort closes the Writer without a footer, leaving the file as a recorder
// killed at this point would (every frame written so far is complete). It
// closes the file if the Writer was made by Create.
func (w *Writer) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.begin()()
	if w.closed {
		return fmt.Errorf("trace: %s: %w", w.opts.name, errClosed)
	}
	w.closed = true
	if w.file != nil && !w.lost {
		if err := w.file.Close(); err != nil {
			return fmt.Errorf("trace: %s: closing: %w", w.opts.name, err)
		}
	}
	return nil
}

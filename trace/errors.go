package trace

import "fmt"

// FormatError reports a file that cannot be read as a gclock trace at all:
// not a trace, wrong magic, unsupported version, or a missing/corrupt header
// frame. Damage after the header is not a FormatError; it is recorded in
// Meta.Damage and costs only the damaged frames.
type FormatError struct {
	Path   string // file name as given to Open/NewReader
	Offset int64  // byte offset where the problem was found
	Msg    string // what is wrong, in words
	Err    error  // underlying error (I/O, msgpack), may be nil
}

// Error formats as "<path>: at byte <offset>: <msg>[: <err>]".
func (e *FormatError) Error() string {
	s := fmt.Sprintf("%s: at byte %d: %s", e.Path, e.Offset, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// Damage describes one damaged region of a trace file that the reader
// skipped. Chunk is the index of the event chunk that was lost (counting
// every EVENTS frame whose header was readable, intact or not), or -1 when
// the damaged region is not a recognisable event chunk (a metadata frame or
// an unreadable frame header).
type Damage struct {
	Chunk  int    // event chunk index, -1 if not an event chunk / unknown
	Offset int64  // byte offset of the damaged frame or region
	Bytes  int64  // bytes skipped because of it
	Kind   string // frame kind if known ("events", "comm", ...), else ""
	Err    string // full message: "rank-00007.gct: chunk 12 at byte 81920: checksum mismatch"
}

// String returns Err.
func (d Damage) String() string { return d.Err }

package merge

// The wire of a parallel analysis (dist.go): how process 0 and a worker
// frame assignments, requests and replies over a Transport.
//
// Wire protocol (process 0 <-> one worker, in order):
//
//	assign  (0 -> w): first, 8-byte length 16, then uint64 lo, hi: the
//	                  worker owns the rank files [lo, hi) of Run.Ranks
//	request (0 -> w): 8-byte length 4, then uint32 1: next chunk (up to distInflight
//	                  outstanding); uint32 0: stop serving (also instead of
//	                  the assignment)
//	reply   (w -> 0): an 8-byte header: the body's length, bit 63 set
//	                  for the end record; then the body: GEvents in their
//	                  in-memory layout (the same binary runs everywhere),
//	                  sent from and received into []GEvent without a
//	                  copy; a GEvent with Rank < 0 marks the end of rank
//	                  -1-Rank (Enter: the key of its last event, -Inf for a
//	                  rank without events). The end record is a JSON map
//	                  from rank to distEnd (what each rank's decoder
//	                  found; -1: why the worker could not read the run).

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/gclock/gclock/merge/datamodel"
)

// distEnd is what one rank's decoder found, sent at the end of a stream.
type distEnd struct {
	Err      string   `json:"err,omitempty"`
	Unknown  int      `json:"unknown,omitempty"`
	Unsorted int      `json:"unsorted,omitempty"`
	BadTimes int      `json:"bad_times,omitempty"`
	Damage   []string `json:"damage,omitempty"`
}

var evSize = int(unsafe.Sizeof(datamodel.GEvent{}))

func evBytes(ev []datamodel.GEvent) []byte {
	if len(ev) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&ev[0])), len(ev)*evSize)
}

func sendMsg(t Transport, dest int, b []byte) error {
	var h [8]byte
	binary.LittleEndian.PutUint64(h[:], uint64(len(b)))
	if err := t.Send(dest, distTag, h[:]); err != nil {
		return err
	}
	if len(b) == 0 {
		return nil
	}
	return t.Send(dest, distTag, b)
}

func recvMsg(t Transport, src int, buf []byte) ([]byte, error) {
	var h [8]byte
	if err := t.Recv(src, distTag, h[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(h[:])
	if n > 1<<30 {
		return nil, fmt.Errorf("parallel analysis: message of %d bytes from process %d", n, src)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if n == 0 {
		return buf, nil
	}
	return buf, t.Recv(src, distTag, buf)
}

func request(t Transport, w int, what uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], what)
	return sendMsg(t, w, b[:])
}

// replyEnd flags, in a reply's 8-byte header, the end record (JSON)
// instead of GEvent records; the other bits are the body's length.
const replyEnd = 1 << 63

// sendReply sends a worker's reply to process 0: the header, then the
// body from where it is.
func sendReply(t Transport, end bool, body []byte) error {
	h := uint64(len(body))
	if end {
		h |= replyEnd
	}
	var hb [8]byte
	binary.LittleEndian.PutUint64(hb[:], h)
	if err := t.Send(0, distTag, hb[:]); err != nil {
		return err
	}
	if len(body) == 0 {
		return nil
	}
	return t.Send(0, distTag, body)
}

// recvReplyHeader reads a reply's header: the body's length and whether
// it is the end record.
func recvReplyHeader(t Transport, src int) (n int, end bool, err error) {
	var hb [8]byte
	if err := t.Recv(src, distTag, hb[:]); err != nil {
		return 0, false, err
	}
	h := binary.LittleEndian.Uint64(hb[:])
	end = h&replyEnd != 0
	h &^= replyEnd
	if h > 1<<30 {
		return 0, false, fmt.Errorf("parallel analysis: reply of %d bytes from process %d", h, src)
	}
	return int(h), end, nil
}

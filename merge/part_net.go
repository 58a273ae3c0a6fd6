// Messages of a partitioned pass (part.go): headers, per-source inboxes
// that always receive, and sends that never wait on a consumer.

package merge

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/gclock/gclock/merge/datamodel"
)

// partHdr heads every message: kind and payload length, the round of the
// payload's events or records and the last round the sender is done with.
type partHdr struct {
	kind        uint8
	eos         bool // the stream's last message: every round done
	n           int
	round, done int32
}

func (h partHdr) bytes() []byte {
	var b [16]byte
	v := uint64(h.kind)<<56 | uint64(h.n)
	if h.eos {
		v |= 1 << 48
	}
	binary.LittleEndian.PutUint64(b[:], v)
	binary.LittleEndian.PutUint32(b[8:], uint32(h.round))
	binary.LittleEndian.PutUint32(b[12:], uint32(h.done))
	return b[:]
}

func parseHdr(b []byte) partHdr {
	v := binary.LittleEndian.Uint64(b)
	return partHdr{kind: uint8(v >> 56), eos: v&(1<<48) != 0, n: int(v & (1<<48 - 1)), round: int32(binary.LittleEndian.Uint32(b[8:])),
		done: int32(binary.LittleEndian.Uint32(b[12:]))}
}

// partMsg is one received message.
type partMsg struct {
	partHdr
	ev   []datamodel.GEvent
	body []byte
}

// inbox is an unbounded queue of one (source, tag) stream.
type inbox struct {
	mu       sync.Mutex
	cond     *sync.Cond
	q        []partMsg
	err      error
	src, tag int
	// The reader's wait, for the watchdog (part_watch.go): waiting while
	// in get with nothing queued, since when, for which round.
	waiting     bool
	round       int32
	since, said time.Time
}

func newInbox(src, tag int) *inbox {
	b := &inbox{src: src, tag: tag}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *inbox) put(m partMsg) {
	b.mu.Lock()
	b.q = append(b.q, m)
	b.mu.Unlock()
	b.cond.Signal()
}

func (b *inbox) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

// get returns the stream's next message, waiting for it; round is what
// the reader waits for (-1: the end record), for the watchdog.
func (b *inbox) get(round int32) (partMsg, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.q) == 0 && b.err == nil {
		b.waiting, b.round, b.since = true, round, time.Now()
		for len(b.q) == 0 && b.err == nil {
			b.cond.Wait()
		}
		b.waiting = false
	}
	if len(b.q) == 0 {
		return partMsg{}, b.err
	}
	m := b.q[0]
	b.q[0] = partMsg{}
	b.q = b.q[1:]
	return m, nil
}

// partNet carries the partitioned pass's messages: over the Transport
// between processes, through an inbox within one.
type partNet struct {
	t         Transport
	me        int
	mu        sync.Mutex
	boxes     map[[2]int]*inbox
	listening map[[2]int]bool
	free      chan []datamodel.GEvent // spent event buffers, for reuse
	watch     watchState
}

// getBuf returns an empty event buffer: a spent one when there is one,
// else nil (append or the receive sizes it to what it holds: a fresh
// buffer of partChunk events for every message, as before, made a
// worker's receive buffers 17–26 MB of its ≈ 50 MB heap on a K=8 run of
// 1024 ranks whose messages hold a few thousand events).
func (n *partNet) getBuf() []datamodel.GEvent {
	select {
	case b := <-n.free:
		return b[:0]
	default:
		return nil
	}
}

// putBuf gives a spent event buffer back (the pool keeps partFree
// buffers of partChunk/8 to partChunkStream events).
func (n *partNet) putBuf(b []datamodel.GEvent) {
	if cap(b) < partChunk/8 || cap(b) > partChunkStream {
		return
	}
	select {
	case n.free <- b[:0]:
	default:
	}
}

// sendEv sends events and returns an empty buffer for the next ones: ev
// itself when it went to another process (the send has completed), a
// spent one (or nil) when the receiver is this process (which now owns
// ev).
func (n *partNet) sendEv(dest, tag int, h partHdr, ev []datamodel.GEvent) ([]datamodel.GEvent, error) {
	if err := n.send(dest, tag, h, ev, nil); err != nil {
		return nil, err
	}
	if dest != n.me {
		return ev[:0], nil
	}
	return n.getBuf(), nil
}

// putSegs gives the event buffers of consumed segments back.
func (n *partNet) putSegs(segs []partMsg) {
	for _, m := range segs {
		n.putBuf(m.ev)
	}
}

func (n *partNet) box(src, tag int) *inbox {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := [2]int{src, tag}
	b := n.boxes[k]
	if b == nil {
		b = newInbox(src, tag)
		n.boxes[k] = b
	}
	return b
}

// send sends one message; the payload belongs to the receiver afterwards.
func (n *partNet) send(dest, tag int, h partHdr, ev []datamodel.GEvent, body []byte) error {
	if dest == n.me {
		n.box(n.me, tag).put(partMsg{partHdr: h, ev: ev, body: body})
		return nil
	}
	p := body
	if ev != nil {
		p = evBytes(ev)
	}

	h.n = len(p)
	defer n.sending(dest, tag, h.round, len(p))()
	if err := n.t.Send(dest, tag, h.bytes()); err != nil {
		return fmt.Errorf("parallel analysis: sending to process %d: %w", dest, err)
	}
	if len(p) > 0 {
		if err := n.t.Send(dest, tag, p); err != nil {
			return fmt.Errorf("parallel analysis: sending to process %d: %w", dest, err)
		}
	}
	return nil
}

// listen returns the inbox of (src, tag), receiving into it from another
// process until the stream's terminal message (eos, pkEnd). Every stream
// is listened to from the start: a large message waits in the sender's
// MPI send (one at a time per process, mpirt) until it is received, so a
// stream read late would hold up the sender's other streams.
func (n *partNet) listen(src, tag int) *inbox {
	b := n.box(src, tag)
	n.mu.Lock()
	started := n.listening[[2]int{src, tag}]
	if n.listening == nil {
		n.listening = map[[2]int]bool{}
	}
	n.listening[[2]int{src, tag}] = true
	n.mu.Unlock()
	if src == n.me || started {
		return b
	}
	go func() {
		var hb [16]byte
		for {
			if err := n.t.Recv(src, tag, hb[:]); err != nil {
				b.fail(fmt.Errorf("parallel analysis: receiving from process %d: %w", src, err))
				return
			}
			h := parseHdr(hb[:])
			if h.n > 1<<30 {
				b.fail(fmt.Errorf("parallel analysis: message of %d bytes from process %d", h.n, src))
				return
			}
			m := partMsg{partHdr: h}
			if h.n > 0 {
				var p []byte
				if h.kind == pkEv {
					if h.n%evSize != 0 {
						b.fail(fmt.Errorf("parallel analysis: event message of %d bytes from process %d", h.n, src))
						return
					}
					m.ev = n.getBuf()
					if k := h.n / evSize; cap(m.ev) >= k {
						m.ev = m.ev[:k]
					} else {
						m.ev = make([]datamodel.GEvent, k)
					}
					p = evBytes(m.ev)
				} else {
					m.body = make([]byte, h.n)
					p = m.body
				}
				if err := n.t.Recv(src, tag, p); err != nil {
					b.fail(fmt.Errorf("parallel analysis: receiving from process %d: %w", src, err))
					return
				}
			}
			b.put(m)
			if h.eos || h.kind == pkEnd {
				return
			}
		}
	}()
	return b
}

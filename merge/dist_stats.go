package merge

// What each process of a parallel analysis sent and received, counted per
// message (never per event) by a Transport wrapper, and gathered to
// process 0 at the end with every process's peak RSS (tracemerge prints it
// with GCLOCK_PAR_STATS=1; docs/explanation/tracemerge.md "Speed and
// scaling model" builds the scaling model from it).

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
)

// statsTag is the tag of the end-of-run statistics message (worker -> 0).
const statsTag = 7140

// Message kinds counted by CountingTransport, from the message's tag.
const (
	KindShipped    = iota // every event shipped to process 0 (dist*.go)
	KindData              // decoder -> owner: collective and point-to-point events (part_decode.go)
	KindStream            // decoder -> process 0: the events a stream sink wants (root causes, RMA)
	KindRecords           // owner -> process 0: collective instance records (part_owner.go)
	KindP2PRecords        // owner -> process 0: point-to-point records (p2p_part.go)
	KindWorst             // owner -> process 0: the worst instances, fetched at the end
	KindControl           // acknowledgements, end records, assignments, statistics
	NumKinds
)

// KindNames names the message kinds, indexed by Kind*.
var KindNames = [NumKinds]string{"shipping protocol", "partition data", "stream to 0", "instance records", "point-to-point records", "worst instances", "control"}

func tagKind(tag int) int {
	switch tag {
	case distTag:
		return KindShipped
	case tagData:
		return KindData
	case tagStream:
		return KindStream
	case tagRes:
		return KindRecords
	case tagP2PRes:
		return KindP2PRecords
	case tagWorstRes:
		return KindWorst
	}
	return KindControl
}

// CountingTransport is a Transport that counts the bytes it sends and
// receives, by message kind: one atomic add per message.
type CountingTransport struct {
	T          Transport
	sent, recv [NumKinds]atomic.Int64
	recvMsgs   [NumKinds]atomic.Int64
}

// Send sends through T and counts b's bytes when the send succeeded.
func (c *CountingTransport) Send(dest, tag int, b []byte) error {
	err := c.T.Send(dest, tag, b)
	if err == nil {
		c.sent[tagKind(tag)].Add(int64(len(b)))
	}
	return err
}

// Recv receives through T and counts b's bytes when the receive succeeded
// (every receive of the protocol is of the message's exact length).
func (c *CountingTransport) Recv(src, tag int, b []byte) error {
	err := c.T.Recv(src, tag, b)
	if err == nil {
		c.recv[tagKind(tag)].Add(int64(len(b)))
		c.recvMsgs[tagKind(tag)].Add(1)
	}
	return err
}

// Received returns the messages received so far, by kind.
func (c *CountingTransport) Received() (msgs [NumKinds]int64) {
	for k := range msgs {
		msgs[k] = c.recvMsgs[k].Load()
	}
	return msgs
}

// Counts returns the bytes sent and received so far, by kind.
func (c *CountingTransport) Counts() (sent, recv [NumKinds]int64) {
	for k := range sent {
		sent[k], recv[k] = c.sent[k].Load(), c.recv[k].Load()
	}
	return sent, recv
}

// ProcStats is what one process of a parallel analysis sent and received
// (bytes, by kind; the statistics message itself not included), its peak
// resident set size and the CPU time it used (user and system, in ms).
type ProcStats struct {
	Proc          int
	Sent, Recv    [NumKinds]int64
	MaxRSSkB      int64
	UserMs, SysMs int64
}

// SentTotal is the bytes the process sent, all kinds.
func (s ProcStats) SentTotal() int64 { return sum(s.Sent[:]) }

// RecvTotal is the bytes the process received, all kinds.
func (s ProcStats) RecvTotal() int64 { return sum(s.Recv[:]) }

func sum(v []int64) int64 {
	var t int64
	for _, x := range v {
		t += x
	}
	return t
}

// String is the line tracemerge prints for the process: "process k:
// received N bytes, sent M bytes, peak RSS R kB, CPU U s user, S s system
// (received: kind n, ...)".
func (s ProcStats) String() string {
	var kinds []string
	for k, n := range s.Recv {
		if n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", KindNames[k], n))
		}
	}
	line := fmt.Sprintf("process %d: received %d bytes, sent %d bytes, peak RSS %d kB, CPU %.2f s user, %.2f s system",
		s.Proc, s.RecvTotal(), s.SentTotal(), s.MaxRSSkB, float64(s.UserMs)/1e3, float64(s.SysMs)/1e3)
	if len(kinds) > 0 {
		line += " (received: " + strings.Join(kinds, ", ") + ")"
	}
	return line
}

const statsWords = 4 + 2*NumKinds

func (s ProcStats) bytes() []byte {
	b := make([]byte, 8*statsWords)
	w := []int64{int64(s.Proc), s.MaxRSSkB, s.UserMs, s.SysMs}
	w = append(append(w, s.Sent[:]...), s.Recv[:]...)
	for i, x := range w {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

func parseStats(b []byte) ProcStats {
	w := make([]int64, statsWords)
	for i := range w {
		w[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	s := ProcStats{Proc: int(w[0]), MaxRSSkB: w[1], UserMs: w[2], SysMs: w[3]}
	copy(s.Sent[:], w[4:4+NumKinds])
	copy(s.Recv[:], w[4+NumKinds:])
	return s
}

// GatherStats collects every process's statistics on process 0 at the end
// of a parallel analysis, after the workers stopped serving (Dist.Close):
// a worker sends its own (mine) and returns nil, process 0 receives one
// message from each worker and returns all, indexed by process. Every
// process must call it once, or process 0 waits.
func GatherStats(t Transport, me, procs int, mine ProcStats) ([]ProcStats, error) {
	mine.Proc = me
	if me != 0 {
		if err := t.Send(0, statsTag, mine.bytes()); err != nil {
			return nil, fmt.Errorf("parallel analysis: sending process %d's statistics: %w", me, err)
		}
		return nil, nil
	}
	all := make([]ProcStats, procs)
	all[0] = mine
	b := make([]byte, 8*statsWords)
	for w := 1; w < procs; w++ {
		if err := t.Recv(w, statsTag, b); err != nil {
			return all[:w], fmt.Errorf("parallel analysis: receiving process %d's statistics: %w", w, err)
		}
		all[w] = parseStats(b)
		all[w].Proc = w
	}
	return all, nil
}

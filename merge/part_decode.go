// The decoder role of a partitioned pass (part.go): decode, correct and
// merge a block of rank files, sum each rank's own figures, and route
// every event to the process that needs it; the end records.

package merge

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"github.com/gclock/gclock/merge/datamodel"
)

// partRankSum is a decoder's figures of one rank.
type partRankSum struct {
	Rank      int32
	Events    int
	TimeInMPI float64
	Paused    bool
	Since     float64
	Last      float64
	Pauses    int
	Total     float64
	Longest   float64
}

// partDecEnd is a decoder's end record.
type partDecEnd struct {
	Ends      map[int]distEnd
	Ranks     []partRankSum
	Events    int
	HasFirst  bool
	StartNS   float64
	EndNS     float64
	Dupes     int
	Irregular int
}

// partCell mirrors hbCell (refine.go) for the owners' end records; a
// cell's fields are order-free (minima, maxima, a count), so the owners'
// grids merge exactly (partEnds; keep both in step with hbGrid.add).
type partCell struct {
	Lo, Hi, First, Last float64
	N                   int32
}

// partHistEnd is an owner's histogram counts of one op.
type partHistEnd struct {
	Op         int
	Exit, Wait []int
}

// partOwnEnd is an owner's end record.
type partOwnEnd struct {
	Hists     []partHistEnd
	Irregular int
	Records   int
	MaxOpen   int
	Cells     [][]partCell
	Err       string
	P2P       *P2POwnEnd // the partitioned point-to-point analysis
}

func gobBytes(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("parallel analysis: encoding an end record: %w", err)
	}
	return buf.Bytes(), nil
}

// partOwnChunk is the size (events) at which a decoder sends its buffer
// to one of owners owners, and the room it makes the buffer with:
// partChunk with up to partHeld/partChunk owners, less with more, never
// under partChunk/8. The owners' buffers together then keep room for
// about partHeld events whatever K, not owners·partChunk (a buffer sent
// to another process keeps its room for the next events: at K=64 that
// was 16 MB a decoder).
func partOwnChunk(owners int) int {
	return min(partChunk, max(partChunk/8, partHeld/max(owners, 1)))
}

// partDecode is a decoder: it decodes and merges mine and routes the
// events (see the package comment above).
func (a *analyzer) partDecode(pl *partPlan, net *partNet, mine []*rankState) error {
	owners := make([]int, 0, pl.procs)
	for q := pl.owner0; q < pl.procs; q++ {
		owners = append(owners, q)
	}
	type consumer struct {
		p, tag int
		ack    *inbox
		acked  int32
		eos    bool
		ahead  int32 // rounds this decoder may run ahead of the consumer
	}
	var cons []*consumer
	for _, q := range owners {
		cons = append(cons, &consumer{p: q, tag: tagData, ack: net.listen(q, tagAckOwn), acked: -1, ahead: partAhead})
	}
	// Process 0's stream too: 12 rounds (D64, when 2 processes split the
	// pass with process 0 only feeding it) were no faster than 3 once the
	// stream went in messages of 16,384 events (D66; decision D70).
	zero := &consumer{p: 0, tag: tagStream, ack: net.listen(0, tagAck0), acked: -1, ahead: partAhead}
	cons = append(cons, zero)
	bufs := make([][]datamodel.GEvent, pl.procs) // by owner process
	var sbuf []datamodel.GEvent                  // to process 0's stream sinks
	cur := int32(0)
	last := int32(pl.rounds - 1)
	ord := make([]uint64, len(a.ranks))
	lastSeq := newLastSeqs(len(a.ranks))
	var end partDecEnd
	first := true
	var rt *p2pRouter
	// inCall: by rank, its last point-to-point event was a completion
	// call, which the rank's next call of any kind ends (callEnd).
	var inCall []bool
	if pl.p2p {
		rt = &p2pRouter{owner: p2pOwners(pl, a.rn), reqs: map[uint64]int32{}, persist: map[uint64]int32{}}
		if pl.p2pSync {
			inCall = make([]bool, len(rt.owner))
		}
	}
	// held: events in bufs together. A buffer is sent when it holds
	// ownChunk events, and all are when they hold partHeld together, so
	// a decoder's buffers stay small whatever K (each grew to a round's
	// events for its owner before: 11–12 MB on a K=8 run). A buffer is
	// made with room for ownChunk events. The stream's buffer to process
	// 0 is sent at partChunkStream events.
	ownChunk := partOwnChunk(len(owners))
	held := 0
	flush := func(c *consumer, done int32, eos bool) error {
		var err error
		h := partHdr{kind: pkEv, eos: eos, round: cur, done: done}
		if c == zero && pl.compact {
			h.kind = pkEvC
			var body []byte
			if len(sbuf) > 0 {
				body = pl.appendCompact(make([]byte, 0, 32*len(sbuf)), sbuf)
			}
			err = net.send(c.p, c.tag, h, nil, body)
			sbuf = sbuf[:0]
		} else if c == zero {
			sbuf, err = net.sendEv(c.p, c.tag, h, sbuf)
		} else {
			held -= len(bufs[c.p])
			bufs[c.p], err = net.sendEv(c.p, c.tag, h, bufs[c.p])
		}
		return err
	}
	// flushFull sends the buffer of c when full, and every non-empty
	// owner's buffer when they hold partHeld events together.
	flushFull := func(c *consumer, n int) error {
		if c == zero {
			if n >= partChunkStream {
				return flush(c, cur-1, false)
			}
			return nil
		}
		if n >= ownChunk {
			return flush(c, cur-1, false)
		}
		if held < partHeld {
			return nil
		}
		for _, c := range cons {
			if c != zero && len(bufs[c.p]) > 0 {
				if err := flush(c, cur-1, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	byProc := make([]*consumer, pl.procs)
	for _, c := range cons {
		if c != zero {
			byProc[c.p] = c
		}
	}
	push := func(q int, e *datamodel.GEvent) error {
		if cap(bufs[q]) == 0 {
			bufs[q] = make([]datamodel.GEvent, 0, ownChunk)
		}
		bufs[q] = append(bufs[q], *e)
		held++
		return flushFull(byProc[q], len(bufs[q]))
	}

	advance := func(rd int32) error {
		if rd < cur {
			end.Irregular++ // out of order beyond the reorder window, NaN
			return nil
		}
		if rd == cur {
			return nil
		}
		for _, c := range cons {
			if err := flush(c, rd-1, false); err != nil {
				return err
			}
		}
		cur = rd
		for _, c := range cons {
			for c.acked < cur-c.ahead && !c.eos {
				m, err := c.ack.get(cur - c.ahead)
				if err != nil {
					return err
				}
				c.acked = max(c.acked, m.done)
				c.eos = m.eos
			}
		}
		return nil
	}
	route := func(ev *datamodel.GEvent) error {
		if ev.Rank < 0 { // a rank's end: every owner needs it
			r := -1 - ev.Rank
			if err := advance(pl.round(ev.Enter)); err != nil {
				return err
			}
			mk := *ev
			if r >= 0 && int(r) < len(ord) {
				mk.LocalEnter = int64(ord[r])
			}
			for _, q := range owners {
				if err := push(q, &mk); err != nil {
					return err
				}
			}
			return nil
		}
		if err := advance(pl.round(ev.Enter)); err != nil {
			return err
		}
		rs := a.ranks[ev.Rank]
		if ev.Enter >= a.wFrom && ev.Enter <= a.wTo {
			end.Events++
			rs.sum.Events++
			rs.pause.observe(ev)
			if !ev.Continuation() {
				rs.sum.TimeInMPI += ev.Exit - ev.Enter
			}
			if first {
				end.StartNS, end.EndNS, first, end.HasFirst = ev.Enter, ev.Exit, false, true
			} else if ev.Exit > end.EndNS {
				end.EndNS = ev.Exit
			}
		}
		ord[ev.Rank]++
		p2p := ev.Op.IsPointToPoint() || ev.Op.IsNonblockingCollective()
		if inCall != nil && int(ev.Rank) < len(inCall) {
			if p2p {
				inCall[ev.Rank] = ev.Op.IsCompletion()
			} else if inCall[ev.Rank] {
				// a call that is not point-to-point after a completion
				// call: the rank's owner ends the completion call here,
				// where the serial root-cause stream does (p2p_part.go
				// callEnd; decision D83)
				inCall[ev.Rank] = false
				mk := datamodel.GEvent{Rank: ev.Rank, Op: opCallEnd, Enter: ev.Enter, Exit: ev.Enter, CommIdx: -1, Site: -1}
				setOrd(&mk, ord[ev.Rank])
				if err := push(int(rt.owner[ev.Rank]), &mk); err != nil {
					return err
				}
			}
		}
		if pl.wants(ev.Op) {
			sbuf = append(sbuf, *ev)
			if err := flushFull(zero, len(sbuf)); err != nil {
				return err
			}
		}
		if ev.CommIdx >= 0 && ev.Op.IsNonblockingCollective() {
			// A nonblocking collective takes its communicator's next
			// sequence number: the blocking one after it skips none (the
			// serial matcher has no instance of that number to mark).
			if l, ok := lastSeq.get(ev.Rank, ev.CommIdx); !ok || unwrapAfter(l, ev.Seq) > l {
				lastSeq.set(ev.Rank, ev.CommIdx, unwrapAfter(l, ev.Seq))
			}
		}
		if rt != nil && p2p && int(ev.Rank) < len(rt.owner) {
			e := *ev
			setOrd(&e, ord[ev.Rank])
			if err := push(int(rt.owner[ev.Rank]), &e); err != nil {
				return err
			}
			if q := rt.other(ev); q >= 0 {
				return push(q, &e)
			}
			return nil
		}
		if ev.CommIdx < 0 || !ev.Op.IsCollective() {
			return nil
		}
		l, ok := lastSeq.get(ev.Rank, ev.CommIdx)
		if !ok {
			l = -1
		}
		u := unwrapAfter(l, ev.Seq)
		if u <= l {
			end.Dupes++ // the serial matcher ignores it
			return nil
		}
		if u > l+1 {
			end.Irregular++ // skipped sequence numbers
		}
		lastSeq.set(ev.Rank, ev.CommIdx, u)
		e := *ev
		e.LocalEnter = int64(ord[ev.Rank])
		return push(pl.ownerOf(ev.CommIdx, ev.Seq), &e)
	}

	quit := make(chan struct{})
	chunks, spare, ends := a.localChunks(mine, len(a.rn.Ranks), partChunk, quit) // routed chunks go back on spare
	var err error
	for c := range chunks {
		if err != nil {
			continue
		}
		for i := range c {
			if err = route(&c[i]); err != nil {
				close(quit)
				break
			}
		}
		select { // routing copied the events
		case spare <- c:
		default:
		}
	}
	if err != nil {
		return err
	}
	for _, c := range cons {
		if err := flush(c, last, true); err != nil {
			return err
		}
	}
	end.Ends = *ends
	for _, rs := range mine {
		p := &rs.pause
		end.Ranks = append(end.Ranks, partRankSum{Rank: int32(rs.in.Rank), Events: rs.sum.Events, TimeInMPI: rs.sum.TimeInMPI,
			Paused: p.paused, Since: p.since, Last: p.last, Pauses: p.pauses, Total: p.total, Longest: p.longest})
		if rs.unsorted > 0 {
			end.Irregular++
		}
	}
	b, err := gobBytes(&end)
	if err != nil {
		return err
	}
	if err := net.send(0, tagEndDec, partHdr{kind: pkEnd}, nil, b); err != nil {
		return err
	}
	// Every consumer's last acknowledgement, so no message is left.
	for _, c := range cons {
		for !c.eos {
			m, err := c.ack.get(last)
			if err != nil {
				return err
			}
			c.eos = m.eos
		}
	}
	return nil
}

// lastSeqs is a decoder's last (unwrapped) sequence number taken per rank
// and communicator: by rank, a short list of (communicator, number), as a
// rank is in few communicators; the numbers of a rank's communicators
// beyond the first seqListMax are in a map. A map keyed by both for every
// event was 7 % of a K=2 worker's CPU (1024 ranks, 10^7 events; issue 37).
type lastSeqs struct {
	by   [][]seqSlot
	more map[uint64]int64
}

type seqSlot struct {
	comm int32
	last int64
}

// seqListMax is how many communicators of a rank lastSeqs keeps in the
// rank's list (a variable for the tests).
var seqListMax = 16

func newLastSeqs(ranks int) *lastSeqs { return &lastSeqs{by: make([][]seqSlot, ranks)} }

// get returns rank's last number on communicator comm, if any.
func (t *lastSeqs) get(rank, comm int32) (int64, bool) {
	l := t.by[rank]
	for _, s := range l {
		if s.comm == comm {
			return s.last, true
		}
	}
	if len(l) < seqListMax {
		return 0, false
	}
	v, ok := t.more[uint64(uint32(rank))<<32|uint64(uint32(comm))]
	return v, ok
}

// set records rank's last number on communicator comm.
func (t *lastSeqs) set(rank, comm int32, v int64) {
	l := t.by[rank]
	for i := range l {
		if l[i].comm == comm {
			l[i].last = v
			return
		}
	}
	if len(l) < seqListMax {
		t.by[rank] = append(l, seqSlot{comm, v})
		return
	}
	if t.more == nil {
		t.more = map[uint64]int64{}
	}
	t.more[uint64(uint32(rank))<<32|uint64(uint32(comm))] = v
}

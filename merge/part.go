package merge

// Partitioned parallel analysis (docs/tracemerge.md "Partitioning the
// analysis"): under mpirun with K processes and no per-event output, the
// collective analysis itself is split, not only the decoding.
//
// Roles (every process may hold several, each in its own goroutine):
//
//   - decoder: a process that owns a block of the rank files (as in
//     dist.go) decodes, corrects and merges them, sums each rank's own
//     figures (events, time in MPI, pauses: each rank's order, so exact),
//     drops repeated sequence numbers (each rank's own order too), and
//     routes every collective event to the owner of its instance and every
//     event a stream sink wants (point-to-point, RMA) to process 0;
//   - owner: the processes owner0..K-1 own the instances (comm, seq) by
//     partPlan.ownerOf; an owner merges what the decoders send it by the
//     serial merge key, matches its instances with the serial matcher and
//     computes each instance's metrics (instWaits, skews, happened-before
//     facts) when the serial pass would finalise it, i.e. at the merge key
//     of the event (or rank end) that completes it; it sends process 0 one
//     record per instance tagged with that key;
//   - process 0 merges the owners' records by key and replays the
//     order-dependent aggregation (float sums, reservoirs, histograms,
//     per-rank waits, the wait matrix, call sites, exit profiles, the
//     worst instances) exactly in the serial order, so every summary
//     output is byte for byte the serial one. It also feeds the stream
//     sinks (point-to-point, RMA) with the events the decoders forwarded,
//     merged by the same key.
//
// Streams are cut into rounds of global time, the same for everyone
// (partPlan.round): a consumer handles round r once every producer has
// said it is done with r, and a decoder starts round r only when every
// consumer has acknowledged round r-partAhead, which bounds the memory in
// flight without any cycle of waits (the slowest decoder's rounds are
// always consumable). Receivers always receive (unbounded queues), so a
// sender never waits on a consumer's progress.
//
// What the serial pass does on damaged input (a rank skipping sequence
// numbers, events out of order beyond the reorder window, an instance
// window jump) depends on all of a communicator's instances at once; a
// decoder or owner that meets it flags the pass as irregular and process 0
// runs it again the event-shipping way (dist.go): ErrPartitionRerun.

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gclock/gclock/trace"
)

// ErrPartitionRerun is returned by a partitioned pass (process 0's Run, a
// worker's Serve) whose input needs the event-shipping distribution (a
// damaged trace, see the package comment of part.go): the caller prepares
// a fresh pass and runs (serves) it again; process 0 then distributes the
// old way.
var ErrPartitionRerun = errors.New("parallel analysis: the partitioned pass met damaged input; running again with the events shipped to process 0")

const (
	partMagic = 0x54524150 // "PART": a partitioned plan
	partRerun = 3          // control word after a partitioned pass: serve again
	partAhead = 3          // rounds a decoder may run ahead of its slowest consumer
	// partBlock: instances are owned in blocks of partBlock consecutive
	// sequence numbers per communicator (round robin over the owners).
	partBlock     = 64
	partChunk     = 16384 // events per message
	partMaxRounds = 1 << 20

	tagData   = 7132 // decoder -> owner: collective events and rank ends
	tagStream = 7133 // decoder -> 0: events a stream sink wants
	tagRes    = 7134 // owner -> 0: instance records
	tagAckOwn = 7135 // owner -> decoder: rounds done
	tagAck0   = 7136 // 0 -> decoder: rounds done
	tagEndDec = 7137 // decoder -> 0: end record
	tagEndOwn = 7138 // owner -> 0: end record
	tagP2PRes = 7139 // owner -> 0: point-to-point records (p2p_part.go)
)

// Message kinds (partHdr.kind).
const (
	pkEv  = 1 // GEvents
	pkRec = 2 // instance records
	pkAck = 3
	pkEnd = 4 // gob end record (terminal)
)

// partRoundEvents is the target number of events (all ranks) per round
// (a variable for the tests).
var partRoundEvents int64 = 1 << 17

// partPlan is what process 0 tells every process: who decodes and owns
// what, and the rounds.
type partPlan struct {
	procs  int
	share0 float64
	rounds int
	start  float64
	delta  float64
	owner0 int
	want   [16]uint64 // ops a stream sink on process 0 wants (op < 1024; higher: all)
	// p2p: the point-to-point analysis is partitioned (p2p_part.go), with
	// these options.
	p2p             bool
	p2pTop, p2pKeep int
	p2pFrom, p2pTo  float64
	p2pRendezvous   uint64
}

const partPlanSize = 4 + 4 + 8 + 4 + 8 + 8 + 4 + 16*8 + 4 + 4 + 4 + 8 + 8 + 8

func (pl *partPlan) encode() []byte {
	b := make([]byte, 0, partPlanSize)
	b = binary.LittleEndian.AppendUint32(b, partMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.procs))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.share0))
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.rounds))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.start))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.delta))
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.owner0))
	for _, w := range pl.want {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	p2p := uint32(0)
	if pl.p2p {
		p2p = 1
	}
	b = binary.LittleEndian.AppendUint32(b, p2p)
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.p2pTop))
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.p2pKeep))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.p2pFrom))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.p2pTo))
	b = binary.LittleEndian.AppendUint64(b, pl.p2pRendezvous)
	return b
}

// p2pOptions are the owners' point-to-point options.
func (pl *partPlan) p2pOptions() P2POptions {
	return P2POptions{TopN: pl.p2pTop, KeepMessages: pl.p2pKeep, From: pl.p2pFrom, To: pl.p2pTo, RendezvousBytes: pl.p2pRendezvous}
}

// decodePlan reads a plan; ok false when b is no plan.
func decodePlan(b []byte) (*partPlan, bool, error) {
	if len(b) != partPlanSize || binary.LittleEndian.Uint32(b) != partMagic {
		return nil, false, nil
	}
	le := binary.LittleEndian
	pl := &partPlan{procs: int(le.Uint32(b[4:])), share0: math.Float64frombits(le.Uint64(b[8:])),
		rounds: int(le.Uint32(b[16:])), start: math.Float64frombits(le.Uint64(b[20:])),
		delta: math.Float64frombits(le.Uint64(b[28:])), owner0: int(le.Uint32(b[36:]))}
	for i := range pl.want {
		pl.want[i] = le.Uint64(b[40+8*i:])
	}
	o := 40 + 8*len(pl.want)
	pl.p2p = le.Uint32(b[o:]) == 1
	pl.p2pTop, pl.p2pKeep = int(int32(le.Uint32(b[o+4:]))), int(int32(le.Uint32(b[o+8:])))
	pl.p2pFrom, pl.p2pTo = math.Float64frombits(le.Uint64(b[o+12:])), math.Float64frombits(le.Uint64(b[o+20:]))
	pl.p2pRendezvous = le.Uint64(b[o+28:])
	if pl.procs < 2 || pl.rounds < 1 || pl.rounds > partMaxRounds || pl.owner0 < 0 || pl.owner0 >= pl.procs ||
		!(pl.delta > 0) || math.IsInf(pl.start, 0) || math.IsNaN(pl.start) {
		return nil, true, errors.New("parallel analysis: bad partition plan")
	}
	return pl, true, nil
}

// round is the round of merge key k.
func (pl *partPlan) round(k float64) int32 {
	if !(k >= pl.start) { // below the start, -Inf (ranks without events), NaN
		if math.IsNaN(k) {
			return int32(pl.rounds - 1)
		}
		return 0
	}
	r := (k - pl.start) / pl.delta
	if r >= float64(pl.rounds-1) {
		return int32(pl.rounds - 1)
	}
	return int32(r)
}

// ownerOf is the process that owns collective instance (comm, seq):
// blocks of partBlock sequence numbers round robin over the owners,
// starting at a place that depends on the communicator.
func (pl *partPlan) ownerOf(comm int32, seq uint32) int {
	n := uint64(pl.procs - pl.owner0)
	h := (uint64(uint32(comm)) * 0x9E3779B97F4A7C15) >> 40
	return pl.owner0 + int((h+uint64(seq/partBlock))%n)
}

func (pl *partPlan) wants(op trace.Op) bool {
	if int(op) >= 64*len(pl.want) {
		return true
	}
	return pl.want[op>>6]>>(op&63)&1 != 0
}

// decoders are the processes with rank files to decode.
func (pl *partPlan) decoders(nFiles int) []int {
	var out []int
	for p := 0; p < pl.procs; p++ {
		if lo, hi := ownedBlock(p, nFiles, pl.procs, pl.share0); hi > lo {
			out = append(out, p)
		}
	}
	return out
}

// partPlanFor decides whether process 0's pass can be partitioned and
// returns the plan (nil: ship events as dist.go does).
func (a *analyzer) partPlanFor(d *Dist) *partPlan {
	if !d.Partition || d.Procs < 2 || len(a.opt.Sinks) > 0 || len(a.zooms) > 0 || a.opt.CollectRepairs ||
		a.opt.CLC != nil || a.opt.Refine != nil || a.opt.Clock == ClockRefined {
		return nil
	}
	start, end := a.runStart, a.footerEnd()
	if math.IsInf(start, 0) || math.IsNaN(start) || math.IsInf(end, 0) || math.IsNaN(end) {
		return nil
	}
	var total int64
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		f := rs.in.Meta.Footer
		if f == nil {
			return nil
		}
		total += int64(f.Events)
	}
	pl := &partPlan{procs: d.Procs, share0: d.Share0, start: start}
	var target *P2PStream
	for _, s := range a.opt.StreamSinks {
		if ps := asP2PStream(s); ps != nil && target == nil && !ps.opt.CollectRepairs {
			// partitioned: the owners analyse it, process 0 replays
			target = ps
			pl.p2p, pl.p2pTop, pl.p2pKeep = true, ps.opt.TopN, ps.opt.KeepMessages
			pl.p2pFrom, pl.p2pTo, pl.p2pRendezvous = ps.opt.From, ps.opt.To, ps.opt.RendezvousBytes
			continue
		}
		f, ok := s.(OpFilter)
		if !ok {
			return nil
		}
		for op := 0; op < 64*len(pl.want); op++ {
			if f.Wants(trace.Op(op)) {
				pl.want[op>>6] |= 1 << (op & 63)
			}
		}
	}
	pl.rounds = int(min(max(total/partRoundEvents, 1), partMaxRounds))
	pl.delta = (end - start) / float64(pl.rounds)
	if !(pl.delta > 0) || math.IsInf(pl.delta, 0) {
		pl.rounds, pl.delta = 1, 1
	}
	if d.Procs >= 3 {
		pl.owner0 = 1 // process 0 replays and feeds the stream sinks
	}
	a.p2pTarget = target
	return pl
}

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
	ev   []GEvent
	body []byte
}

// inbox is an unbounded queue of one (source, tag) stream.
type inbox struct {
	mu   sync.Mutex
	cond *sync.Cond
	q    []partMsg
	err  error
}

func newInbox() *inbox {
	b := &inbox{}
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

func (b *inbox) get() (partMsg, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.q) == 0 && b.err == nil {
		b.cond.Wait()
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
	free      chan []GEvent // spent event buffers, for reuse
}

// getBuf returns an empty event buffer (a spent one when there is one).
func (n *partNet) getBuf() []GEvent {
	select {
	case b := <-n.free:
		return b[:0]
	default:
		return make([]GEvent, 0, partChunk)
	}
}

// putBuf gives a spent event buffer back.
func (n *partNet) putBuf(b []GEvent) {
	if cap(b) < partChunk {
		return
	}
	select {
	case n.free <- b[:0]:
	default:
	}
}

// sendEv sends events and returns an empty buffer for the next ones: ev
// itself when it went to another process (the send has completed), a
// fresh one when the receiver is this process (which now owns ev).
func (n *partNet) sendEv(dest, tag int, h partHdr, ev []GEvent) ([]GEvent, error) {
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
		b = newInbox()
		n.boxes[k] = b
	}
	return b
}

// send sends one message; the payload belongs to the receiver afterwards.
func (n *partNet) send(dest, tag int, h partHdr, ev []GEvent, body []byte) error {
	if dest == n.me {
		n.box(n.me, tag).put(partMsg{partHdr: h, ev: ev, body: body})
		return nil
	}
	p := body
	if ev != nil {
		p = evBytes(ev)
	}

	h.n = len(p)
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
						m.ev = make([]GEvent, k)
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

// partSource is a consumer's view of one producer's stream: segments of
// payload by round, and the last round the producer is done with.
type partSource struct {
	p    int
	box  *inbox
	done int32
	eos  bool
	segs []partMsg
}

// fill reads messages until the producer is done with round r.
func (s *partSource) fill(r int32, last int32) error {
	for s.done < r && !s.eos {
		m, err := s.box.get()
		if err != nil {
			return err
		}
		if m.eos {
			s.eos, s.done = true, last
		} else {
			s.done = max(s.done, m.done)
		}
		if len(m.ev) > 0 || len(m.body) > 0 {
			if len(s.segs) > 0 && m.round < s.segs[len(s.segs)-1].round {
				return fmt.Errorf("parallel analysis: process %d sent round %d after %d", s.p, m.round, s.segs[len(s.segs)-1].round)
			}
			s.segs = append(s.segs, m)
		}
	}
	return nil
}

// take removes and returns the segments of round r.
func (s *partSource) take(r int32) []partMsg {
	i := 0
	for i < len(s.segs) && s.segs[i].round <= r {
		i++
	}
	out := s.segs[:i:i]
	s.segs = s.segs[i:]
	return out
}

// evCursor walks one source's events of a round.
type evCursor struct {
	segs []partMsg
	si   int
	i    int
}

func (c *evCursor) cur() *GEvent {
	for c.si < len(c.segs) && c.i >= len(c.segs[c.si].ev) {
		c.si++
		c.i = 0
	}
	if c.si >= len(c.segs) {
		return nil
	}
	return &c.segs[c.si].ev[c.i]
}

// evRank is the merge rank of an event or end marker.
func evRank(e *GEvent) int32 {
	if e.Rank < 0 {
		return -1 - e.Rank
	}
	return e.Rank
}

// mergeRound calls fn for the events of the sources' segments in the
// serial merge order (Enter, then rank; each rank is one source's).
func mergeRound(cs []*evCursor, fn func(ev *GEvent, src int) error) error {
	for {
		var best *GEvent
		bi := -1
		for i, c := range cs {
			e := c.cur()
			if e == nil {
				continue
			}
			if best == nil || e.Enter < best.Enter || (e.Enter == best.Enter && evRank(e) < evRank(best)) {
				best, bi = e, i
			}
		}
		if best == nil {
			return nil
		}
		if err := fn(best, bi); err != nil {
			return err
		}
		cs[bi].i++
	}
}

// partKey orders the serial finalisation points: the merge key of the
// event (sub 0) or rank end (sub 1) at which an instance was finalised,
// the event's ordinal in its rank, then (comm, seq) among the instances
// finalised at one point; sub 2 is the end of input.
type partKey struct {
	enter float64
	rank  int32
	sub   uint8
	ord   uint64
	comm  int32
	seq   uint32
}

func keyLess(a, b *partKey) bool {
	if a.enter != b.enter {
		return a.enter < b.enter
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.ord != b.ord {
		return a.ord < b.ord
	}
	if a.sub != b.sub {
		return a.sub < b.sub
	}
	if a.comm != b.comm {
		return a.comm < b.comm
	}
	return a.seq < b.seq
}

// Record flags.
const (
	rfComplete = 1 << iota
	rfMismatch
	rfWindow
	rfLatency
	rfZero
	rfExit
	rfWorst
	rfOpRange
)

// partWorst is a candidate for the worst instances, with its call sites
// as (rank, pc) for process 0 to index.
type partWorst struct {
	Inst, Raw Instance
	Sites     [2][3]partSite // [inst, raw][last, wait, cause]
}

type partSite struct {
	Ok   bool
	Rank int32
	PC   uint64
}

// partOwner is an owner's state.
type partOwner struct {
	a     *analyzer
	pl    *partPlan
	key   partKey
	out   []byte
	worst []float64 // local min-heap of entry skews (TopN)
	n     int       // records
	err   error
	// Call sites: the owner's own indices (siteIndexOf); each one is
	// defined to process 0 (rank, pc) in the message before its first use.
	xl      [][]int32 // by source: the decoder's site index -> the owner's
	defined []bool
	defs    []byte
	// Histograms are counts, order-free: the owner keeps them and sends
	// them at the end, process 0 adds them up.
	hists [256]partHists
}

// partHists are one op's histogram counts on an owner.
type partHists struct {
	used       bool
	exit, wait hist
}

// siteRef returns the owner's site index s (of world rank rank's pc),
// defining it to process 0 first if it is new.
func (o *partOwner) siteRef(s int32, rank int32, pc uint64) int32 {
	if s < 0 {
		return -1
	}
	for int(s) >= len(o.defined) {
		o.defined = append(o.defined, false)
	}
	if !o.defined[s] {
		o.defined[s] = true
		o.defs = binary.LittleEndian.AppendUint32(o.defs, uint32(s))
		o.defs = binary.LittleEndian.AppendUint32(o.defs, uint32(rank))
		o.defs = binary.LittleEndian.AppendUint64(o.defs, pc)
	}
	return s
}

// site maps a decoder's call-site index of ev (from source src) to the
// owner's.
func (o *partOwner) site(ev *GEvent, src int) int32 {
	a := o.a
	for src >= len(o.xl) {
		o.xl = append(o.xl, nil)
	}
	x := o.xl[src]
	if ws := ev.site; ws >= 0 && int(ws) < len(x) && x[ws] >= 0 {
		return x[ws]
	}
	rs := a.ranks[ev.Rank]
	if rs == nil {
		return -1
	}
	s := a.siteIndexOf(rs, ev.Callsite)
	if ws := ev.site; ws >= 0 && ws < 1<<20 {
		for int(ws) >= len(x) {
			x = append(x, -1)
		}
		x[ws] = s
		o.xl[src] = x
	}
	return s
}

// emit computes the metrics of one finalised instance (finalize's
// computing half) and appends its record.
func (o *partOwner) emit(in *openInst) {
	a := o.a
	defer func() { in.comm.pool = append(in.comm.pool, in) }()
	cs := in.comm
	n := len(cs.members)
	fe, le, fx, lx, lastPos, ok := in.extent()
	if !ok {
		return
	}
	var flags uint16
	if in.opMismatch {
		flags |= rfMismatch
	}
	inWin := !(fe < a.wFrom || fe > a.wTo)
	if !inWin && flags == 0 {
		return
	}
	k := o.key
	k.comm, k.seq = cs.idx, in.seq
	b := o.out
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(k.enter))
	b = binary.LittleEndian.AppendUint32(b, uint32(k.rank))
	b = append(b, k.sub)
	b = binary.LittleEndian.AppendUint64(b, k.ord)
	b = binary.LittleEndian.AppendUint32(b, uint32(k.comm))
	b = binary.LittleEndian.AppendUint32(b, k.seq)
	flagAt := len(b)
	b = binary.LittleEndian.AppendUint16(b, flags)
	o.n++
	if !inWin {
		o.out = b
		return
	}
	flags |= rfWindow
	complete := in.got == n
	if complete {
		flags |= rfComplete
	}
	op := in.op
	b = binary.LittleEndian.AppendUint16(b, uint16(op))
	if int(op) >= len(a.ops) {
		flags |= rfOpRange
		binary.LittleEndian.PutUint16(b[flagAt:], flags)
		o.out = b
		return
	}
	exitProf := complete && op.Synchronizing() && n >= 2 && n <= MaxExitProfile
	cls := WaitClassOf(op)
	entrySkew, exitSkew := le-fe, lx-fx
	r := a.instWaits(in, false)
	latency := 0.0
	if cls.HasLatency() && r.synced {
		flags |= rfLatency
		latency = fx - le
		if complete {
			a.hbFacts(in)
		}
	}
	if r.zero {
		flags |= rfZero
	}
	var worst *partWorst
	if len(o.worst) < a.opt.TopN || entrySkew > o.worst[0] {
		fh := (*floatHeap)(&o.worst)
		if len(o.worst) < a.opt.TopN {
			heap.Push(fh, entrySkew)
		} else {
			o.worst[0] = entrySkew
			heap.Fix(fh, 0)
		}
		worst = &partWorst{Inst: a.buildInstance(in, false), Raw: a.buildInstance(in, true)}
		for i, inst := range []*Instance{&worst.Inst, &worst.Raw} {
			for p, w := range cs.members {
				if in.state[p] != stArrived {
					continue
				}
				s := partSite{Ok: true, Rank: w, PC: in.pc[p]}
				if w == inst.LastRank {
					worst.Sites[i][0] = s
				}
				if w == inst.MaxWaitRank {
					worst.Sites[i][1] = s
				}
				if w == inst.CauseRank {
					worst.Sites[i][2] = s
				}
			}
		}
		flags |= rfWorst
	}
	if exitProf {
		flags |= rfExit
	}
	binary.LittleEndian.PutUint16(b[flagAt:], flags)
	o.hists[op].used = true
	o.hists[op].exit.add(exitSkew)
	b = binary.LittleEndian.AppendUint32(b, uint32(in.got))
	b = binary.LittleEndian.AppendUint32(b, uint32(cs.members[lastPos]))
	for _, v := range []float64{entrySkew, exitSkew, latency, lx - fe, r.viol} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.pos)))
	for i, p := range r.pos {
		cr := int32(-1)
		if c := r.cause[i]; c >= 0 {
			cr = cs.members[r.pos[c]]
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(cs.members[p]))
		b = binary.LittleEndian.AppendUint32(b, uint32(cr))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.wait[i]))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(in.exit[p]-in.enter[p]))
		b = binary.LittleEndian.AppendUint32(b, uint32(o.siteRef(in.site[p], cs.members[p], in.pc[p])))
		o.hists[op].wait.add(r.wait[i])
	}
	if exitProf {
		for _, x := range in.exit {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x-fx))
		}
	}
	if worst != nil {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(worst); err != nil && o.err == nil {
			o.err = fmt.Errorf("parallel analysis: encoding an instance: %w", err)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(buf.Len()))
		b = append(b, buf.Bytes()...)
	}
	o.out = b
}

type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// recReader decodes records with bounds checks (a bad message is an
// error, never a panic).
type recReader struct {
	b   []byte
	i   int
	bad bool
}

func (r *recReader) need(n int) bool {
	if r.bad || n < 0 || r.i+n > len(r.b) {
		r.bad = true
		return false
	}
	return true
}
func (r *recReader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}
func (r *recReader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	r.i += 2
	return binary.LittleEndian.Uint16(r.b[r.i-2:])
}
func (r *recReader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	r.i += 4
	return binary.LittleEndian.Uint32(r.b[r.i-4:])
}
func (r *recReader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	r.i += 8
	return binary.LittleEndian.Uint64(r.b[r.i-8:])
}
func (r *recReader) f64() float64 { return math.Float64frombits(r.u64()) }

// readKey reads a record's key at r.i.
func (r *recReader) readKey(k *partKey) {
	k.enter = r.f64()
	k.rank = int32(r.u32())
	k.sub = r.u8()
	k.ord = r.u64()
	k.comm = int32(r.u32())
	k.seq = r.u32()
}

// partReplay is process 0's replay of the records (the aggregating half
// of finalize, in the serial order).
type partReplay struct {
	a *analyzer
	// sites: by rank, the (pc, site index) pairs seen, most recent first
	// (a rank has few call sites of collectives: a short scan, no hash).
	sites   [][]pcSlot
	present []bool       // by rank: has a rank file
	wait    []rankWait   // by rank: dense (the rank states are large), into a.ranks at the end
	missing int          // worst candidates without their instance
	ms      []partMember // scratch
	tab     []int32      // the current record's owner's site table
}

// partMember is one member's part of an instance record.
type partMember struct {
	wr, cr int32 // world rank, causing world rank (-1: none)
	w, d   float64
	site   int32 // the owner's call-site index (partReplay.xlate)
}

func newPartReplay(a *analyzer) *partReplay {
	p := &partReplay{a: a, sites: make([][]pcSlot, len(a.ranks)), present: make([]bool, len(a.ranks)),
		wait: make([]rankWait, len(a.ranks))}
	for r, rs := range a.ranks {
		p.present[r] = rs != nil
	}
	return p
}

// done moves the per-rank waits into the rank states.
func (p *partReplay) done() {
	for r, rs := range p.a.ranks {
		if rs != nil {
			rs.wait = p.wait[r]
		}
	}
}

// xlate maps the current owner's site index to process 0's (-1: none).
func (p *partReplay) xlate(s int32) int32 {
	if s < 0 || int(s) >= len(p.tab) {
		return -1
	}
	return p.tab[s]
}

// defineSites reads the site definitions heading an owner's message
// into the owner's table.
func (p *partReplay) defineSites(tab []int32, r *recReader) ([]int32, bool) {
	n := int(r.u32())
	if n > 1<<24 || !r.need(16*n) {
		return tab, false
	}
	for i := 0; i < n; i++ {
		s, rank, pc := int32(r.u32()), int32(r.u32()), r.u64()
		if s < 0 || s >= 1<<24 {
			return tab, false
		}
		for int(s) >= len(tab) {
			tab = append(tab, -1)
		}
		tab[s] = p.site(rank, pc)
	}
	return tab, !r.bad
}

func (p *partReplay) site(rank int32, pc uint64) int32 {
	a := p.a
	if rank < 0 || int(rank) >= len(a.ranks) || a.ranks[rank] == nil {
		return -1
	}
	l := p.sites[rank]
	for i := range l {
		if l[i].pc == pc {
			if i > 0 {
				l[0], l[i] = l[i], l[0]
			}
			return l[0].site
		}
	}
	s := a.siteIndexOf(a.ranks[rank], pc)
	p.sites[rank] = append([]pcSlot{{pc: pc, site: s, ok: true}}, l...)
	return s
}

// apply replays one record (r at its flags); false on a bad record.
func (p *partReplay) apply(r *recReader, comm int32, flags uint16) bool {
	a := p.a
	if flags&rfMismatch != 0 {
		a.opMism++
	}
	if flags&rfWindow == 0 {
		return !r.bad
	}
	if comm < 0 || int(comm) >= len(a.m.comms) {
		return false
	}
	cs := a.m.comms[comm]
	a.instances++
	complete := flags&rfComplete != 0
	if !complete {
		a.incomp++
	}
	op := trace.Op(r.u16())
	if flags&rfOpRange != 0 {
		return !r.bad
	}
	if int(op) >= len(a.ops) {
		return false
	}
	got := int(r.u32())
	lastRank := int32(r.u32())
	entrySkew, exitSkew, latency, span, v := r.f64(), r.f64(), r.f64(), r.f64(), r.f64()
	m := int(r.u32())
	if r.bad || m > len(cs.members) || 28*m > len(r.b)-r.i {
		return false
	}
	ms := p.ms[:0]
	for i := 0; i < m; i++ {
		ms = append(ms, partMember{int32(r.u32()), int32(r.u32()), r.f64(), r.f64(), int32(r.u32())})
	}
	p.ms = ms
	if flags&rfExit != 0 {
		k := exitKey{op, cs}
		acc := a.exits[k]
		n := len(cs.members)
		if acc == nil {
			acc = &exitAcc{sum: make([]float64, n), sumsq: make([]float64, n)}
			if a.exits == nil {
				a.exits = map[exitKey]*exitAcc{}
			}
			a.exits[k] = acc
			a.exitOrder = append(a.exitOrder, k)
		}
		acc.n++
		for q := 0; q < n; q++ {
			d := r.f64()
			acc.sum[q] += d
			acc.sumsq[q] += d * d
		}
	}
	var worst *partWorst
	if flags&rfWorst != 0 {
		n := int(r.u32())
		if !r.need(n) {
			return false
		}
		worst = &partWorst{}
		if err := gob.NewDecoder(bytes.NewReader(r.b[r.i : r.i+n])).Decode(worst); err != nil {
			return false
		}
		r.i += n
	}
	if r.bad {
		return false
	}
	for _, x := range ms {
		if x.wr < 0 || int(x.wr) >= len(p.present) || !p.present[x.wr] || x.cr >= int32(len(p.present)) ||
			(x.cr >= 0 && !p.present[x.cr]) {
			return false
		}
	}
	if lastRank < 0 || int(lastRank) >= len(p.present) || !p.present[lastRank] {
		return false
	}
	oa := &a.ops[op]
	oa.used = true
	oa.count++
	oa.calls += got
	oa.entrySkew.add(entrySkew)
	oa.exitSkew.add(exitSkew)
	if flags&rfLatency != 0 {
		oa.latency.add(latency)
	}
	if flags&rfZero != 0 {
		oa.zeroByte++
	}
	oa.span.add(span)
	// histExit and histWait: the owners' counts, added at the end
	if got >= 2 && v > 0 {
		oa.viol++
		a.clockViol++
		if v > oa.maxViol {
			oa.maxViol = v
		}
		if v > a.maxViol {
			a.maxViol = v
		}
	}
	if a.pair == nil && a.rn.WorldSize <= MaxPairRanks {
		a.pair = make([]float64, a.rn.WorldSize*a.rn.WorldSize)
	}
	if got >= 2 {
		p.wait[lastRank].last++
	}
	var causedBy []int32
	for _, x := range ms {
		w, d, wr := x.w, x.d, x.wr
		oa.total += d
		oa.wait.add(w)
		p.wait[wr].wait += w
		if cr := x.cr; cr >= 0 && w > 0 {
			p.wait[cr].lateness += w
			seen := false
			for _, r := range causedBy {
				seen = seen || r == cr
			}
			if !seen {
				causedBy = append(causedBy, cr)
				p.wait[cr].caused++
			}
			if a.pair != nil {
				a.pair[int(cr)*a.rn.WorldSize+int(wr)] += w
			}
		}
		if site := p.xlate(x.site); site >= 0 {
			ca := a.csAccFor(site, op)
			ca.calls++
			ca.total += d
			ca.wait.add(w)
		}
	}
	if len(a.worst) < a.opt.TopN || entrySkew > a.worst[0].inst.EntrySkew {
		if worst == nil {
			p.missing++
			return true
		}
		for i, inst := range []*Instance{&worst.Inst, &worst.Raw} {
			s := worst.Sites[i]
			inst.lastSite, inst.waitSite, inst.causeSite = -1, -1, -1
			if s[0].Ok {
				inst.lastSite = p.site(s[0].Rank, s[0].PC)
			}
			if s[1].Ok {
				inst.waitSite = p.site(s[1].Rank, s[1].PC)
			}
			if s[2].Ok {
				inst.causeSite = p.site(s[2].Rank, s[2].PC)
			}
		}
		w := worstEntry{inst: worst.Inst, raw: worst.Raw}
		if len(a.worst) < a.opt.TopN {
			heap.Push(&a.worst, w)
		} else {
			a.worst[0] = w
			heap.Fix(&a.worst, 0)
		}
	}
	return true
}

// siteIndexOf is siteOf without the rank's own cache (which its decoder
// owns): the shared site index of pc in rank rs's objects.
func (a *analyzer) siteIndexOf(rs *rankState, pc uint64) int32 {
	k := siteKey{addr: pc, pc: pc}
	objs := rs.objs
	lo, hi := 0, len(objs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if objs[m].Hi > pc {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if i := lo; i < len(objs) && objs[i].Lo <= pc && pc < objs[i].Hi {
		k.obj = objs[i].Path
		k.addr = pc - objs[i].Base
	}
	lookup := siteKey{obj: k.obj, addr: k.addr}
	a.siteMu.Lock()
	defer a.siteMu.Unlock()
	s, ok := a.siteIndex[lookup]
	if !ok {
		s = int32(len(a.sites))
		a.siteIndex[lookup] = s
		a.sites = append(a.sites, k)
	}
	return s
}

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
	}
	var cons []*consumer
	for _, q := range owners {
		cons = append(cons, &consumer{p: q, tag: tagData, ack: net.listen(q, tagAckOwn), acked: -1})
	}
	zero := &consumer{p: 0, tag: tagStream, ack: net.listen(0, tagAck0), acked: -1}
	cons = append(cons, zero)
	bufs := make([][]GEvent, pl.procs) // by owner process
	var sbuf []GEvent                  // to process 0's stream sinks
	cur := int32(0)
	last := int32(pl.rounds - 1)
	ord := make([]uint64, len(a.ranks))
	lastSeq := map[uint64]int64{}
	var end partDecEnd
	first := true
	var rt *p2pRouter
	if pl.p2p {
		rt = &p2pRouter{owner: p2pOwners(pl, a.rn), reqs: map[uint64]int32{}}
	}
	push := func(q int, e *GEvent) error {
		bufs[q] = append(bufs[q], *e)
		if len(bufs[q]) >= partChunk {
			var err error
			if bufs[q], err = net.sendEv(q, tagData, partHdr{kind: pkEv, round: cur, done: cur - 1}, bufs[q]); err != nil {
				return err
			}
		}
		return nil
	}

	flush := func(c *consumer, done int32, eos bool) error {
		var err error
		h := partHdr{kind: pkEv, eos: eos, round: cur, done: done}
		if c == zero {
			sbuf, err = net.sendEv(c.p, c.tag, h, sbuf)
		} else {
			bufs[c.p], err = net.sendEv(c.p, c.tag, h, bufs[c.p])
		}
		return err
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
			for c.acked < cur-partAhead && !c.eos {
				m, err := c.ack.get()
				if err != nil {
					return err
				}
				c.acked = max(c.acked, m.done)
				c.eos = m.eos
			}
		}
		return nil
	}
	route := func(ev *GEvent) error {
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
				bufs[q] = append(bufs[q], mk)
				if len(bufs[q]) >= partChunk {
					var err error
					if bufs[q], err = net.sendEv(q, tagData, partHdr{kind: pkEv, round: cur, done: cur - 1}, bufs[q]); err != nil {
						return err
					}
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
		if pl.wants(ev.Op) {
			sbuf = append(sbuf, *ev)
			if len(sbuf) >= partChunk {
				var err error
				if sbuf, err = net.sendEv(0, tagStream, partHdr{kind: pkEv, round: cur, done: cur - 1}, sbuf); err != nil {
					return err
				}
			}
		}
		if ev.commIdx >= 0 && ev.Op.IsNonblockingCollective() {
			// A nonblocking collective takes its communicator's next
			// sequence number: the blocking one after it skips none (the
			// serial matcher has no instance of that number to mark).
			k := uint64(uint32(ev.Rank))<<32 | uint64(uint32(ev.commIdx))
			if l, ok := lastSeq[k]; !ok || int64(ev.Seq) > l {
				lastSeq[k] = int64(ev.Seq)
			}
		}
		if rt != nil && (ev.Op.IsPointToPoint() || ev.Op.IsNonblockingCollective()) && int(ev.Rank) < len(rt.owner) {
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
		if ev.commIdx < 0 || !ev.Op.IsCollective() {
			return nil
		}
		k := uint64(uint32(ev.Rank))<<32 | uint64(uint32(ev.commIdx))
		l, ok := lastSeq[k]
		if !ok {
			l = -1
		}
		if int64(ev.Seq) <= l {
			end.Dupes++ // the serial matcher ignores it
			return nil
		}
		if int64(ev.Seq) > l+1 {
			end.Irregular++ // skipped sequence numbers
		}
		lastSeq[k] = int64(ev.Seq)
		e := *ev
		e.LocalEnter = int64(ord[ev.Rank])
		return push(pl.ownerOf(ev.commIdx, ev.Seq), &e)
	}

	quit := make(chan struct{})
	chunks := make(chan []GEvent, 2)
	spare := make(chan []GEvent, 4) // routed chunks back to the merge
	var ends map[int]distEnd
	go func() {
		defer close(chunks)
		ends = a.mergeLocal(mine, len(a.rn.Ranks), quit, func(c []GEvent) bool {
			select {
			case chunks <- c:
				return true
			case <-quit:
				return false
			}
		}, spare)
	}()
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
	end.Ends = ends
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
			m, err := c.ack.get()
			if err != nil {
				return err
			}
			c.eos = m.eos
		}
	}
	return nil
}

// partOwn is an owner: it matches its instances and sends their records.
func (a *analyzer) partOwn(pl *partPlan, net *partNet, decs []int) error {
	o := &partOwner{a: a, pl: pl}
	var ps *P2PStream // the point-to-point analysis of this owner's ranks
	if pl.p2p {
		ps = newP2POwner(a.rn, pl.p2pOptions(), p2pOwners(pl, a.rn), net.me)
	}
	a.m.fin = o.emit
	a.m.part = true
	for r, rs := range a.ranks {
		if rs == nil {
			a.m.endRank(int32(r))
		}
	}
	srcs := make([]*partSource, len(decs))
	for i, p := range decs {
		srcs[i] = &partSource{p: p, box: net.listen(p, tagData), done: -1}
	}
	last := int32(pl.rounds - 1)
	cs := make([]*evCursor, len(srcs))
	handle := func(ev *GEvent, src int) error {
		if ev.Rank < 0 {
			r := -1 - ev.Rank
			o.key = partKey{enter: ev.Enter, rank: r, sub: 1, ord: uint64(ev.LocalEnter)}
			a.m.endRank(r)
			return o.err
		}
		if ps != nil && (ev.Op.IsPointToPoint() || ev.Op.IsNonblockingCollective()) {
			ps.part.key.ord = getOrd(ev)
			return ps.Add(ev)
		}
		o.key = partKey{enter: ev.Enter, rank: ev.Rank, ord: uint64(ev.LocalEnter)}
		if ev.commIdx < 0 || int(ev.commIdx) >= len(a.m.comms) || ev.commRank < 0 ||
			int(ev.commRank) >= len(a.m.comms[ev.commIdx].members) {
			return fmt.Errorf("parallel analysis: an event on an unknown communicator")
		}
		if ev.Rank >= int32(len(a.ranks)) {
			return fmt.Errorf("parallel analysis: an event of rank %d of %d", ev.Rank, len(a.ranks))
		}
		ev.site = o.site(ev, src)
		a.m.add(ev)
		return o.err
	}
	for r := int32(0); r <= last; r++ {
		for i, s := range srcs {
			if err := s.fill(r, last); err != nil {
				return err
			}
			cs[i] = &evCursor{segs: s.take(r)}
		}
		if err := mergeRound(cs, handle); err != nil {
			return err
		}
		for _, c := range cs {
			net.putSegs(c.segs)
		}
		if r == last {
			o.key = partKey{enter: math.Inf(1), rank: math.MaxInt32, sub: 2, ord: math.MaxUint64}
			a.m.flush()
		}
		if o.err != nil {
			return o.err
		}
		// Every round, records or none: process 0 and the decoders wait
		// for it.
		out := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(o.defs)+len(o.out)), uint32(len(o.defs)/16))
		out = append(append(out, o.defs...), o.out...)
		o.out, o.defs = o.out[:0], o.defs[:0]
		if err := net.send(0, tagRes, partHdr{kind: pkRec, eos: r == last, round: r, done: r}, nil, out); err != nil {
			return err
		}
		if ps != nil {
			out := append([]byte(nil), ps.part.out...)
			ps.part.out = ps.part.out[:0]
			if err := net.send(0, tagP2PRes, partHdr{kind: pkRec, eos: r == last, round: r, done: r}, nil, out); err != nil {
				return err
			}
		}
		for _, p := range decs {
			if err := net.send(p, tagAckOwn, partHdr{kind: pkAck, eos: r == last, round: r, done: r}, nil, nil); err != nil {
				return err
			}
		}
	}
	end := partOwnEnd{Irregular: a.m.irregular, Records: o.n, MaxOpen: a.m.maxOpen}
	if ps != nil {
		end.P2P = ps.ownerEnd()
	}
	for op, h := range o.hists {
		if h.used {
			end.Hists = append(end.Hists, partHistEnd{Op: op, Exit: h.exit.counts[:], Wait: h.wait.counts[:]})
		}
	}
	for _, cells := range a.hb.cells {
		var cc []partCell
		for _, c := range cells {
			cc = append(cc, partCell{c.lo, c.hi, c.first, c.last, c.n})
		}
		end.Cells = append(end.Cells, cc)
	}
	b, err := gobBytes(&end)
	if err != nil {
		return err
	}
	return net.send(0, tagEndOwn, partHdr{kind: pkEnd}, nil, b)
}

// partZero is process 0's consumer: stream sinks and the replay.
func (a *analyzer) partZero(pl *partPlan, net *partNet, decs []int) error {
	var ssrc, rsrc []*partSource
	for _, p := range decs {
		ssrc = append(ssrc, &partSource{p: p, box: net.listen(p, tagStream), done: -1})
	}
	var psrc []*partSource // point-to-point records (p2p_part.go)
	for q := pl.owner0; q < pl.procs; q++ {
		rsrc = append(rsrc, &partSource{p: q, box: net.listen(q, tagRes), done: -1})
		if pl.p2p {
			psrc = append(psrc, &partSource{p: q, box: net.listen(q, tagP2PRes), done: -1})
		}
	}
	rp := newPartReplay(a)
	defer rp.done()
	last := int32(pl.rounds - 1)
	cs := make([]*evCursor, len(ssrc))
	type recCur struct {
		q    int // owner index (rsrc)
		segs []partMsg
		si   int
		r    recReader
		key  partKey
	}
	tabs := make([][]int32, len(rsrc)) // per owner: its site index -> process 0's
	// next loads the cursor's next record key; false at the end.
	next := func(c *recCur) (bool, error) {
		for {
			if c.r.b != nil && c.r.i < len(c.r.b) {
				c.r.readKey(&c.key)
				if c.r.bad {
					return false, errors.New("parallel analysis: bad instance record")
				}
				return true, nil
			}
			if c.si >= len(c.segs) {
				return false, nil
			}
			c.r = recReader{b: c.segs[c.si].body}
			c.si++
			var ok bool
			if tabs[c.q], ok = rp.defineSites(tabs[c.q], &c.r); !ok {
				return false, errors.New("parallel analysis: bad call-site definitions")
			}
		}
	}
	var sinks []Sink
	for _, s := range a.opt.StreamSinks {
		if !pl.p2p || asP2PStream(s) != a.p2pTarget {
			sinks = append(sinks, s)
		}
	}
	var n int64
	for r := int32(0); r <= last; r++ {
		for i, s := range ssrc {
			if err := s.fill(r, last); err != nil {
				return err
			}
			cs[i] = &evCursor{segs: s.take(r)}
		}
		if err := mergeRound(cs, func(ev *GEvent, _ int) error {
			n++
			for _, s := range sinks {
				if err := s.Add(ev); err != nil {
					return fmt.Errorf("point-to-point pass: %w", err)
				}
			}
			return nil
		}); err != nil {
			return err
		}
		for _, c := range cs {
			net.putSegs(c.segs)
		}
		var rcs []*recCur
		for q, s := range rsrc {
			if err := s.fill(r, last); err != nil {
				return err
			}
			c := &recCur{q: q, segs: s.take(r)}
			ok, err := next(c)
			if err != nil {
				return err
			}
			if ok {
				rcs = append(rcs, c)
			}
		}
		for len(rcs) > 0 {
			bi := 0
			for i := 1; i < len(rcs); i++ {
				if keyLess(&rcs[i].key, &rcs[bi].key) {
					bi = i
				}
			}
			c := rcs[bi]
			flags := c.r.u16()
			rp.tab = tabs[c.q]
			if !rp.apply(&c.r, c.key.comm, flags) {
				return errors.New("parallel analysis: bad instance record")
			}
			ok, err := next(c)
			if err != nil {
				return err
			}
			if !ok {
				rcs = append(rcs[:bi], rcs[bi+1:]...)
			}
		}
		if pl.p2p {
			if err := a.replayP2P(psrc, r, last); err != nil {
				return err
			}
		}
		if a.opt.Progress != nil {
			a.opt.Progress(n, 0)
		}
		for _, p := range decs {
			if err := net.send(p, tagAck0, partHdr{kind: pkAck, eos: r == last, round: r, done: r}, nil, nil); err != nil {
				return err
			}
		}
	}
	if rp.missing > 0 {
		a.partIrregular++
	}
	return nil
}

// partEnds collects the end records on process 0 (after partZero).
func (a *analyzer) partEnds(pl *partPlan, net *partNet, decs []int) error {
	reported := make([]bool, len(a.ranks))
	var dec partDecEnd
	first := true
	for _, p := range decs {
		m, err := net.listen(p, tagEndDec).get()
		if err != nil {
			return err
		}
		var e partDecEnd
		if err := gob.NewDecoder(bytes.NewReader(m.body)).Decode(&e); err != nil {
			return fmt.Errorf("parallel analysis: end record of process %d: %w", p, err)
		}
		if e.Ends != nil {
			if x, ok := e.Ends[-1]; ok {
				return fmt.Errorf("%w: process %d: %s", ErrDistInput, p, x.Err)
			}
		}
		a.events += e.Events
		dec.Dupes += e.Dupes
		a.partIrregular += e.Irregular
		if e.HasFirst {
			if first {
				a.an.StartNS, a.an.EndNS, first = e.StartNS, e.EndNS, false
			} else {
				a.an.StartNS = math.Min(a.an.StartNS, e.StartNS)
				if e.EndNS > a.an.EndNS {
					a.an.EndNS = e.EndNS
				}
			}
		}
		for _, s := range e.Ranks {
			if s.Rank < 0 || int(s.Rank) >= len(a.ranks) || a.ranks[s.Rank] == nil {
				continue
			}
			reported[s.Rank] = true
			if p == 0 {
				continue // process 0's own decoders wrote its ranks' state
			}
			rs := a.ranks[s.Rank]
			rs.sum.Events, rs.sum.TimeInMPI = s.Events, s.TimeInMPI
			rs.pause = pauseState{paused: s.Paused, since: s.Since, last: s.Last, pauses: s.Pauses, total: s.Total, longest: s.Longest}
		}
		if p == 0 {
			continue
		}
		a.applyEnds(e.Ends)
	}
	if !first {
		a.first = false
	}
	a.m.dupes += dec.Dupes
	for q := pl.owner0; q < pl.procs; q++ {
		m, err := net.listen(q, tagEndOwn).get()
		if err != nil {
			return err
		}
		var e partOwnEnd
		if err := gob.NewDecoder(bytes.NewReader(m.body)).Decode(&e); err != nil {
			return fmt.Errorf("parallel analysis: end record of process %d: %w", q, err)
		}
		a.partIrregular += e.Irregular
		if pl.p2p {
			if e.P2P == nil {
				return fmt.Errorf("parallel analysis: process %d sent no point-to-point end record", q)
			}
			if err := a.p2pTarget.mergeOwner(e.P2P); err != nil {
				return err
			}
		}
		for _, h := range e.Hists {
			if h.Op < 0 || h.Op >= len(a.ops) || len(h.Exit) != len(a.ops[h.Op].histExit.counts) || len(h.Wait) != len(a.ops[h.Op].histWait.counts) {
				return fmt.Errorf("parallel analysis: bad histogram from process %d", q)
			}
			oa := &a.ops[h.Op]
			for i := range h.Exit {
				oa.histExit.counts[i] += h.Exit[i]
				oa.histWait.counts[i] += h.Wait[i]
			}
		}
		if q == 0 {
			continue // process 0's owner wrote a.hb itself
		}
		for r, cells := range e.Cells {
			if r >= len(a.hb.cells) {
				break
			}
			cur := a.hb.cells[r]
			for len(cur) < len(cells) {
				cur = append(cur, hbCell{lo: math.Inf(-1), hi: math.Inf(1)})
			}
			for i, c := range cells {
				x := &cur[i]
				if c.N == 0 {
					continue
				}
				if x.n == 0 {
					x.first, x.last = c.First, c.Last
				}
				x.first, x.last = math.Min(x.first, c.First), math.Max(x.last, c.Last)
				x.lo = math.Max(x.lo, c.Lo)
				x.hi = math.Min(x.hi, c.Hi)
				x.n += c.N
			}
			a.hb.cells[r] = cur
		}
	}
	for r, rs := range a.ranks {
		if rs != nil && !reported[r] {
			return fmt.Errorf("%w: rank %d's events never came from its process (can every process read %s?)", ErrDistInput, r, a.rn.Dir)
		}
	}
	return nil
}

// runPart is process 0's partitioned pass (the plan sent already).
func (a *analyzer) runPart(pl *partPlan) error {
	d := a.dist
	net := &partNet{t: d.T, me: 0, boxes: map[[2]int]*inbox{}, free: make(chan []GEvent, 32)}
	decs := pl.decoders(len(a.rn.Ranks))
	a.startWindow(math.Inf(1)) // runStart is known (partPlanFor)
	for _, p := range decs {
		net.listen(p, tagEndDec)
		net.listen(p, tagStream)
	}
	for q := pl.owner0; q < pl.procs; q++ {
		net.listen(q, tagEndOwn)
		net.listen(q, tagRes)
		if pl.p2p {
			net.listen(q, tagP2PRes)
		}
	}
	roles := &partRoles{}
	if lo, hi := ownedBlock(0, len(a.rn.Ranks), pl.procs, pl.share0); hi > lo {
		mine := a.block(lo, hi)
		roles.start(func() error { return a.partDecode(pl, net, mine) })
	}
	// The owner's matcher on process 0 is a.m; the replay touches none of
	// it but the communicator table, which matching does not change.
	if pl.owner0 == 0 {
		roles.start(func() error { return a.partOwn(pl, net, decs) })
	}
	roles.start(func() error {
		if err := a.partZero(pl, net, decs); err != nil {
			return err
		}
		return a.partEnds(pl, net, decs)
	})
	if err := roles.wait(); err != nil {
		return err
	}
	if a.partIrregular > 0 {
		for w := 1; w < d.Procs; w++ {
			if err := request(d.T, w, partRerun); err != nil {
				return err
			}
		}
		return ErrPartitionRerun
	}
	return nil
}

// servePart is a worker's partitioned pass.
func (a *analyzer) servePart(pl *partPlan, d *Dist) error {
	if a.failed != nil {
		return fmt.Errorf("%w: cannot take part: %v", ErrDistInput, a.failed)
	}
	if d.FailPart != nil {
		return d.FailPart
	}
	if pl.procs != d.Procs {
		return fmt.Errorf("parallel analysis: plan for %d processes in a job of %d", pl.procs, d.Procs)
	}
	if math.IsInf(a.runStart, 0) || a.runStart != pl.start {
		return errors.New("parallel analysis: this process sees another run start than process 0 (different files?)")
	}
	a.startWindow(math.Inf(1))
	net := &partNet{t: d.T, me: d.Me, boxes: map[[2]int]*inbox{}, free: make(chan []GEvent, 32)}
	decs := pl.decoders(len(a.rn.Ranks))
	roles := &partRoles{}
	if lo, hi := ownedBlock(d.Me, len(a.rn.Ranks), pl.procs, pl.share0); hi > lo {
		mine := a.block(lo, hi)
		roles.start(func() error { return a.partDecode(pl, net, mine) })
	}
	if d.Me >= pl.owner0 {
		roles.start(func() error { return a.partOwn(pl, net, decs) })
	}
	if err := roles.wait(); err != nil {
		return err
	}
	// Process 0 says stop, or run again the event-shipping way.
	msg, err := recvMsg(d.T, 0, nil)
	if err != nil {
		return err
	}
	if len(msg) == 4 && binary.LittleEndian.Uint32(msg) == partRerun {
		return ErrPartitionRerun
	}
	if len(msg) == 4 && binary.LittleEndian.Uint32(msg) == 0 {
		return nil
	}
	return errors.New("parallel analysis: bad request after the partitioned pass")
}

// block returns the rank states of the rank files [lo, hi).
func (a *analyzer) block(lo, hi int) []*rankState {
	var mine []*rankState
	for _, ri := range a.rn.Ranks[lo:hi] {
		mine = append(mine, a.ranks[ri.Rank])
	}
	return mine
}

// partRoles runs a process's roles, each in its own goroutine.
type partRoles struct {
	n    int
	errc chan error
}

func (r *partRoles) start(fn func() error) {
	if r.errc == nil {
		r.errc = make(chan error, 4)
	}
	r.n++
	go func() {
		defer func() {
			if x := recover(); x != nil {
				r.errc <- fmt.Errorf("parallel analysis: internal error: %v", x)
			}
		}()
		r.errc <- fn()
	}()
}

// wait returns when every role has returned, or at the first error: the
// others may then wait for messages that never come, and the caller
// aborts the job (tracemerge calls MPI_Abort).
func (r *partRoles) wait() error {
	for ; r.n > 0; r.n-- {
		if err := <-r.errc; err != nil {
			return err
		}
	}
	return nil
}

// DefaultPartShare0 is process 0's default share of the rank files in a
// partitioned pass (Dist.Share0): with 2 processes both decode and match
// and process 0 also aggregates and feeds the point-to-point analysis, so
// it takes a little less; with more, none (it aggregates only).
func DefaultPartShare0(procs int) float64 {
	if procs == 2 {
		return 0.5
	}
	return 0
}

// replayP2P replays the owners' point-to-point records of round r into
// process 0's stream in the serial order (p2p_part.go).
func (a *analyzer) replayP2P(srcs []*partSource, r, last int32) error {
	type cur struct {
		segs []partMsg
		si   int
		r    recReader
		key  p2pRecKey
	}
	next := func(c *cur) (bool, error) {
		for {
			if c.r.b != nil && c.r.i < len(c.r.b) {
				c.r.readP2PKey(&c.key)
				if c.r.bad {
					return false, errors.New("parallel analysis: bad point-to-point record")
				}
				return true, nil
			}
			if c.si >= len(c.segs) {
				return false, nil
			}
			c.r = recReader{b: c.segs[c.si].body}
			c.si++
		}
	}
	var cs []*cur
	for _, s := range srcs {
		if err := s.fill(r, last); err != nil {
			return err
		}
		c := &cur{segs: s.take(r)}
		ok, err := next(c)
		if err != nil {
			return err
		}
		if ok {
			cs = append(cs, c)
		}
	}
	for len(cs) > 0 {
		bi := 0
		for i := 1; i < len(cs); i++ {
			if p2pKeyLess(&cs[i].key, &cs[bi].key) {
				bi = i
			}
		}
		c := cs[bi]
		if err := a.p2pTarget.replay(&c.r, c.r.u8()); err != nil {
			if errors.Is(err, errP2PMissing) {
				a.partIrregular++
				return nil
			}
			return err
		}
		ok, err := next(c)
		if err != nil {
			return err
		}
		if !ok {
			cs = append(cs[:bi], cs[bi+1:]...)
		}
	}
	return nil
}

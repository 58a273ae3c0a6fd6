package merge

import (
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// Matching collective instances.
//
// The n-th collective a rank calls on a communicator is instance n on every
// member, so (comm, seq) names an instance. Events arrive in global time
// order; an instance is open from its first member's event until every
// member has either delivered its event or is known never to deliver it:
//
//   - a member delivered a later seq on the same comm (its stream is in
//     seq order per comm, so the missing event was lost, e.g. in a damaged
//     chunk),
//   - or the member's stream ended (crash, truncation, missing file).
//
// Then the instance is finalized (metrics, aggregation) and its storage is
// recycled. Open instances of one comm live in a deque indexed by
// seq − base, so lookup is an index, not a hash. Memory is the open
// instances only: in a healthy trace about one per communicator.

const (
	stWaiting uint8 = iota
	stArrived
	stMissing
)

// maxSeqJump bounds how far ahead of the oldest open instance a sequence
// number may jump before older instances are given up (corrupt seq).
const maxSeqJump = 1 << 20

type memberRef struct{ comm, pos int32 }

type commState struct {
	idx     int32 // dense index in matcher.comms
	id      uint64
	members []int32 // world ranks in comm-rank order
	self    bool
	lastSeq []int64 // per position: last (unwrapped) seq delivered, -1 none
	base    int64   // unwrapped seq of open[0]
	// ref: the highest unwrapped seq of the comm so far (-1 none), which
	// unwraps the next one (unwrap)
	ref   int64
	open  []*openInst
	store []*openInst // start of open's backing array, reused when open empties
	pool  []*openInst
}

type openInst struct {
	comm       *commState
	seq        uint32 // as recorded
	useq       int64  // unwrapped (commState.unwrap)
	op         trace.Op
	root       int32 // comm rank of the root (first valid one seen), -1 none
	opMismatch bool
	got, gone  int
	state      []uint8
	enter      []float64
	exit       []float64
	rawEnter   []float64
	rawExit    []float64
	site       []int32
	pc         []uint64
	sent, recv []uint64 // bytes per member (GEvent.Sent/Recv): the data rule of the waits
}

type matcher struct {
	// recycled carries finalized instances back from the metrics
	// goroutine; the merge goroutine puts them into their comms' pools
	// (reclaim), so pools need no lock.
	recycled chan []*openInst
	spare    [][]*openInst // emptied batches for reuse
	comms    []*commState
	memberOf [][]memberRef // by world rank
	ended    []bool        // by world rank
	fin      func(*openInst)
	// part: an owner of a partitioned pass (part.go), which sees only its
	// share of each communicator's sequence numbers: skipped ones are
	// the decoders' to flag, and a jump the serial matcher would take
	// counts as irregular.
	part      bool
	irregular int
	dupes     int
	nOpen     int
	maxOpen   int
}

func (m *matcher) addComm(id uint64, members []int32, world int) int32 {
	cs := &commState{idx: int32(len(m.comms)), id: id, members: members /* read-only, shared with the rank files' metadata */, self: len(members) == 1 || id == trace.CommSelfID}
	cs.ref = -1
	cs.lastSeq = make([]int64, len(members))
	for i := range cs.lastSeq {
		cs.lastSeq[i] = -1
	}
	// members outside the world cannot deliver: treat as never arriving
	m.comms = append(m.comms, cs)
	return int32(len(m.comms) - 1)
}

// unwrap returns seq as a number that keeps counting past 2^32: after
// 2^32 collectives on one communicator the recorded numbers start again at
// 0 (36 hours of 33,000 MPI_Allreduce a second). It is the number
// congruent to seq modulo 2^32 nearest the comm's highest so far; a jump
// of maxSeqJump or more (a damaged number) does not move that reference.
func (cs *commState) unwrap(seq uint32) int64 {
	u := unwrapAfter(cs.ref, seq)
	if cs.ref < 0 || u > cs.ref && u-cs.ref < maxSeqJump {
		cs.ref = u
	}
	return u
}

// unwrapAfter is seq unwrapped after last (an unwrapped number, -1 none):
// the number congruent to seq modulo 2^32 nearest last.
func unwrapAfter(last int64, seq uint32) int64 {
	if last < 0 {
		return int64(seq)
	}
	return last + int64(int32(seq-uint32(last)))
}

// isGone reports whether member pos of cs will never deliver the instance
// of unwrapped seq u.
func (m *matcher) isGone(cs *commState, pos int, u int64) bool {
	if cs.lastSeq[pos] >= u {
		return true
	}
	w := cs.members[pos]
	return w < 0 || int(w) >= len(m.ended) || m.ended[w]
}

func (m *matcher) newInst(cs *commState, seq uint32, u int64, op trace.Op) *openInst {
	var in *openInst
	if len(cs.pool) == 0 {
		m.reclaim()
	}
	if n := len(cs.pool); n > 0 {
		in = cs.pool[n-1]
		cs.pool = cs.pool[:n-1]
	}
	if in == nil {
		k := len(cs.members)
		in = &openInst{comm: cs, state: make([]uint8, k), enter: make([]float64, k), exit: make([]float64, k),
			rawEnter: make([]float64, k), rawExit: make([]float64, k), site: make([]int32, k), pc: make([]uint64, k),
			sent: make([]uint64, k), recv: make([]uint64, k)}
	}
	in.seq, in.useq, in.op, in.opMismatch, in.got, in.gone, in.root = seq, u, op, false, 0, 0, -1
	for p := range in.state {
		in.state[p] = stWaiting
		if m.isGone(cs, p, u) {
			in.state[p] = stMissing
			in.gone++
		}
	}
	m.nOpen++
	if m.nOpen > m.maxOpen {
		m.maxOpen = m.nOpen
	}
	return in
}

// slot returns the deque slot of seq, growing the deque at either end.
// An instance older than the oldest open one is new, not a duplicate: an
// instance is only released once every member delivered or can no longer
// deliver it, and the per-member lastSeq check rejects repeats.
func (m *matcher) slot(cs *commState, seq int64) **openInst {
	if len(cs.open) == 0 {
		cs.base = seq
	}
	if m.part && len(cs.open) > 0 && (seq < cs.base && cs.base-seq >= maxSeqJump/2 || seq >= cs.base && seq-cs.base >= maxSeqJump/2) {
		m.irregular++
	}
	if seq < cs.base {
		n := int(cs.base - seq)
		if n >= maxSeqJump {
			return nil
		}
		grown := make([]*openInst, n+len(cs.open), 2*(n+len(cs.open))+4)
		copy(grown[n:], cs.open)
		cs.open, cs.store = grown, grown
		cs.base = seq
	}
	d := int(seq - cs.base)
	if d >= maxSeqJump {
		// corrupt or wildly skewed sequence numbers: give up the older ones
		m.flushComm(cs)
		cs.base = seq
		d = 0
	}
	for d >= len(cs.open) {
		if len(cs.open) == cap(cs.open) {
			grown := make([]*openInst, len(cs.open), 2*cap(cs.open)+4)
			copy(grown, cs.open)
			cs.open, cs.store = grown, grown
		}
		cs.open = append(cs.open, nil)
	}
	return &cs.open[d]
}

// add matches one collective event (ev.CommIdx >= 0).
func (m *matcher) add(ev *datamodel.GEvent) {
	cs := m.comms[ev.CommIdx]
	pos := int(ev.CommRank)
	seq := cs.unwrap(ev.Seq)
	last := cs.lastSeq[pos]
	if seq <= last {
		m.dupes++
		return
	}
	cs.lastSeq[pos] = seq
	// This member skipped seqs last+1..seq-1: mark it missing in any open ones.
	if seq > last+1 && !m.part {
		for s := last + 1; s < seq; s++ {
			if len(cs.open) == 0 {
				break
			}
			if s < cs.base {
				s = cs.base
				if s >= seq {
					break
				}
			}
			d := int(s - cs.base)
			if d >= len(cs.open) {
				break
			}
			if in := cs.open[d]; in != nil && in.state[pos] == stWaiting {
				in.state[pos] = stMissing
				in.gone++
				m.try(in) // may move cs.base; the loop re-reads it
			}
		}
	}
	sp := m.slot(cs, seq)
	if sp == nil {
		m.dupes++
		return
	}
	in := *sp
	if in == nil {
		in = m.newInst(cs, ev.Seq, seq, ev.Op)
		*sp = in
	} else if in.op != ev.Op {
		in.opMismatch = true
	}
	if in.state[pos] == stMissing {
		in.gone--
	}
	in.state[pos] = stArrived
	in.got++
	if in.root < 0 && ev.Root >= 0 && int(ev.Root) < len(cs.members) {
		in.root = ev.Root
	}
	in.enter[pos], in.exit[pos] = ev.Enter, ev.Exit
	in.rawEnter[pos], in.rawExit[pos] = ev.RawEnter, ev.RawExit
	in.site[pos] = ev.Site
	in.pc[pos] = ev.Callsite
	in.sent[pos], in.recv[pos] = ev.Sent, ev.Recv
	m.try(in)
}

// try finalizes in when every member is accounted for.
func (m *matcher) try(in *openInst) {
	if in.got+in.gone < len(in.state) {
		return
	}
	m.release(in)
}

// release takes a resolved instance out of its comm's deque and hands it
// to fin, which owns it from then on and calls recycle when done.
func (m *matcher) release(in *openInst) {
	cs := in.comm
	if d := int(in.useq - cs.base); in.useq >= cs.base && d < len(cs.open) && cs.open[d] == in {
		cs.open[d] = nil
	}
	for len(cs.open) > 0 && cs.open[0] == nil {
		cs.open = cs.open[1:]
		cs.base++
	}
	if len(cs.open) == 0 {
		cs.open = cs.store[:0]
	}
	m.nOpen--
	if m.fin != nil {
		m.fin(in)
	} else {
		cs.pool = append(cs.pool, in)
	}
}

// reclaim moves instances the metrics goroutine is done with back into
// their comms' pools (merge goroutine only; never blocks).
func (m *matcher) reclaim() {
	for {
		select {
		case b := <-m.recycled:
			for i, in := range b {
				in.comm.pool = append(in.comm.pool, in)
				b[i] = nil
			}
			if len(m.spare) < 16 {
				m.spare = append(m.spare, b[:0])
			}
		default:
			return
		}
	}
}

// endRank records that world rank r's stream ended: it delivers nothing
// more, so open instances waiting for it are resolved.
func (m *matcher) endRank(r int32) {
	if int(r) >= len(m.ended) || r < 0 || m.ended[r] {
		return
	}
	m.ended[r] = true
	for _, ref := range m.memberOf[r] {
		cs := m.comms[ref.comm]
		// iterate over a snapshot: release may shift cs.open
		open := append([]*openInst(nil), cs.open...)
		for _, in := range open {
			if in != nil && in.state[ref.pos] == stWaiting {
				in.state[ref.pos] = stMissing
				in.gone++
				m.try(in)
			}
		}
	}
}

// flushComm finalizes every open instance of cs as it stands.
func (m *matcher) flushComm(cs *commState) {
	open := append([]*openInst(nil), cs.open...)
	for _, in := range open {
		if in != nil {
			m.release(in)
		}
	}
	cs.open = cs.store[:0]
}

// flush finalizes everything still open (end of input).
func (m *matcher) flush() {
	for _, cs := range m.comms {
		m.flushComm(cs)
	}
}

package merge

// The partitioned point-to-point analysis (docs/explanation/p2p.md "Partitioned",
// decision D24): with a partitioned pass (part.go) the P2PStream does not
// run on process 0 over every event any more.
//
//   - Every world rank has one owner (p2pOwners: the process that decodes
//     its rank file, when that process owns collective instances too). A
//     decoder sends each point-to-point event of a rank to the rank's
//     owner; a send to a rank of another owner (its posting, its
//     completion record, its start and freeing when persistent) goes to
//     that owner as well: that is all that crosses the partitions, keyed
//     like the serial matching by (comm, source, dest, tag, order).
//   - An owner runs a P2PStream over what it gets, merged in the serial
//     order: it matches the messages to its ranks, completes their calls
//     (Waitall over several senders, wildcard receives, "who makes me
//     wait") and sums what belongs to one receiver alone (its pairs, its
//     rank's figures), which is then already the serial sum. The steps
//     whose order spans owners (the Late Sender and Late Receiver totals,
//     the worst messages, the call-site sums, nonblocking-collective
//     instances) become records tagged with the serial position of the
//     event that caused them: its merge key, the event's ordinal in its
//     rank, and the step's place in the event.
//   - Process 0 replays the records in key order into its own P2PStream
//     (the one tracemerge reads) and adds the owners' end records
//     (counters, ranks, pairs, kept messages): p2p.json is the serial one
//     byte for byte.

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// Record kinds of the point-to-point replay.
const (
	prSite     = 1 // a completion call or polls at a call site
	prLS       = 2 // a late-sender wait (with the message when it may be among the worst)
	prLR       = 3 // a late-receiver wait
	prNBCStart = 4
	prNBCDone  = 5
	prSync     = 6 // a wait state found (OnSync), when the plan asks for them
)

// opCallEnd is the op of a call-boundary marker: a decoder sends one to
// a rank's owner at the rank's first call that is not point-to-point
// after a completion call (an MPI_Waitall, then an MPI_Allreduce), with
// that call's enter time and ordinal, and the owner ends the completion
// call there (callEnd), as the serial root-cause stream ends it when the
// rank's next call of any kind comes (P2PStream.endCall): a Late Sender
// wait of the completion call is then found at the same step of the
// serial order on every K (decision D83). No trace op has this value,
// and no decoded event of another op than point-to-point and collective
// ones reaches an owner.
const opCallEnd = trace.Op(math.MaxUint16)

// p2pRecKey orders the replay: the serial merge key of the event (enter,
// rank, ordinal in its rank), its phase (0: the rank's own owner, 1: the
// owner of a send's destination; the serial pass does the calls first)
// and the step's number in it.
type p2pRecKey struct {
	mergeKey
	phase uint8
	n     uint32
}

func p2pKeyLess(a, b *p2pRecKey) bool {
	if before, same := a.mergeKey.before(&b.mergeKey); !same {
		return before
	}
	if a.phase != b.phase {
		return a.phase < b.phase
	}
	return a.n < b.n
}

// readP2PKey reads a record's key as p2pOwner.head writes it: the enter
// time in 8 bytes, the rank, ordinal and step as varints (a record was
// 26 bytes of key; most are 14–16 now).
func (r *recReader) readP2PKey(k *p2pRecKey) {
	k.enter = r.f64()
	k.rank = int32(uint32(r.uvarint()))
	k.ord = r.uvarint()
	k.phase = r.u8()
	k.n = uint32(r.uvarint())
}

// p2pOwner is an owner's recording state.
type p2pOwner struct {
	key   p2pRecKey // the event being added (ord set by the owner's loop)
	out   []byte
	worst floatHeap // the owner's largest late-sender waits (TopN)
	topN  int
	n     int // records
}

// setOrd and getOrd carry a point-to-point event's ordinal in its rank
// from the decoder to the owners in RawEnter, which the point-to-point
// analysis does not read (the collectives carry theirs in LocalEnter).
func setOrd(e *datamodel.GEvent, ord uint64) { e.RawEnter = math.Float64frombits(ord) }
func getOrd(e *datamodel.GEvent) uint64      { return math.Float64bits(e.RawEnter) }

// event starts the records of event e.
func (o *p2pOwner) event(e *datamodel.GEvent, mine bool) {
	o.key.enter, o.key.rank, o.key.n = e.Enter, e.Rank, 0
	o.key.phase = 1
	if mine {
		o.key.phase = 0
	}
}

func (o *p2pOwner) head(kind uint8) []byte {
	k := &o.key
	b := binary.LittleEndian.AppendUint64(o.out, math.Float64bits(k.enter))
	b = binary.AppendUvarint(b, uint64(uint32(k.rank)))
	b = binary.AppendUvarint(b, k.ord)
	b = append(b, k.phase)
	b = binary.AppendUvarint(b, uint64(k.n))
	k.n++
	o.n++
	return append(b, kind)
}

func appendF64(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// site records a completion call's (or polls') time at a call site: the
// integers as varints (60 bytes a record before, ≈ 35 now; these records
// were 6.6 of the 14.1 MB process 0 received on a K=8 1024-rank run).
func (o *p2pOwner) site(rank int32, pc uint64, op trace.Op, calls int, polls uint64, d float64) {
	b := o.head(prSite)
	b = binary.AppendUvarint(b, uint64(uint32(rank)))
	b = binary.AppendUvarint(b, pc)
	b = binary.AppendUvarint(b, uint64(uint16(op)))
	b = binary.AppendUvarint(b, uint64(uint32(calls)))
	b = binary.AppendUvarint(b, polls)
	o.out = appendF64(b, d)
}

// lateSender records wait w of receive r for send snd, with the message
// when it is among the owner's TopN largest so far: one that is not cannot
// be among process 0's either (those TopN waits came before it and are
// at least as large).
func (o *p2pOwner) lateSender(w float64, snd, r *p2pMsg) {
	b := appendF64(o.head(prLS), w)
	if len(o.worst) < o.topN || w > o.worst[0] {
		if len(o.worst) < o.topN {
			heap.Push(&o.worst, w)
		} else {
			o.worst[0] = w
			heap.Fix(&o.worst, 0)
		}
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint32(b, uint32(snd.src))
		b = binary.LittleEndian.AppendUint32(b, uint32(r.dst))
		b = binary.LittleEndian.AppendUint64(b, r.comm)
		b = binary.LittleEndian.AppendUint32(b, uint32(r.tag))
		b = binary.LittleEndian.AppendUint64(b, r.bytes)
		b = binary.LittleEndian.AppendUint16(b, uint16(snd.op))
		b = binary.LittleEndian.AppendUint16(b, uint16(r.waitOp))
		b = appendF64(b, snd.post)
		b = appendF64(b, r.waitEnter)
		b = binary.LittleEndian.AppendUint64(b, uint64(snd.postLocal))
		b = binary.LittleEndian.AppendUint64(b, uint64(r.waitLocal))
	} else {
		b = append(b, 0)
	}
	o.out = b
}

func (o *p2pOwner) lateReceiver(w float64) { o.out = appendF64(o.head(prLR), w) }

func (o *p2pOwner) nbcStart(k InstanceKey, op trace.Op, rank int32, enter float64) {
	b := o.head(prNBCStart)
	b = binary.LittleEndian.AppendUint64(b, k.Comm)
	b = binary.LittleEndian.AppendUint32(b, k.Seq)
	b = binary.LittleEndian.AppendUint16(b, uint16(op))
	b = binary.LittleEndian.AppendUint32(b, uint32(rank))
	o.out = appendF64(b, enter)
}

func (o *p2pOwner) nbcDone(k InstanceKey, rank int32, enter, exit float64) {
	b := o.head(prNBCDone)
	b = binary.LittleEndian.AppendUint64(b, k.Comm)
	b = binary.LittleEndian.AppendUint32(b, k.Seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(rank))
	b = appendF64(b, enter)
	o.out = appendF64(b, exit)
}

// sync records a wait state the owner's stream found (OnSync while the
// plan asks for them): its kind, the two ranks as varints and the four
// times.
func (o *p2pOwner) sync(y P2PSync) {
	b := o.head(prSync)
	b = binary.AppendUvarint(b, uint64(y.Kind))
	b = binary.AppendUvarint(b, uint64(uint32(y.Waiter)))
	b = binary.AppendUvarint(b, uint64(uint32(y.Cause)))
	b = appendF64(b, y.WaiterEnter)
	b = appendF64(b, y.WaiterExit)
	b = appendF64(b, y.CauseEnter)
	o.out = appendF64(b, y.Wait)
}

// fedEnd is a wait state of the run's end with its record's key.
type fedEnd struct {
	k p2pRecKey
	y P2PSync
}

// callEnd takes a decoder's call-boundary marker e (opCallEnd): the
// owner's rank e.Rank started a call that is not point-to-point, which
// ends its completion call at e's step.
func (s *P2PStream) callEnd(e *datamodel.GEvent) {
	if !s.owns(e.Rank) {
		return
	}
	s.part.event(e, true)
	s.part.key.ord = getOrd(e)
	s.endCall(e.Rank)
}

// endCalls ends the completion calls of the owner's ranks still open at
// the end of the run, rank by rank, each at the key (+Inf, rank): the
// serial stream ends them in rank order at its end (leftovers), after
// every event.
func (s *P2PStream) endCalls() {
	for r := range s.ranks.len() {
		rs := s.ranks.at(int32(r))
		if rs == nil || rs.cur == nil || !s.owns(int32(r)) {
			continue
		}
		s.part.key = p2pRecKey{mergeKey: mergeKey{enter: math.Inf(1), rank: int32(r), ord: math.MaxUint64}}
		s.closeCall(rs)
	}
}

// owns reports whether world rank r is one of this owner's.
func (s *P2PStream) owns(r int32) bool { return r >= 0 && int(r) < len(s.own) && s.own[r] }

// ownsDst reports whether this owner matches the sends to dst: its own
// ranks, and ranks outside the world (never matched; counted by the
// sender's owner).
func (s *P2PStream) ownsDst(dst int32) bool { return dst < 0 || int(dst) >= len(s.own) || s.own[dst] }

// newP2POwner is owner me's stream (owner[r]: world rank r's owner). It
// holds state for its own ranks and for the ranks whose sends to them it
// sees, not for every rank of the run: the messages to another owner's
// ranks are dropped before matching looks for their destination's state
// (enqueue), and the owner's end record covers its own ranks only.
func newP2POwner(run *rundir.Run, opt P2POptions, owner []int32, me int) *P2PStream {
	s := newP2PStream(run, opt, nil, func(r int) bool { return r < len(owner) && int(owner[r]) == me })
	s.own = make([]bool, len(owner))
	for r, q := range owner {
		s.own[r] = int(q) == me
	}
	s.part = &p2pOwner{topN: s.opt.TopN}
	return s
}

// p2pPC is a call site as the owners send it.
type p2pPC struct {
	rank int32
	pc   uint64
	op   trace.Op
}

// replay applies one record of kind (r after the kind byte) to process 0's
// stream; false on a bad record, errP2PMissing when a worst message was
// not sent.
func (s *P2PStream) replay(r *recReader, kind uint8) error {
	switch kind {
	case prSite:
		k := p2pPC{rank: int32(uint32(r.uvarint())), pc: r.uvarint(), op: trace.Op(uint16(r.uvarint()))}
		calls, polls, d := int(uint32(r.uvarint())), r.uvarint(), r.f64()
		if r.bad {
			break
		}
		if s.siteCache == nil {
			s.siteCache = map[p2pPC]*siteAcc{}
		}
		a := s.siteCache[k]
		if a == nil {
			sk := p2pSiteKey{s.site(k.rank, k.pc), k.op}
			if a = s.sites[sk]; a == nil {
				a = &siteAcc{ranks: map[int32]bool{}}
				s.sites[sk] = a
			}
			s.siteCache[k] = a
		}
		a.calls += calls
		a.polls += polls
		a.time += d
		a.ranks[k.rank] = true
	case prLS:
		w := r.f64()
		has := r.u8()
		if r.bad {
			break
		}
		s.out.LateSender.Add(w)
		if has == 0 {
			if len(s.worst) < s.opt.TopN || w > s.worst[0].WaitNS {
				return errP2PMissing
			}
			return nil
		}
		m := datamodel.LateMessage{Src: int32(r.u32()), Dst: int32(r.u32()), CommID: r.u64(), Tag: int32(r.u32()), Bytes: r.u64(),
			SendOp: trace.Op(r.u16()).String(), RecvOp: trace.Op(r.u16()).String(), SendStart: r.f64(), WaitEnter: r.f64(),
			SendLocal: int64(r.u64()), WaitLocal: int64(r.u64()), WaitNS: w}
		if !r.bad {
			s.addWorst(m)
		}
	case prLR:
		w := r.f64()
		if !r.bad {
			s.out.LateReceiver.Add(w)
		}
	case prNBCStart:
		k := InstanceKey{Comm: r.u64(), Seq: r.u32()}
		op, rank, enter := trace.Op(r.u16()), int32(r.u32()), r.f64()
		if !r.bad {
			s.nbcStart(k, op, rank, enter)
		}
	case prNBCDone:
		k := InstanceKey{Comm: r.u64(), Seq: r.u32()}
		rank, enter, exit := int32(r.u32()), r.f64(), r.f64()
		if !r.bad {
			s.nbcDone(k, rank, enter, exit)
		}
	case prSync:
		y := P2PSync{Kind: P2PSyncKind(r.uvarint()), Waiter: int32(uint32(r.uvarint())), Cause: int32(uint32(r.uvarint())),
			WaiterEnter: r.f64(), WaiterExit: r.f64(), CauseEnter: r.f64(), Wait: r.f64()}
		switch {
		case r.bad:
		case math.IsInf(s.replayKey.enter, 1): // the run's end: leftovers reports it
			s.endSyncs = append(s.endSyncs, fedEnd{s.replayKey, y})
		case s.feed != nil:
			s.feed(s.replayKey, y)
		case s.opt.OnSync != nil:
			s.opt.OnSync(y)
		}
	default:
		return errors.New("parallel analysis: bad point-to-point record")
	}
	if r.bad {
		return errors.New("parallel analysis: bad point-to-point record")
	}
	return nil
}

// errP2PMissing: an owner did not send a message that process 0's worst
// list would take (the partitioned pass is rerun; never seen).
var errP2PMissing = errors.New("parallel analysis: a late-sender message missing from an owner's records")

// P2POwnEnd is an owner's end record: what does not depend on the order
// across owners.
type P2POwnEnd struct {
	Out    datamodel.P2PResult // counters only
	Ranks  []datamodel.P2PRank // the owner's ranks
	LS, LR []datamodel.PairWait
	List   []datamodel.Message
	Peak   int
}

// ownerEnd finishes an owner's stream (what the serial Result does before
// the global steps) and returns its end record.
func (s *P2PStream) ownerEnd() *P2POwnEnd {
	s.leftovers()
	e := &P2POwnEnd{Peak: s.peak}
	o := s.out
	e.Out = datamodel.P2PResult{Messages: o.Messages, Bytes: o.Bytes, UnmatchedSends: o.UnmatchedSends, UnmatchedRecvs: o.UnmatchedRecvs,
		Unresolved: o.Unresolved, Requests: o.Requests, Uncompleted: o.Uncompleted, Cancelled: o.Cancelled, Polls: o.Polls,
		ReusedRequestIDs: o.ReusedRequestIDs, Violations: o.Violations, MaxViolationNS: o.MaxViolationNS, ListDropped: o.ListDropped}
	s.collectWaited()
	for r := range s.ranks.len() {
		rs := s.ranks.at(int32(r))
		if rs == nil || !s.owns(rs.rank) {
			continue
		}
		wf := rs.sum.WaitedFor
		sortWaitedFor(wf)
		if len(wf) > 3 {
			rs.sum.WaitedFor = wf[:3]
		}
		e.Ranks = append(e.Ranks, rs.sum)
	}
	e.LS, e.LR = s.pairWaits()
	e.List = append(e.List, s.list...)
	return e
}

// mergeOwner adds an owner's end record to process 0's stream.
func (s *P2PStream) mergeOwner(e *P2POwnEnd) error {
	o, x := s.out, &e.Out
	o.Messages += x.Messages
	o.Bytes += x.Bytes
	o.UnmatchedSends += x.UnmatchedSends
	o.UnmatchedRecvs += x.UnmatchedRecvs
	o.Unresolved += x.Unresolved
	o.Requests += x.Requests
	o.Uncompleted += x.Uncompleted
	o.Cancelled += x.Cancelled
	o.Polls += x.Polls
	o.ReusedRequestIDs += x.ReusedRequestIDs
	o.Violations += x.Violations
	o.MaxViolationNS = max(o.MaxViolationNS, x.MaxViolationNS)
	o.ListDropped += x.ListDropped
	s.peak += e.Peak
	s.ownerEnds++
	for _, r := range e.Ranks {
		rs := s.rankOrNil(r.Rank)
		if rs == nil {
			return fmt.Errorf("parallel analysis: point-to-point figures of rank %d, which has no file", r.Rank)
		}
		rs.sum = r
	}
	for _, l := range []struct {
		pairs []datamodel.PairWait
		late  bool // late receiver: the culprit is the receiver
	}{{e.LS, false}, {e.LR, true}} {
		for _, p := range l.pairs {
			dst, src := p.Victim, p.Culprit
			if l.late {
				dst, src = src, dst
			}
			rs := s.rankOrNil(dst)
			if rs == nil {
				return fmt.Errorf("parallel analysis: wait pair %d -> %d of rank %d, which has no file", p.Culprit, p.Victim, dst)
			}
			sum := &rs.pairOf(src).ls
			if l.late {
				sum = &rs.pairOf(src).lr
			}
			if sum.n != 0 {
				return fmt.Errorf("parallel analysis: wait pair %d -> %d from two owners", p.Culprit, p.Victim)
			}
			*sum = pairSum{p.Count, p.NS}
		}
	}
	for _, m := range e.List {
		if s.opt.KeepMessages > 0 {
			s.keep(m)
		}
	}
	return nil
}

func sortWaitedFor(wf []datamodel.RankAmount) {
	for i := 1; i < len(wf); i++ { // insertion sort: a handful of neighbours
		for j := i; j > 0 && (wf[j].NS > wf[j-1].NS || wf[j].NS == wf[j-1].NS && wf[j].Rank < wf[j-1].Rank); j-- {
			wf[j], wf[j-1] = wf[j-1], wf[j]
		}
	}
}

// p2pOwners is the owner of every world rank in plan pl: the process that
// decodes its rank file when it owns collective instances too, else one
// of those round robin; a rank without a file goes with the nearest file
// below it (the first owner when none).
func p2pOwners(pl *partPlan, rn *rundir.Run) []int32 {
	owner := make([]int32, rn.WorldSize)
	for i := range owner {
		owner[i] = -1
	}
	n := len(rn.Ranks)
	for p := 0; p < pl.procs; p++ {
		lo, hi := ownedBlock(p, n, pl.procs, pl.share0)
		for i := lo; i < hi; i++ {
			q := p
			if q < pl.owner0 {
				q = pl.owner0 + i%(pl.procs-pl.owner0)
			}
			if r := rn.Ranks[i].Rank; r >= 0 && r < len(owner) {
				owner[r] = int32(q)
			}
		}
	}
	prev := int32(pl.owner0)
	for r := range owner {
		if owner[r] < 0 {
			owner[r] = prev
		}
		prev = owner[r]
	}
	return owner
}

// p2pRouter is a decoder's routing of point-to-point events: to the
// rank's owner, and the send side of a message to another owner's rank
// to that owner too.
type p2pRouter struct {
	owner []int32
	reqs  map[uint64]int32 // (rank, request) of a nonblocking send to another owner: that owner
	// persist: the same for persistent sends. Apart from reqs because
	// request ids wrap (p2pPending.next): a new request with a persistent
	// one's id must not end its routing.
	persist map[uint64]int32
}

// other returns the second owner event e goes to (-1: none).
func (rt *p2pRouter) other(e *datamodel.GEvent) int {
	op := e.Op
	mine := rt.owner[e.Rank]
	dst := func() int32 {
		if e.Peer < 0 || int(e.Peer) >= len(rt.owner) || rt.owner[e.Peer] == mine {
			return -1
		}
		return rt.owner[e.Peer]
	}
	k := uint64(uint32(e.Rank))<<32 | uint64(e.Req)
	switch {
	case op.IsSend() && op < trace.OpIsend:
		return int(dst())
	case op == trace.OpSendrecv || op == trace.OpSendrecvReplace:
		if e.Seq == 0 {
			return int(dst())
		}
	case op.IsRequestStart():
		if op.IsPersistentInit() {
			if d := dst(); d >= 0 && op != trace.OpRecvInit {
				rt.persist[k] = d
				return int(d)
			}
			return -1
		}
		if op.IsSend() {
			if d := dst(); d >= 0 {
				rt.reqs[k] = d
				return int(d)
			}
		}
		delete(rt.reqs, k)
	case op == trace.OpStart || op == trace.OpStartall:
		if v, ok := rt.persist[k]; ok {
			return int(v)
		}
	case op == trace.OpRequestFree:
		if v, ok := rt.persist[k]; ok {
			delete(rt.persist, k)
			return int(v)
		}
		if v, ok := rt.reqs[k]; ok {
			delete(rt.reqs, k)
			return int(v)
		}
	case op.IsCompletion():
		if e.Req == 0 {
			return -1
		}
		v, ok := rt.reqs[k]
		pv, pok := rt.persist[k]
		// Both: the one whose owner the completion's peer belongs to.
		if ok && (!pok || dst() == v) {
			delete(rt.reqs, k)
			return int(v)
		}
		if pok {
			return int(pv)
		}
	}
	return -1
}

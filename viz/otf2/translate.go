// Package otf2 writes a corrected gclock run as an OTF2 archive, so that
// Vampir, Scalasca/Cube and other OTF2 readers open it: one location per
// rank (in a location group per rank, under a system-tree node per host),
// a region per MPI function, the run's communicators as OTF2 groups and
// comms, and per call Enter/Leave with the MPI records inside:
// MpiCollectiveBegin/End (operation, communicator, root, bytes), MpiSend,
// MpiRecv, MpiIsend/MpiIsendComplete, MpiIrecvRequest/MpiIrecv and
// NonBlockingCollectiveRequest/Complete. Timestamps are the corrected
// global times in ns (rank 0's timebase), so the OTF2 clock is the gclock
// global clock.
//
// The archive is written through libotf2 with cgo (build tag otf2;
// `make` sets it when pkg-config finds otf2). Without it, Create returns
// ErrNotBuilt. This file holds the translation, which needs no cgo: a
// merge.GEvent stream becomes per-location records, handed to a backend.
package otf2

import (
	"errors"
	"fmt"
	"math"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// ErrNotBuilt is returned by Create when the program was built without
// libotf2 (build tag otf2).
var ErrNotBuilt = errors.New("this build has no OTF2 support: install libotf2-trace-dev (Debian) and rebuild with `make` (go build -tags otf2)")

// Rank describes one MPI rank (an OTF2 location).
type Rank struct {
	Rank int32
	Host string
}

// Comm describes one communicator: its agreed gclock id, a name and its
// members as world ranks in comm-rank order.
type Comm struct {
	ID      uint64
	Name    string
	Members []int32
	Parent  uint64
}

// RunInfo is what the definitions need.
type RunInfo struct {
	Ranks       []Rank
	Comms       []Comm
	Origin      int64 // run origin (merge.Analysis.OriginNS), added to the events' relative times
	Creator     string
	Description string
}

// record kinds handed to the backend.
const (
	recEnter = iota
	recLeave
	recCollBegin
	recCollEnd
	recSend
	recRecv
	recIsend
	recIsendComplete
	recIrecvRequest
	recIrecv
	recICollRequest
	recICollComplete
)

// record is one OTF2 event of one location.
type record struct {
	kind   uint8
	collOp uint8
	loc    int32
	ts     uint64
	region uint32
	comm   uint32 // dense OTF2 comm ref
	peer   uint32 // comm rank of the other side, or the root
	tag    uint32
	n1, n2 uint64 // bytes sent / received (message length in n1)
	req    uint64
}

// backend writes records and, at the end, the definitions.
type backend interface {
	write(r *record) error
	finish(t *translator) error
}

// request kinds remembered per rank.
const (
	reqSend = iota + 1
	reqRecv
	reqPersistSend
	reqPersistRecv
	reqColl
)

type reqInfo struct {
	kind       uint8
	collOp     uint8
	comm       uint32
	peer       uint32
	tag        uint32
	sent, recv uint64
	hasMsg     bool
}

// locState is the translation state of one rank.
type locState struct {
	open        bool
	openOp      trace.Op
	openLocal   int64 // LocalEnter of the open call (identifies its records)
	region      uint32
	exit        uint64
	last        uint64 // last timestamp written (OTF2 needs them monotone per location)
	pending     []record
	reqs        map[uint32]reqInfo
	events      uint64
	seenRecords bool
}

// translator turns the merged event stream into OTF2 records.
type translator struct {
	info     RunInfo
	be       backend
	locs     map[int32]*locState
	regions  map[trace.Op]uint32
	regionOp []trace.Op
	comms    map[uint64]uint32          // gclock comm id -> dense OTF2 comm ref
	commRank map[uint64]map[int32]int32 // comm id -> world rank -> comm rank
	minTS    uint64
	maxTS    uint64
	skipped  uint64 // message records left out (unknown comm or peer)
	err      error
}

func newTranslator(info RunInfo, be backend) *translator {
	t := &translator{info: info, be: be, locs: map[int32]*locState{}, regions: map[trace.Op]uint32{},
		comms: map[uint64]uint32{}, commRank: map[uint64]map[int32]int32{}, minTS: math.MaxUint64}
	for i, c := range info.Comms {
		t.comms[c.ID] = uint32(i)
		m := make(map[int32]int32, len(c.Members))
		for j, w := range c.Members {
			m[w] = int32(j)
		}
		t.commRank[c.ID] = m
	}
	return t
}

func (t *translator) loc(rank int32) *locState {
	s := t.locs[rank]
	if s == nil {
		s = &locState{reqs: map[uint32]reqInfo{}}
		t.locs[rank] = s
	}
	return s
}

func (t *translator) region(op trace.Op) uint32 {
	if id, ok := t.regions[op]; ok {
		return id
	}
	id := uint32(len(t.regionOp))
	t.regions[op] = id
	t.regionOp = append(t.regionOp, op)
	return id
}

// abs turns a relative global time into an OTF2 timestamp.
func (t *translator) abs(rel float64) uint64 {
	if math.IsNaN(rel) {
		rel = 0
	}
	v := float64(t.info.Origin) + math.Round(rel)
	if v <= 0 {
		return 0
	}
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return uint64(t.info.Origin + int64(math.Round(rel)))
}

func (t *translator) emit(s *locState, r record) {
	if t.err != nil {
		return
	}
	if r.ts < s.last {
		r.ts = s.last // several threads of a rank share one location
	}
	s.last = r.ts
	if r.ts < t.minTS {
		t.minTS = r.ts
	}
	if r.ts > t.maxTS {
		t.maxTS = r.ts
	}
	s.events++
	t.err = t.be.write(&r)
}

// close ends the open call of s: its pending records at the exit, then Leave.
func (t *translator) close(rank int32, s *locState) {
	if !s.open {
		return
	}
	for _, p := range s.pending {
		p.ts = s.exit
		t.emit(s, p)
	}
	s.pending = s.pending[:0]
	t.emit(s, record{kind: recLeave, loc: rank, ts: s.exit, region: s.region})
	s.open = false
}

// msg fills comm, peer and tag of a message record; false when the
// message cannot be described (unknown communicator, MPI_PROC_NULL, an
// unresolved MPI_ANY_SOURCE).
func (t *translator) msg(ev *datamodel.GEvent, r *record) bool {
	ref, ok := t.comms[ev.CommID]
	if !ok || ev.Peer < 0 {
		t.skipped++
		return false
	}
	cr, ok := t.commRank[ev.CommID][ev.Peer]
	if !ok {
		t.skipped++
		return false
	}
	r.comm, r.peer, r.tag = ref, uint32(cr), uint32(ev.Tag)
	return true
}

// Add consumes one event of the merged stream (a merge.Sink).
func (t *translator) Add(ev *datamodel.GEvent) error {
	if t.err != nil {
		return t.err
	}
	s := t.loc(ev.Rank)
	enter, exit := t.abs(ev.Enter), t.abs(ev.Exit)
	if exit < enter {
		exit = enter
	}
	if !(ev.Continuation() && s.open && s.openOp == ev.Op && s.openLocal == ev.LocalEnter) {
		t.close(ev.Rank, s)
		s.open, s.openOp, s.openLocal, s.exit = true, ev.Op, ev.LocalEnter, exit
		s.region = t.region(ev.Op)
		t.emit(s, record{kind: recEnter, loc: ev.Rank, ts: enter, region: s.region})
	}
	op := ev.Op
	loc := ev.Rank
	switch {
	case op.IsCollective():
		ref, ok := t.comms[ev.CommID]
		if !ok {
			t.skipped++
			break
		}
		root := uint32(math.MaxUint32)
		if ev.Root >= 0 {
			root = uint32(ev.Root)
		}
		t.emit(s, record{kind: recCollBegin, loc: loc, ts: enter})
		s.pending = append(s.pending, record{kind: recCollEnd, loc: loc, collOp: collectiveOp(op), comm: ref, peer: root, n1: ev.Sent, n2: ev.Recv})
	case op >= trace.OpSend && op <= trace.OpBsend, (op == trace.OpSendrecv || op == trace.OpSendrecvReplace) && ev.Seq == 0:
		r := record{kind: recSend, loc: loc, ts: enter, n1: ev.Sent}
		if t.msg(ev, &r) {
			t.emit(s, r)
		}
	case op == trace.OpRecv || op == trace.OpMrecv, (op == trace.OpSendrecv || op == trace.OpSendrecvReplace) && ev.Seq == 1:
		r := record{kind: recRecv, loc: loc, n1: ev.Recv}
		if t.msg(ev, &r) {
			s.pending = append(s.pending, r)
		}
	case op >= trace.OpIsend && op <= trace.OpIbsend:
		r := record{kind: recIsend, loc: loc, ts: enter, n1: ev.Sent, req: uint64(ev.Req)}
		if t.msg(ev, &r) {
			t.emit(s, r)
			s.reqs[ev.Req] = reqInfo{kind: reqSend}
		}
	case op.IsRecvStart():
		t.emit(s, record{kind: recIrecvRequest, loc: loc, ts: enter, req: uint64(ev.Req)})
		s.reqs[ev.Req] = reqInfo{kind: reqRecv}
	case op.IsPersistentInit():
		ri := reqInfo{kind: reqPersistSend, sent: ev.Sent}
		if op == trace.OpRecvInit {
			ri.kind = reqPersistRecv
		}
		var r record
		if t.msg(ev, &r) {
			ri.comm, ri.peer, ri.tag, ri.hasMsg = r.comm, r.peer, r.tag, true
		}
		s.reqs[ev.Req] = ri
	case op == trace.OpStart || op == trace.OpStartall:
		ri, ok := s.reqs[ev.Req]
		switch {
		case ok && ri.kind == reqPersistSend && ri.hasMsg:
			t.emit(s, record{kind: recIsend, loc: loc, ts: enter, comm: ri.comm, peer: ri.peer, tag: ri.tag, n1: ri.sent, req: uint64(ev.Req)})
		case ok && ri.kind == reqPersistRecv:
			t.emit(s, record{kind: recIrecvRequest, loc: loc, ts: enter, req: uint64(ev.Req)})
		}
	case op.IsNonblockingCollective():
		ref, ok := t.comms[ev.CommID]
		if !ok {
			t.skipped++
			break
		}
		root := uint32(math.MaxUint32)
		if ev.Root >= 0 {
			root = uint32(ev.Root)
		}
		t.emit(s, record{kind: recICollRequest, loc: loc, ts: enter, req: uint64(ev.Req)})
		s.reqs[ev.Req] = reqInfo{kind: reqColl, collOp: collectiveOp(op.BlockingEquivalent()), comm: ref, peer: root, sent: ev.Sent, recv: ev.Recv}
	case op.IsCompletion():
		ri, ok := s.reqs[ev.Req]
		if !ok || ev.Req == 0 {
			break
		}
		switch ri.kind {
		case reqSend, reqPersistSend:
			s.pending = append(s.pending, record{kind: recIsendComplete, loc: loc, req: uint64(ev.Req)})
		case reqRecv, reqPersistRecv:
			r := record{kind: recIrecv, loc: loc, n1: ev.Recv, req: uint64(ev.Req)}
			if ev.Tag != trace.TagCancelled && t.msg(ev, &r) {
				s.pending = append(s.pending, r)
			} else {
				// still complete the request so readers do not keep it open
				s.pending = append(s.pending, record{kind: recIrecv, loc: loc, comm: math.MaxUint32, req: uint64(ev.Req)})
			}
		case reqColl:
			s.pending = append(s.pending, record{kind: recICollComplete, loc: loc, collOp: ri.collOp, comm: ri.comm, peer: ri.peer, n1: ri.sent, n2: ri.recv, req: uint64(ev.Req)})
		}
		if ri.kind == reqSend || ri.kind == reqRecv || ri.kind == reqColl {
			delete(s.reqs, ev.Req)
		}
	case op == trace.OpRequestFree:
		delete(s.reqs, ev.Req)
	}
	return t.err
}

// Close ends every open call and writes the definitions.
func (t *translator) Close() error {
	for rank, s := range t.locs {
		t.close(rank, s)
	}
	if t.err != nil {
		return t.err
	}
	if err := t.be.finish(t); err != nil {
		return fmt.Errorf("otf2: %w", err)
	}
	return nil
}

// collectiveOp maps a blocking collective to OTF2_CollectiveOp.
func collectiveOp(op trace.Op) uint8 {
	switch op {
	case trace.OpBarrier:
		return 0
	case trace.OpBcast:
		return 1
	case trace.OpGather:
		return 2
	case trace.OpGatherv:
		return 3
	case trace.OpScatter:
		return 4
	case trace.OpScatterv:
		return 5
	case trace.OpAllgather:
		return 6
	case trace.OpAllgatherv:
		return 7
	case trace.OpAlltoall:
		return 8
	case trace.OpAlltoallv:
		return 9
	case trace.OpAlltoallw:
		return 10
	case trace.OpAllreduce:
		return 11
	case trace.OpReduce:
		return 12
	case trace.OpReduceScatter:
		return 13
	case trace.OpScan:
		return 14
	case trace.OpExscan:
		return 15
	case trace.OpReduceScatterBlock:
		return 16
	// OTF2 has no neighbourhood collectives: the matching all-to-all kind
	case trace.OpNeighborAllgather:
		return 6
	case trace.OpNeighborAllgatherv:
		return 7
	case trace.OpNeighborAlltoall:
		return 8
	case trace.OpNeighborAlltoallv:
		return 9
	case trace.OpNeighborAlltoallw:
		return 10
	}
	return 0
}

// Region roles of OTF2_RegionRole.
const (
	roleFunction   = 1
	roleBarrier    = 15
	roleOne2All    = 23
	roleAll2One    = 24
	roleAll2All    = 25
	roleCollOther  = 26
	rolePoint2Pt   = 28
	roleArtificial = 31
)

// regionRole is the OTF2 role of an op's region.
func regionRole(op trace.Op) uint8 {
	b := op
	if op.IsNonblockingCollective() {
		b = op.BlockingEquivalent()
	}
	switch {
	case b == trace.OpBarrier:
		return roleBarrier
	case b == trace.OpBcast || b == trace.OpScatter || b == trace.OpScatterv:
		return roleOne2All
	case b == trace.OpReduce || b == trace.OpGather || b == trace.OpGatherv:
		return roleAll2One
	case b.IsCollective() && (b == trace.OpScan || b == trace.OpExscan):
		return roleCollOther
	case b.IsCollective():
		return roleAll2All
	case op.IsPointToPoint():
		return rolePoint2Pt
	case op.IsRecorder():
		return roleArtificial
	}
	return roleFunction
}

// Writer is a merge.Sink that writes an OTF2 archive.
type Writer struct {
	t *translator
}

// Add writes one event.
func (w *Writer) Add(ev *datamodel.GEvent) error { return w.t.Add(ev) }

// Close finishes the archive (definitions, anchor file).
func (w *Writer) Close() error { return w.t.Close() }

// Skipped reports how many MPI message records were left out because
// their communicator or peer was unknown (Enter/Leave are still written).
func (w *Writer) Skipped() uint64 { return w.t.skipped }

// Create starts an OTF2 archive "<dir>/<name>.otf2" (with its <name>/
// directory of event and definition files).
func Create(dir, name string, info RunInfo) (*Writer, error) {
	be, err := newBackend(dir, name, len(info.Ranks))
	if err != nil {
		return nil, err
	}
	return &Writer{t: newTranslator(info, be)}, nil
}

package viz

// Perfetto's native trace format (issue 13): a stream of TracePacket
// messages (field 1 of perfetto.protos.Trace), each length-delimited, with
// TrackEvent slices on one thread track per rank. Field numbers are those
// of Perfetto's published protos (protos/perfetto/trace/trace_packet.proto,
// track_event/track_event.proto, track_event/track_descriptor.proto,
// track_event/process_descriptor.proto, track_event/thread_descriptor.proto,
// track_event/debug_annotation.proto, interned_data/interned_data.proto);
// pftrace_test.go decodes the output against a descriptor of that subset
// and fails on any field the schema does not know.
//
// Why not JSON: Perfetto calls its JSON importer legacy and best effort,
// the UI runs out of memory near 1 GB of JSON (chrome://tracing near
// 256 MB), and the protobuf form is about a third of the size because
// event names, annotation names and call sites are interned once per trace
// and times are varints instead of decimal text.

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gclock/gclock/merge/datamodel"
)

// Field numbers of the Perfetto protos used here.
const (
	pfTracePacket = 1 // Trace.packet

	pfPktTimestamp     = 8  // TracePacket.timestamp (uint64 ns)
	pfPktSeqID         = 10 // TracePacket.trusted_packet_sequence_id
	pfPktTrackEvent    = 11 // TracePacket.track_event
	pfPktInterned      = 12 // TracePacket.interned_data
	pfPktSeqFlags      = 13 // TracePacket.sequence_flags
	pfPktTrackDescr    = 60 // TracePacket.track_descriptor
	pfSeqCleared       = 1  // SEQ_INCREMENTAL_STATE_CLEARED
	pfSeqNeedsState    = 2  // SEQ_NEEDS_INCREMENTAL_STATE
	pfTDUUID           = 1  // TrackDescriptor.uuid
	pfTDName           = 2  // TrackDescriptor.name
	pfTDProcess        = 3  // TrackDescriptor.process
	pfTDThread         = 4  // TrackDescriptor.thread
	pfTDParent         = 5  // TrackDescriptor.parent_uuid
	pfProcPID          = 1  // ProcessDescriptor.pid
	pfProcName         = 6  // ProcessDescriptor.process_name
	pfThreadPID        = 1  // ThreadDescriptor.pid
	pfThreadTID        = 2  // ThreadDescriptor.tid
	pfThreadName       = 5  // ThreadDescriptor.thread_name
	pfTEAnnotations    = 4  // TrackEvent.debug_annotations
	pfTEType           = 9  // TrackEvent.type
	pfTENameIID        = 10 // TrackEvent.name_iid
	pfTETrackUUID      = 11 // TrackEvent.track_uuid
	pfTECategoryIIDs   = 3  // TrackEvent.category_iids
	pfTEFlowIDs        = 47 // TrackEvent.flow_ids (fixed64)
	pfTETermFlowIDs    = 48 // TrackEvent.terminating_flow_ids (fixed64)
	pfTypeSliceBegin   = 1
	pfTypeSliceEnd     = 2
	pfTypeInstant      = 3
	pfDANameIID        = 1  // DebugAnnotation.name_iid
	pfDAUint           = 3  // DebugAnnotation.uint_value
	pfDAInt            = 4  // DebugAnnotation.int_value
	pfDAStringIID      = 17 // DebugAnnotation.string_value_iid
	pfIDEventCats      = 1  // InternedData.event_categories
	pfIDEventNames     = 2  // InternedData.event_names
	pfIDAnnNames       = 3  // InternedData.debug_annotation_names
	pfIDAnnStrings     = 29 // InternedData.debug_annotation_string_values
	pfInternIID        = 1  // EventName/EventCategory/DebugAnnotationName/InternedString .iid
	pfInternName       = 2  // EventName/EventCategory/DebugAnnotationName .name
	pfInternStr        = 2  // InternedString.str (bytes)
	pfTrustedSequence  = 1  // our one packet sequence
	pfProcessUUIDBase  = 1 << 32
	pfThreadUUIDOffset = 1 << 40
	// pfMarkUUIDOffset + kind<<32 + rank: a rank's track of one kind of
	// marks (AddMarks).
	pfMarkUUIDOffset = 1 << 44
)

// Interned debug-annotation names, fixed iids (declared in the first packet).
const (
	pfAnnComm = iota + 1
	pfAnnSeq
	pfAnnRoot
	pfAnnSent
	pfAnnRecv
	pfAnnSite
	pfAnnTag
	pfAnnBytes
	pfAnnTarget
	pfAnnEnterErr
	pfAnnExitErr
)

var pfAnnNames = []string{"", "comm", "seq", "root", "bytes_sent", "bytes_recv", "callsite", "tag", "bytes", "target", "enter_err_ns", "exit_err_ns"}

// Interned categories.
const (
	pfCatMPI = 1
	pfCatMsg = 2
	// pfCatAnalysis: the root-cause and critical-path marks (AddMarks).
	pfCatAnalysis = 3
)

// PerfettoProto streams a Perfetto native protobuf trace (open it in
// ui.perfetto.dev or with trace_processor): one process per rank named
// "rank N (host)", one thread track "MPI" in it, a slice per MPI call with
// annotations comm, seq, root, bytes_sent, bytes_recv and callsite, and a
// flow arrow per matched point-to-point message (AddMessages); with
// SetErrorBar also enter_err_ns and exit_err_ns. Timestamps
// are absolute ns in rank 0's timebase (the run origin plus the event's
// global time), so they keep the recorder's nanosecond resolution. Only the
// interning tables (op names, call-site names) are held in memory.
type PerfettoProto struct {
	errBar ErrorBarFunc
	w      *bufio.Writer
	ranks  []RankMeta
	siteNamer
	runOrig  int64
	declared map[int32]bool
	names    map[string]uint64 // interned event names
	strs     map[string]uint64 // interned annotation string values
	started  bool
	closed   bool
	first    bool
	n        int64 // packets written
	// Scratch buffers reused for every packet.
	pkt, te, ann, interned []byte
	newNames, newStrs      []internEntry
	err                    error
}

type internEntry struct {
	iid  uint64
	name string
}

// NewPerfettoProto returns a streaming native Perfetto writer. ranks names
// the processes (may be nil; ranks seen only in events get a plain name).
// Call Close at the end.
func NewPerfettoProto(w io.Writer, ranks []RankMeta) *PerfettoProto {
	return &PerfettoProto{
		w: bufio.NewWriterSize(w, 256<<10), ranks: ranks,
		declared: map[int32]bool{}, names: map[string]uint64{}, strs: map[string]uint64{},
		first: true,
	}
}

// SetRunOrigin sets the run origin (merge.Analysis.OriginNS) added to the
// events' relative global times; default 0.
func (p *PerfettoProto) SetRunOrigin(originNS int64) { p.runOrig = originNS }

// SetRankResolve names call sites per rank (merge.Pass.SiteName).
func (p *PerfettoProto) SetRankResolve(fn func(rank int32, pc uint64) string) { p.rankRes = fn }

// SetErrorBar adds each call's estimated clock error (merge.Pass.ErrorBar)
// as the annotations enter_err_ns and exit_err_ns (whole ns; left out where
// unknown).
func (p *PerfettoProto) SetErrorBar(fn ErrorBarFunc) { p.errBar = fn }

// Packets reports how many trace packets were written so far.
func (p *PerfettoProto) Packets() int64 { return p.n }

func processUUID(rank int32) uint64 { return pfProcessUUIDBase + uint64(uint32(rank)) }
func threadUUID(rank int32) uint64  { return pfThreadUUIDOffset + uint64(uint32(rank)) }

// start writes the interning reset and the rank tracks.
func (p *PerfettoProto) start() {
	if p.started {
		return
	}
	p.started = true
	for _, r := range p.ranks {
		p.declare(r)
	}
}

func (p *PerfettoProto) declare(r RankMeta) {
	if p.declared[r.Rank] {
		return
	}
	p.declared[r.Rank] = true
	name := fmt.Sprintf("rank %d", r.Rank)
	if r.Host != "" {
		name += " (" + r.Host + ")"
	}
	pid := uint64(int64(r.Rank) + 1) // pid 0 is special in Perfetto
	// Process track.
	var d []byte
	d = protowire.AppendTag(d, pfTDUUID, protowire.VarintType)
	d = protowire.AppendVarint(d, processUUID(r.Rank))
	var pd []byte
	pd = protowire.AppendTag(pd, pfProcPID, protowire.VarintType)
	pd = protowire.AppendVarint(pd, pid)
	pd = protowire.AppendTag(pd, pfProcName, protowire.BytesType)
	pd = protowire.AppendString(pd, name)
	d = protowire.AppendTag(d, pfTDProcess, protowire.BytesType)
	d = protowire.AppendBytes(d, pd)
	p.writeDescriptor(d)
	// Thread track inside it, carrying the slices.
	d = d[:0]
	d = protowire.AppendTag(d, pfTDUUID, protowire.VarintType)
	d = protowire.AppendVarint(d, threadUUID(r.Rank))
	d = protowire.AppendTag(d, pfTDParent, protowire.VarintType)
	d = protowire.AppendVarint(d, processUUID(r.Rank))
	var td []byte
	td = protowire.AppendTag(td, pfThreadPID, protowire.VarintType)
	td = protowire.AppendVarint(td, pid)
	td = protowire.AppendTag(td, pfThreadTID, protowire.VarintType)
	td = protowire.AppendVarint(td, pid)
	td = protowire.AppendTag(td, pfThreadName, protowire.BytesType)
	td = protowire.AppendString(td, "MPI")
	d = protowire.AppendTag(d, pfTDThread, protowire.BytesType)
	d = protowire.AppendBytes(d, td)
	d = protowire.AppendTag(d, pfTDName, protowire.BytesType)
	d = protowire.AppendString(d, "MPI")
	p.writeDescriptor(d)
}

func (p *PerfettoProto) writeDescriptor(d []byte) {
	b := p.pkt[:0]
	b = protowire.AppendTag(b, pfPktTrackDescr, protowire.BytesType)
	b = protowire.AppendBytes(b, d)
	p.pkt = b
	p.emit()
}

// nameIID interns an event name, queueing its definition for the next packet.
func (p *PerfettoProto) nameIID(s string) uint64 {
	if id, ok := p.names[s]; ok {
		return id
	}
	id := uint64(len(p.names) + 1)
	p.names[s] = id
	p.newNames = append(p.newNames, internEntry{id, s})
	return id
}

// strIID interns an annotation string value.
func (p *PerfettoProto) strIID(s string) uint64 {
	if id, ok := p.strs[s]; ok {
		return id
	}
	id := uint64(len(p.strs) + 1)
	p.strs[s] = id
	p.newStrs = append(p.newStrs, internEntry{id, s})
	return id
}

// emit frames p.pkt as one Trace.packet, adding the sequence id, the
// sequence flags and any interned data queued since the last packet.
func (p *PerfettoProto) emit() {
	if p.err != nil {
		return
	}
	b := p.pkt
	b = protowire.AppendTag(b, pfPktSeqID, protowire.VarintType)
	b = protowire.AppendVarint(b, pfTrustedSequence)
	b = protowire.AppendTag(b, pfPktSeqFlags, protowire.VarintType)
	if p.first {
		b = protowire.AppendVarint(b, pfSeqCleared)
		p.first = false
		// Categories and annotation names, once.
		id := p.interned[:0]
		for _, c := range []internEntry{{pfCatMPI, "mpi"}, {pfCatMsg, "msg"}, {pfCatAnalysis, "analysis"}} {
			id = appendIntern(id, pfIDEventCats, c.iid, c.name)
		}
		for iid := 1; iid < len(pfAnnNames); iid++ {
			id = appendIntern(id, pfIDAnnNames, uint64(iid), pfAnnNames[iid])
		}
		p.interned = id
	} else {
		b = protowire.AppendVarint(b, pfSeqNeedsState)
		p.interned = p.interned[:0]
	}
	if len(p.newNames) > 0 || len(p.newStrs) > 0 || len(p.interned) > 0 {
		id := p.interned
		for _, e := range p.newNames {
			id = appendIntern(id, pfIDEventNames, e.iid, e.name)
		}
		for _, e := range p.newStrs {
			id = appendIntern(id, pfIDAnnStrings, e.iid, e.name)
		}
		p.newNames, p.newStrs = p.newNames[:0], p.newStrs[:0]
		p.interned = id
		b = protowire.AppendTag(b, pfPktInterned, protowire.BytesType)
		b = protowire.AppendBytes(b, id)
	}
	var hdr [2 * binaryMaxVarint]byte
	h := protowire.AppendTag(hdr[:0], pfTracePacket, protowire.BytesType)
	h = protowire.AppendVarint(h, uint64(len(b)))
	if _, err := p.w.Write(h); err == nil {
		_, err = p.w.Write(b)
		if err != nil {
			p.err = fmt.Errorf("viz: perfetto: writing packet %d: %w", p.n, err)
		}
	} else {
		p.err = fmt.Errorf("viz: perfetto: writing packet %d: %w", p.n, err)
	}
	p.pkt = b[:0]
	p.n++
}

const binaryMaxVarint = 10

// appendIntern appends one interned entry {iid, name} as field f.
func appendIntern(b []byte, f protowire.Number, iid uint64, name string) []byte {
	var e [binaryMaxVarint + 8]byte
	m := protowire.AppendTag(e[:0], pfInternIID, protowire.VarintType)
	m = protowire.AppendVarint(m, iid)
	m = protowire.AppendTag(m, pfInternName, protowire.BytesType)
	m = protowire.AppendVarint(m, uint64(len(name)))
	b = protowire.AppendTag(b, f, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(m)+len(name)))
	b = append(b, m...)
	return append(b, name...)
}

// absNS turns a relative global time into the packet timestamp (absolute
// ns in rank 0's timebase, clamped at 0: Perfetto timestamps are unsigned).
func (p *PerfettoProto) absNS(rel float64) uint64 {
	if math.IsNaN(rel) {
		rel = 0
	}
	t := float64(p.runOrig) + math.Round(rel)
	if t <= 0 {
		return 0
	}
	if t >= math.MaxInt64 {
		return math.MaxInt64
	}
	return uint64(p.runOrig + int64(math.Round(rel)))
}

func appendAnnUint(b []byte, name uint64, v uint64) []byte {
	var e [3 * binaryMaxVarint]byte
	m := protowire.AppendTag(e[:0], pfDANameIID, protowire.VarintType)
	m = protowire.AppendVarint(m, name)
	m = protowire.AppendTag(m, pfDAUint, protowire.VarintType)
	m = protowire.AppendVarint(m, v)
	b = protowire.AppendTag(b, pfTEAnnotations, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func appendAnnInt(b []byte, name uint64, v int64) []byte {
	var e [3 * binaryMaxVarint]byte
	m := protowire.AppendTag(e[:0], pfDANameIID, protowire.VarintType)
	m = protowire.AppendVarint(m, name)
	m = protowire.AppendTag(m, pfDAInt, protowire.VarintType)
	m = protowire.AppendVarint(m, uint64(v))
	b = protowire.AppendTag(b, pfTEAnnotations, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func appendAnnStr(b []byte, name uint64, iid uint64) []byte {
	var e [3 * binaryMaxVarint]byte
	m := protowire.AppendTag(e[:0], pfDANameIID, protowire.VarintType)
	m = protowire.AppendVarint(m, name)
	m = protowire.AppendTag(m, pfDAStringIID, protowire.VarintType)
	m = protowire.AppendVarint(m, iid)
	b = protowire.AppendTag(b, pfTEAnnotations, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// slice writes one track event packet at ts.
func (p *PerfettoProto) trackEvent(ts uint64, te []byte) {
	b := p.pkt[:0]
	b = protowire.AppendTag(b, pfPktTimestamp, protowire.VarintType)
	b = protowire.AppendVarint(b, ts)
	b = protowire.AppendTag(b, pfPktTrackEvent, protowire.BytesType)
	b = protowire.AppendBytes(b, te)
	p.pkt = b
	p.emit()
}

func (p *PerfettoProto) ensureRank(rank int32) {
	if !p.declared[rank] {
		p.declare(RankMeta{Rank: rank})
	}
}

// Add writes one MPI call as a slice (a begin and an end packet).
// Continuation records of one call (MPI_Waitall completing several
// requests) are skipped: the call is already one slice.
func (p *PerfettoProto) Add(ev *datamodel.GEvent) error {
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return fmt.Errorf("viz: perfetto: Add after Close")
	}
	if ev.Continuation() {
		return nil
	}
	p.start()
	p.ensureRank(ev.Rank)
	track := threadUUID(ev.Rank)
	te := p.te[:0]
	te = protowire.AppendTag(te, pfTEType, protowire.VarintType)
	te = protowire.AppendVarint(te, pfTypeSliceBegin)
	te = protowire.AppendTag(te, pfTETrackUUID, protowire.VarintType)
	te = protowire.AppendVarint(te, track)
	te = protowire.AppendTag(te, pfTECategoryIIDs, protowire.VarintType)
	te = protowire.AppendVarint(te, pfCatMPI)
	te = protowire.AppendTag(te, pfTENameIID, protowire.VarintType)
	te = protowire.AppendVarint(te, p.nameIID(ev.Op.String()))
	te = appendAnnUint(te, pfAnnComm, ev.CommID)
	te = appendAnnUint(te, pfAnnSeq, uint64(ev.Seq))
	if ev.Root >= 0 {
		te = appendAnnInt(te, pfAnnRoot, int64(ev.Root))
	}
	if ev.Op.IsRMA() && ev.Peer >= 0 { // one-sided: the target's world rank
		te = appendAnnInt(te, pfAnnTarget, int64(ev.Peer))
	}
	if ev.Sent != 0 {
		te = appendAnnUint(te, pfAnnSent, ev.Sent)
	}
	if ev.Recv != 0 {
		te = appendAnnUint(te, pfAnnRecv, ev.Recv)
	}
	te = appendAnnStr(te, pfAnnSite, p.strIID(p.callsite(ev.Rank, ev.Callsite)))
	if p.errBar != nil { // the clock's estimated error, whole ns (unknown: none)
		if v := p.errBar(ev.Rank, ev.LocalEnter); v >= 0 && v < 1<<62 {
			te = appendAnnInt(te, pfAnnEnterErr, int64(math.Round(v)))
		}
		if v := p.errBar(ev.Rank, ev.LocalExit); v >= 0 && v < 1<<62 {
			te = appendAnnInt(te, pfAnnExitErr, int64(math.Round(v)))
		}
	}
	p.te = te
	p.trackEvent(p.absNS(ev.Enter), te)
	exit := ev.Exit
	if exit < ev.Enter {
		exit = ev.Enter
	}
	te = p.te[:0]
	te = protowire.AppendTag(te, pfTEType, protowire.VarintType)
	te = protowire.AppendVarint(te, pfTypeSliceEnd)
	te = protowire.AppendTag(te, pfTETrackUUID, protowire.VarintType)
	te = protowire.AppendVarint(te, track)
	p.te = te
	p.trackEvent(p.absNS(exit), te)
	return p.err
}

// AddMessages writes one flow arrow per matched message: an instant on the
// sender's track at the send's start, inside its send call, starting flow
// i+1, and an instant on the receiver's track at the midpoint of the call
// that completed the receive, terminating it. Call it before Close.
func (p *PerfettoProto) AddMessages(msgs []datamodel.Message) error {
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return fmt.Errorf("viz: perfetto: AddMessages after Close")
	}
	p.start()
	for i := range msgs {
		m := &msgs[i]
		id := uint64(i + 1)
		name := p.nameIID(fmt.Sprintf("%s → %s", m.SendOp, m.RecvOp))
		for side := 0; side < 2; side++ {
			rank, ts, field := m.Src, m.SendStart, protowire.Number(pfTEFlowIDs)
			if side == 1 {
				rank, ts, field = m.Dst, (m.RecvEnter+m.RecvExit)/2, pfTETermFlowIDs
			}
			p.ensureRank(int32(rank))
			te := p.te[:0]
			te = protowire.AppendTag(te, pfTEType, protowire.VarintType)
			te = protowire.AppendVarint(te, pfTypeInstant)
			te = protowire.AppendTag(te, pfTETrackUUID, protowire.VarintType)
			te = protowire.AppendVarint(te, threadUUID(int32(rank)))
			te = protowire.AppendTag(te, pfTECategoryIIDs, protowire.VarintType)
			te = protowire.AppendVarint(te, pfCatMsg)
			te = protowire.AppendTag(te, pfTENameIID, protowire.VarintType)
			te = protowire.AppendVarint(te, name)
			te = appendAnnInt(te, pfAnnTag, int64(m.Tag))
			te = appendAnnUint(te, pfAnnBytes, uint64(m.Bytes))
			te = protowire.AppendTag(te, field, protowire.Fixed64Type)
			te = protowire.AppendFixed64(te, id)
			p.te = te
			p.trackEvent(p.absNS(ts), te)
		}
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// Close flushes the stream. It does not close the underlying writer.
func (p *PerfettoProto) Close() error {
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return nil
	}
	p.start()
	p.closed = true
	if err := p.w.Flush(); err != nil {
		p.err = fmt.Errorf("viz: perfetto: flushing after %d packets: %w", p.n, err)
	}
	return p.err
}

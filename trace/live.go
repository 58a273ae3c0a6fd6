package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"
)

// The live sidecar (docs/explanation/recorder.md, "Durability"): the recorder keeps
// every thread's event buffer in a file-backed mapping next to the rank
// file, <rank file>.live, so that events stored before the process died
// (SIGKILL, the OOM killer, MPI_Abort from another rank, a segfault) are
// still on disk. A cleanly finished rank removes it. Layout (little
// endian, cshim/gclock.h):
//
//	page 0      "GCKLIVE1", uint32 version (3; 2 and 1 before),
//	            uint32 record size (72); version 2 on: at byte 64 the end
//	            record (64 bytes, cshim/gclock.h gclock_live_end)
//	each region (page aligned, one per thread buffer):
//	  "GCKTHRD1", uint32 cap, uint32 thread, version 2 on: int32 tid,
//	  4 reserved bytes (version 1: 8 reserved bytes),
//	  2 × {uint32 gen, uint32 state, 8 reserved bytes},
//	  version 2 on: 8 bytes, then 64 bytes (version 2: the in-flight
//	  slot, gclock_inflight; version 3: unused), so the region header is
//	  128 bytes (56 in version 1)
//	  2 × cap records of 72 bytes (two halves)
//
// A half in state 1 (being filled) or 2 (handed to the writer, maybe not
// yet in the rank file) holds events the rank file may lack; its records
// are complete up to the first one whose last field (pad) is not the
// half's generation. In version 3 the call a thread is inside is that
// next record of its half being filled, when its pad is 0xffffffff, which
// no generation is (liveInFlightRecord).

// LiveSuffix is appended to a rank file's name for its live sidecar.
const LiveSuffix = ".live"

const (
	livePage       = 4096
	liveRegionHdr1 = 56  // sidecar version 1
	liveRegionHdr2 = 128 // version 2 on: the in-flight slot (unused in 3)
	liveRecordSize = 72
	liveFilling    = 1
	liveHanded     = 2
)

// LiveRecovery is what a live sidecar still holds.
type LiveRecovery struct {
	// Halves are the buffer halves not known to be in the rank file, per
	// thread buffer in the order they were filled. A half handed to the
	// writer may be in the file already (the process died between the
	// write and the mark): it then is the file's chunk with the same
	// first event, and the reader of both skips it.
	Halves []LiveHalf
	// Threads is the number of thread buffers in the file; LastNS the
	// latest exit time among the recovered events (0 when none).
	Threads int
	LastNS  int64
	// Version is the sidecar's version (1 before 2026-11-28: no end
	// record, no calls in flight; 2: the call in flight in a slot of its
	// own; 3: the call in flight is the thread's next record).
	Version int
	// End is how the process ended when a signal's handler recorded it
	// (nil: nothing recorded; version 2).
	End *End
	// InFlight is every thread's call in flight when the process ended
	// (version 2 on), by thread buffer; a thread that was not inside a
	// recorded call has none. LastCall[i] is thread i's last recovered
	// event (the last call it returned from), nil when none.
	InFlight []InFlight
	LastCall []*Event
	// Tids are the kernel thread ids of the buffers' threads (0 unknown).
	Tids []int32
}

// InFlight is the MPI call a thread was inside (entered, not returned)
// when its process ended: the wrapper's mark in the live sidecar
// (docs/guide/crash-hang.md).
type InFlight struct {
	Thread  int
	Op      Op
	EnterNS int64  // local time
	Site    uint64 // call site
	// Comm is the communicator's local index (as Event.Comm), -1 none;
	// Seq a collective's instance on it.
	Comm int64
	Seq  uint32
	// Root, Peer and Tag are as the application passed them, Root a comm
	// rank, Peer a comm rank or, with WorldPeers, the world rank it names
	// (Peer PeerAny for MPI_ANY_SOURCE, PeerNull for MPI_PROC_NULL);
	// NoArg when the call has none. Peer2/Tag2: MPI_Sendrecv's send side.
	Root, Peer, Tag, Peer2, Tag2 int32
	// WorldPeers says Peer and Peer2 are world ranks (version 3, which
	// stores them as its records do), not comm ranks (version 2).
	WorldPeers bool
	// Requests is the number of requests a wait or test call was given.
	Requests uint32
}

// NoArg marks an InFlight field the call has no argument for.
const NoArg = math.MinInt32

// LiveHalf is one recovered buffer half.
type LiveHalf struct {
	Thread int
	Handed bool // handed to the writer (maybe written), else being filled
	Events []Event
}

// Events returns the recovered events of every half, in order.
func (l *LiveRecovery) Events() []Event {
	var out []Event
	for _, h := range l.Halves {
		out = append(out, h.Events...)
	}
	return out
}

// ErrNoLive is returned by ReadLive when the rank has no live sidecar.
var ErrNoLive = errors.New("no live sidecar")

// ReadLive reads the live sidecar at path (a rank file's name plus
// LiveSuffix). It never panics on damaged input: a region it cannot read
// ends the recovery with an error naming the file and the offset, and
// what was read before is returned with it.
func ReadLive(path string) (*LiveRecovery, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoLive
	}
	if err != nil {
		return nil, fmt.Errorf("trace: %s: %w", path, err)
	}
	return parseLive(path, b)
}

// parseLive is ReadLive of the sidecar's bytes b (path names it in errors).
func parseLive(path string, b []byte) (*LiveRecovery, error) {
	if len(b) < livePage || string(b[:8]) != "GCKLIVE1" {
		return nil, fmt.Errorf("trace: %s: not a gclock live sidecar (%d bytes, no GCKLIVE1 header)", path, len(b))
	}
	v, rs := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])
	if (v < 1 || v > 3) || rs != liveRecordSize {
		return nil, fmt.Errorf("trace: %s: live sidecar version %d with %d-byte records, this tracemerge reads versions 1 to 3 with %d", path, v, rs, liveRecordSize)
	}
	out := &LiveRecovery{Version: int(v)}
	liveRegionHdr := liveRegionHdr1
	if v >= 2 {
		liveRegionHdr = liveRegionHdr2
		out.End = liveEnd(b[64:128])
	}
	for off := livePage; off+liveRegionHdr <= len(b); {
		r := b[off:]
		if string(r[:8]) != "GCKTHRD1" {
			break // a region being created when the process died
		}
		capN := int(binary.LittleEndian.Uint32(r[8:]))
		size := liveRegionHdr + 2*capN*liveRecordSize
		if capN <= 0 || off+size > len(b) {
			return out, fmt.Errorf("trace: %s: thread region at byte %d: %d events per half do not fit the file (%d bytes)", path, off, capN, len(b))
		}
		out.Threads++
		type halfInfo struct {
			gen, state uint32
			idx        int
		}
		var hs []halfInfo
		for h := 0; h < 2; h++ {
			p := r[24+16*h:]
			hs = append(hs, halfInfo{binary.LittleEndian.Uint32(p), binary.LittleEndian.Uint32(p[4:]), h})
		}
		sort.Slice(hs, func(i, j int) bool { return hs[i].gen < hs[j].gen })
		var tid int32
		if v >= 2 {
			tid = int32(binary.LittleEndian.Uint32(r[16:]))
		}
		if v == 2 {
			if fl, ok := liveInFlight(r[64:128]); ok {
				fl.Thread = out.Threads - 1
				out.InFlight = append(out.InFlight, fl)
			}
		}
		out.Tids = append(out.Tids, tid)
		var last *Event
		var fl3 *InFlight // version 3: the marked record after the newest filling half's events
		for _, h := range hs {
			if h.gen == 0 || (h.state != liveFilling && h.state != liveHanded) {
				continue
			}
			recs := r[liveRegionHdr+h.idx*capN*liveRecordSize:]
			lh := LiveHalf{Thread: out.Threads - 1, Handed: h.state == liveHanded}
			i := 0
			for ; i < capN; i++ {
				e := recs[i*liveRecordSize : (i+1)*liveRecordSize]
				if binary.LittleEndian.Uint32(e[68:]) != h.gen {
					break
				}
				ev := liveEvent(e)
				lh.Events = append(lh.Events, ev)
				out.LastNS = max(out.LastNS, ev.ExitNS)
			}
			if v >= 3 && h.state == liveFilling && i < capN {
				if fl, ok := liveInFlightRecord(recs[i*liveRecordSize : (i+1)*liveRecordSize]); ok {
					fl.Thread = out.Threads - 1
					fl3 = &fl
				}
			}
			if len(lh.Events) > 0 {
				out.Halves = append(out.Halves, lh)
				last = &lh.Events[len(lh.Events)-1]
			}
		}
		if fl3 != nil {
			out.InFlight = append(out.InFlight, *fl3)
		}
		out.LastCall = append(out.LastCall, last)
		off += (size + livePage - 1) / livePage * livePage
	}
	return out, nil
}

// liveEvent decodes one 72-byte C record (cshim/gclock.h gclock_event).
func liveEvent(e []byte) Event {
	le := binary.LittleEndian
	return Event{
		EnterNS:  int64(le.Uint64(e[0:])),
		ExitNS:   int64(le.Uint64(e[8:])),
		Sent:     le.Uint64(e[16:]),
		Recv:     le.Uint64(e[24:]),
		Callsite: le.Uint64(e[32:]),
		Comm:     le.Uint32(e[40:]),
		Seq:      le.Uint32(e[44:]),
		Root:     int32(le.Uint32(e[48:])),
		Op:       Op(le.Uint16(e[52:])),
		Peer:     int32(le.Uint32(e[56:])),
		Tag:      int32(le.Uint32(e[60:])),
		Req:      le.Uint32(e[64:]),
	}
}

// liveInFlight decodes a region's 64-byte in-flight slot (cshim/gclock.h
// gclock_inflight); ok false when its mark says no call is in flight.
func liveInFlight(p []byte) (InFlight, bool) {
	le := binary.LittleEndian
	if le.Uint32(p[60:]) != 1 {
		return InFlight{}, false
	}
	fl := InFlight{
		EnterNS:  int64(le.Uint64(p[0:])),
		Site:     le.Uint64(p[8:]),
		Comm:     int64(le.Uint32(p[16:])),
		Seq:      le.Uint32(p[20:]),
		Peer:     int32(le.Uint32(p[24:])),
		Tag:      int32(le.Uint32(p[28:])),
		Root:     int32(le.Uint32(p[32:])),
		Peer2:    int32(le.Uint32(p[36:])),
		Tag2:     int32(le.Uint32(p[40:])),
		Requests: le.Uint32(p[44:]),
		Op:       Op(le.Uint16(p[48:])),
	}
	if fl.Comm == math.MaxUint32 {
		fl.Comm = -1
	}
	return fl, true
}

// The in-flight record of version 3 (cshim/gclock.h GCK_PAD_FL, GCK_FLF_*):
// pad is liveFlightMark (generations stay below 2^31); flags (bytes 54-55)
// say which fields the call gave.
const (
	liveFlightMark = 0xffffffff
	liveFlfSeq     = 1
	liveFlfRoot    = 2
	liveFlfPeer    = 4
	liveFlfPeer2   = 8
	liveFlfCount   = 16
)

// liveInFlightRecord decodes the record after the complete ones of the
// half being filled as the call in flight (version 3); ok false unless
// its pad marks it so. The mark carries no generation: the recorder
// completes or clears every record it marked before the thread goes on,
// so a mark is only ever left behind by a process that died inside the
// call. Only
// the fields its flags name are taken, besides enter time, call site, op
// and communicator: the wrapper stores nothing else of the call while the
// mark stands, and never stores an exit value into one of these before
// it takes the mark away (a record half-way from marked to returned is
// either still the call in flight, whole, or neither; never a returned
// call, whose pad is gen itself).
func liveInFlightRecord(e []byte) (InFlight, bool) {
	le := binary.LittleEndian
	if le.Uint32(e[68:]) != liveFlightMark {
		return InFlight{}, false
	}
	flags := le.Uint16(e[54:])
	fl := InFlight{
		EnterNS: int64(le.Uint64(e[0:])),
		Site:    le.Uint64(e[32:]),
		Comm:    int64(le.Uint32(e[40:])),
		Op:      Op(le.Uint16(e[52:])),
		Root:    NoArg, Peer: NoArg, Tag: NoArg, Peer2: NoArg, Tag2: NoArg,
		WorldPeers: true,
	}
	if fl.Comm == math.MaxUint32 {
		fl.Comm = -1
	}
	if flags&liveFlfSeq != 0 {
		fl.Seq = le.Uint32(e[44:])
	}
	if flags&liveFlfRoot != 0 {
		fl.Root = int32(le.Uint32(e[48:]))
	}
	if flags&liveFlfPeer != 0 {
		fl.Peer, fl.Tag = int32(le.Uint32(e[56:])), int32(le.Uint32(e[60:]))
	}
	if flags&liveFlfPeer2 != 0 {
		fl.Peer2, fl.Tag2 = int32(le.Uint32(e[8:])), int32(le.Uint32(e[12:]))
	}
	if flags&liveFlfCount != 0 {
		fl.Requests = le.Uint32(e[64:])
	}
	return fl, true
}

// liveEnd decodes the 64-byte end record (cshim/gclock.h gclock_live_end):
// nil when none was recorded; Partial when the process died writing it.
func liveEnd(p []byte) *End {
	le := binary.LittleEndian
	state := le.Uint32(p[0:])
	if state == 0 {
		return nil
	}
	e := &End{Partial: state != 2, Thread: -1}
	switch le.Uint32(p[4:]) {
	case 1:
		e.Kind = EndAbort
	case 2:
		e.Kind = EndSignal
	case 3:
		e.Kind = EndExit
	default:
		e.Partial = true
	}
	e.NS = int64(le.Uint64(p[8:]))
	e.Code = int32(le.Uint32(p[16:]))
	e.SigCode = int32(le.Uint32(p[20:]))
	e.Addr = le.Uint64(p[24:])
	e.Site = le.Uint64(p[32:])
	e.Pid = int32(le.Uint32(p[40:]))
	e.Tid = int32(le.Uint32(p[44:]))
	if t := le.Uint32(p[48:]); t != math.MaxUint32 {
		e.Thread = int32(t)
	}
	return e
}

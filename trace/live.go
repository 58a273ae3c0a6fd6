package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

// The live sidecar (docs/recorder.md, "Durability"): the recorder keeps
// every thread's event buffer in a file-backed mapping next to the rank
// file, <rank file>.live, so that events stored before the process died
// (SIGKILL, the OOM killer, MPI_Abort from another rank, a segfault) are
// still on disk. A cleanly finished rank removes it. Layout (little
// endian, cshim/gclock.h):
//
//	page 0      "GCKLIVE1", uint32 version (1), uint32 record size (72)
//	each region (page aligned, one per thread buffer):
//	  "GCKTHRD1", uint32 cap, uint32 thread, 8 reserved bytes,
//	  2 × {uint32 gen, uint32 state, 8 reserved bytes},
//	  2 × cap records of 72 bytes (two halves)
//
// A half in state 1 (being filled) or 2 (handed to the writer, maybe not
// yet in the rank file) holds events the rank file may lack; its records
// are complete up to the first one whose last field (pad) is not the
// half's generation.

// LiveSuffix is appended to a rank file's name for its live sidecar.
const LiveSuffix = ".live"

const (
	livePage       = 4096
	liveRegionHdr  = 56
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
}

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
	if len(b) < livePage || string(b[:8]) != "GCKLIVE1" {
		return nil, fmt.Errorf("trace: %s: not a gclock live sidecar (%d bytes, no GCKLIVE1 header)", path, len(b))
	}
	if v, rs := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:]); v != 1 || rs != liveRecordSize {
		return nil, fmt.Errorf("trace: %s: live sidecar version %d with %d-byte records, this tracemerge reads version 1 with %d", path, v, rs, liveRecordSize)
	}
	out := &LiveRecovery{}
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
		for _, h := range hs {
			if h.gen == 0 || (h.state != liveFilling && h.state != liveHanded) {
				continue
			}
			recs := r[liveRegionHdr+h.idx*capN*liveRecordSize:]
			lh := LiveHalf{Thread: out.Threads - 1, Handed: h.state == liveHanded}
			for i := 0; i < capN; i++ {
				e := recs[i*liveRecordSize : (i+1)*liveRecordSize]
				if binary.LittleEndian.Uint32(e[68:]) != h.gen {
					break
				}
				ev := liveEvent(e)
				lh.Events = append(lh.Events, ev)
				out.LastNS = max(out.LastNS, ev.ExitNS)
			}
			if len(lh.Events) > 0 {
				out.Halves = append(out.Halves, lh)
			}
		}
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

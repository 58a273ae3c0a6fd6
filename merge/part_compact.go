// Compact events to process 0's stream (decision D83): in a partitioned
// pass whose root-cause stream is fed (p2p_pipe.go), that stream reads of
// an event only its rank, op, times, call site and sequence number, and
// for a collective its communicator, place, root and byte counts; the
// decoders then send each event process 0 wants in that form (varints
// but for the two times) instead of its 128 bytes, and whole only the
// events another stream sink wants (the one-sided analysis) or the
// root-cause stream reads more of (PSCW).

package merge

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// Forms of an event in a compact message.
const (
	ecShort = 0 // rank and op (varints), enter, exit, call site (8 bytes each), sequence number (varint)
	ecColl  = 1 // ecShort and communicator id, comm rank, root, sent and received bytes (varints)
	ecWhole = 2 // the GEvent's bytes
)

// whole reports whether op travels whole in a compact message.
func (pl *partPlan) whole(op trace.Op) bool {
	if int(op) >= 64*len(pl.full) {
		return true
	}
	return pl.full[op>>6]>>(op&63)&1 != 0
}

// compactColl reports whether the root-cause stream reads e's collective
// fields (RootCauseStream.addCall: collective).
func compactColl(op trace.Op) bool { return op.IsCollective() || op == trace.OpWinFence }

// appendCompact appends evs in their compact forms to b.
func (pl *partPlan) appendCompact(b []byte, evs []datamodel.GEvent) []byte {
	for i := range evs {
		e := &evs[i]
		if pl.whole(e.Op) || e.Rank < 0 {
			b = append(b, ecWhole)
			b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(e)), evSize)...)
			continue
		}
		coll := compactColl(e.Op)
		if coll {
			b = append(b, ecColl)
		} else {
			b = append(b, ecShort)
		}
		b = binary.AppendUvarint(b, uint64(uint32(e.Rank)))
		b = binary.AppendUvarint(b, uint64(e.Op))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Enter))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Exit))
		b = binary.LittleEndian.AppendUint64(b, e.Callsite)
		b = binary.AppendUvarint(b, uint64(e.Seq))
		if coll {
			b = binary.AppendUvarint(b, e.CommID)
			b = binary.AppendVarint(b, int64(e.CommRank))
			b = binary.AppendVarint(b, int64(e.Root))
			b = binary.AppendUvarint(b, e.Sent)
			b = binary.AppendUvarint(b, e.Recv)
		}
	}
	return b
}

// errCompact is a compact message that does not decode.
var errCompact = errors.New("parallel analysis: bad compact event message")

// decodeCompact appends the events of compact message b to evs: straight
// code, each varint of one byte read inline (through recReader's checked
// reads and closures it took about 440 instructions an event, through a
// loop over the fields about 300; callgrind).
func decodeCompact(b []byte, evs []datamodel.GEvent) ([]datamodel.GEvent, error) {
	i := 0
	for i < len(b) {
		form := b[i]
		i++
		if form == ecWhole {
			if len(b)-i < evSize {
				return evs, errCompact
			}
			evs = append(evs, datamodel.GEvent{})
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&evs[len(evs)-1])), evSize), b[i:i+evSize])
			i += evSize
			continue
		}
		if form != ecShort && form != ecColl {
			return evs, errCompact
		}
		evs = append(evs, datamodel.GEvent{CommRank: -1, Root: -1, CommIdx: -1, Site: -1})
		e := &evs[len(evs)-1]
		var rank, op, seq uint64
		rank, i = uvarintAt(b, i)
		op, i = uvarintAt(b, i)
		if i < 0 || len(b)-i < 24 {
			return evs, errCompact
		}
		e.Rank, e.Op = int32(uint32(rank)), trace.Op(op)
		e.Enter = math.Float64frombits(binary.LittleEndian.Uint64(b[i:]))
		e.Exit = math.Float64frombits(binary.LittleEndian.Uint64(b[i+8:]))
		e.Callsite = binary.LittleEndian.Uint64(b[i+16:])
		seq, i = uvarintAt(b, i+24)
		e.Seq = uint32(seq)
		if form == ecColl {
			var cr, root uint64
			e.CommID, i = uvarintAt(b, i)
			cr, i = uvarintAt(b, i)
			root, i = uvarintAt(b, i)
			e.Sent, i = uvarintAt(b, i)
			e.Recv, i = uvarintAt(b, i)
			e.CommRank, e.Root = int32(zigzag(cr)), int32(zigzag(root))
		}
		if i < 0 {
			return evs, errCompact
		}
	}
	return evs, nil
}

// uvarintAt reads the unsigned varint at b[i]: its value and the index
// after it, -1 when it is bad or i is (the caller checks once).
func uvarintAt(b []byte, i int) (uint64, int) {
	if uint(i) < uint(len(b)) && b[i] < 0x80 {
		return uint64(b[i]), i + 1
	}
	return uvarintSlow(b, i)
}

func uvarintSlow(b []byte, i int) (uint64, int) {
	if i < 0 || i >= len(b) {
		return 0, -1
	}
	v, n := binary.Uvarint(b[i:])
	if n <= 0 {
		return 0, -1
	}
	return v, i + n
}

// zigzag decodes a signed varint's value (binary.AppendVarint).
func zigzag(u uint64) int64 {
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

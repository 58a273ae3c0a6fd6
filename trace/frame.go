package trace

import (
	"encoding/binary"
	"hash/crc32"
)

// FormatMinor is the minor format version written after the major version
// (FormatVersion). A minor bump only adds things an older reader of the same
// major version can skip (new frame kinds, new trailing msgpack fields);
// readers accept any minor of their major version.
const FormatMinor = 0 // 3.1 added SPAN frames (2026-11-27); 4.0 has them; 4.1 the footer's end (2026-11-28); 5.0 and 6.0 have both

// format5Minor is the minor version of the format-5 files withFormat5 writes.
const format5Minor = 0

// format4Minor is the minor version of the format-4 files withFormat4 writes.
const format4Minor = 1

// preambleSize is len(Magic) + major u16 + minor u16.
const preambleSize = len(Magic) + 4

// frameHeaderSize is the fixed size of every frame header:
//
//	[0]     kind     u8
//	[1]     flags    u8
//	[2:4]   hcrc     u16 LE, low 16 bits of CRC-32C over bytes 0,1,4..11
//	[4:8]   length   u32 LE, payload bytes that follow the header
//	[8:12]  pcrc     u32 LE, CRC-32C (Castagnoli) of the payload
const frameHeaderSize = 12

// MaxFramePayload bounds a frame's payload length; longer lengths are
// treated as damage by the reader and refused by the writer.
const MaxFramePayload = 1 << 28

// FrameKind identifies what a frame carries.
type FrameKind uint8

// Frame kinds. The numbering is part of the file format: append only.
const (
	KindHeader FrameKind = 1 // msgpack Header; always the first frame
	KindEvents FrameKind = 2 // one chunk of events (zstd of msgpack columns)
	KindComm   FrameKind = 3 // msgpack Comm
	KindEpoch  FrameKind = 4 // msgpack Epoch
	KindFooter FrameKind = 5 // msgpack Footer
	// KindSpan follows an EVENTS frame: its chunk index (u32), events
	// (u32), first and last local enter time (i64 each), little-endian,
	// 24 bytes. Minor version 1; older readers skip it.
	KindSpan FrameKind = 6
)

// spanPayloadSize is a SPAN frame's payload length.
const spanPayloadSize = 24

// String names the kind for messages ("events", "comm", ...).
func (k FrameKind) String() string {
	switch k {
	case KindHeader:
		return "header"
	case KindEvents:
		return "events"
	case KindComm:
		return "comm"
	case KindEpoch:
		return "epoch"
	case KindFooter:
		return "footer"
	case KindSpan:
		return "span"
	}
	return "kind-" + itoa(int(k))
}

// Frame flags.
const (
	flagZstd     uint8 = 1 << 0 // payload is a zstd frame
	flagS2       uint8 = 1 << 1 // payload is one S2 block (github.com/klauspost/compress/s2)
	flagTail     uint8 = 1 << 2 // payload = uvarint(block length), the block, then raw column bytes
	knownFlags         = flagZstd | flagS2 | flagTail
	reservedMask       = ^knownFlags
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// headerCRC computes the 16-bit header check over kind, flags, length, pcrc.
func headerCRC(h []byte) uint16 {
	var tmp [10]byte
	tmp[0], tmp[1] = h[0], h[1]
	copy(tmp[2:], h[4:12])
	return uint16(crc32c(tmp[:]))
}

// appendFrameHeader appends the 12-byte header of a frame with the given
// payload.
func appendFrameHeader(dst []byte, kind FrameKind, flags uint8, payload []byte) []byte {
	var h [frameHeaderSize]byte
	h[0] = byte(kind)
	h[1] = flags
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[8:12], crc32c(payload))
	binary.LittleEndian.PutUint16(h[2:4], headerCRC(h[:]))
	return append(dst, h[:]...)
}

// frameHeader is a parsed frame header.
type frameHeader struct {
	kind   FrameKind
	flags  uint8
	length uint32
	pcrc   uint32
}

// parseFrameHeader decodes h (frameHeaderSize bytes) and reports whether
// its header check and basic sanity (kind != 0, length bound) hold.
func parseFrameHeader(h []byte) (frameHeader, bool) {
	fh := frameHeader{
		kind:   FrameKind(h[0]),
		flags:  h[1],
		length: binary.LittleEndian.Uint32(h[4:8]),
		pcrc:   binary.LittleEndian.Uint32(h[8:12]),
	}
	ok := fh.kind != 0 && fh.length <= MaxFramePayload &&
		binary.LittleEndian.Uint16(h[2:4]) == headerCRC(h)
	return fh, ok
}

func appendPreamble(dst []byte, major, minor uint16) []byte {
	dst = append(dst, Magic...)
	dst = binary.LittleEndian.AppendUint16(dst, major)
	dst = binary.LittleEndian.AppendUint16(dst, minor)
	return dst
}

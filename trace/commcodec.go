package trace

import (
	"encoding/binary"
	"math"
)

// appendComm appends c as the msgpack map WriteComm writes (the same keys
// and values as the reflection encoder, which the reader decodes either
// way). By hand because a program that creates and frees a communicator
// per step writes two COMM frames a step, and the reflection encoder took
// 1.7 µs a frame.
func appendComm(b []byte, c *Comm) []byte {
	n := 6 // id, local, parent, kind, members, t
	if c.FreedNS != 0 {
		n++
	}
	if c.Same != 0 {
		n++
	}
	if len(c.Runs) > 0 {
		n++
	}
	b = append(b, 0x80|byte(n)) // fixmap
	b = appendMsgpackStr(b, "id")
	b = appendMsgpackUint(b, c.ID)
	b = appendMsgpackStr(b, "local")
	b = appendMsgpackUint(b, uint64(c.Local))
	b = appendMsgpackStr(b, "parent")
	b = appendMsgpackUint(b, c.Parent)
	b = appendMsgpackStr(b, "kind")
	b = appendMsgpackStr(b, c.Kind)
	b = appendMsgpackStr(b, "members")
	b = appendMsgpackInt32s(b, c.Members)
	b = appendMsgpackStr(b, "t")
	b = appendMsgpackInt(b, c.CreatedNS)
	if c.FreedNS != 0 {
		b = appendMsgpackStr(b, "freed")
		b = appendMsgpackInt(b, c.FreedNS)
	}
	if c.Same != 0 {
		b = appendMsgpackStr(b, "same")
		b = appendMsgpackUint(b, uint64(c.Same))
	}
	if len(c.Runs) > 0 {
		b = appendMsgpackStr(b, "runs")
		b = appendMsgpackInt32s(b, c.Runs)
	}
	return b
}

func appendMsgpackStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xda)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0xdb)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	return append(b, s...)
}

func appendMsgpackUint(b []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
	default:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), v)
	}
}

func appendMsgpackInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendMsgpackUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(v)) // negative fixint
	case v >= math.MinInt8:
		return append(b, 0xd0, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(v))
	default:
		return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(v))
	}
}

// appendMsgpackInt32s appends s as an array (nil as msgpack nil, as the
// reflection encoder writes a nil slice).
func appendMsgpackInt32s(b []byte, s []int32) []byte {
	if s == nil {
		return append(b, 0xc0)
	}
	switch n := len(s); {
	case n < 16:
		b = append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
	}
	for _, v := range s {
		b = appendMsgpackInt(b, int64(v))
	}
	return b
}

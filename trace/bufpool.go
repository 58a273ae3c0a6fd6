package trace

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Chunk buffers (the compressed payload a Reader reads a frame into, and
// the block its decoder decompresses a chunk into) are lent between the
// Readers of a process instead of made for every chunk: tracemerge on
// 16,384 ranks made ≈ 220 MB of them, one pair per rank file, and the
// compressed ones are in use only for a moment (the scan at Open, the
// payload until it is decompressed).
//
// Ownership: a Reader owns the buffers it holds in r.buf and r.dec.raw
// from getBuf until it gives them back with putBuf, and it gives one back
// only when nothing can still point into it:
//
//   - decoded events (Event) are values without pointers, and the
//     decoder's templates (dec.tm) and call-site dictionary (dec.p.Sites)
//     are copies, so nothing a caller gets from NextChunk or NextEvents
//     points into a chunk buffer;
//   - the decoder's columns (dec.p, dec.s2.cols) and its bytes.Reader
//     (dec.br) alias the decompressed block, and, with flagTail, the
//     payload: both are kept until the chunk's last event is handed out;
//     the decompressed block goes back only in sizeRaw, when the next
//     chunk needs a larger one (the previous chunk is used up then), and
//     only after every alias is cleared; Release drops it to the
//     collector instead (readers of many ranks end together, and kept in
//     the pool their blocks raised the peak RSS);
//   - without flagTail nothing aliases the payload once it is
//     decompressed, so dropPayload gives it back at once;
//   - the scan at Open gives back its payload buffer when it ends (the
//     metadata it decoded are copies: msgpack decodes into new values).
//
// TestReader_ReleasedBuffersArePoisonedAndNoEventChanges fills every
// buffer given back with a poison pattern (poisonReleased) and checks
// that readers sharing the pool still decode exactly what fresh readers
// do.

// bufSteps is the number of size classes per power of two: a buffer is
// at most 1/bufSteps larger than asked for.
const bufSteps = 8

// minBufClassBits: buffers below 2^minBufClassBits bytes are not pooled.
const minBufClassBits = 9

// bufClasses is enough classes for maxDecoded.
const bufClasses = (29 - minBufClassBits + 1) * bufSteps

var bufPools [bufClasses]sync.Pool

// poisonReleased (tests) fills every buffer given back to the pool with
// poisonByte, so that a reader still using one decodes garbage.
var poisonReleased bool

const poisonByte = 0xA5

// classSize is the size of class c's buffers.
func classSize(c int) int {
	k := c/bufSteps + minBufClassBits
	return 1<<k + (c%bufSteps)<<(k-3)
}

// classUp is the smallest class whose buffers hold n bytes; -1 when n is
// too small or too large to pool.
func classUp(n int) int {
	if n <= 1<<minBufClassBits || n > maxDecoded {
		return -1
	}
	k := bits.Len(uint(n-1)) - 1 // 2^k < n <= 2^(k+1)
	step := 1 << (k - 3)
	j := (n - 1<<k + step - 1) / step // 1..8
	return (k-minBufClassBits)*bufSteps + j
}

// classDown is the largest class whose buffers a buffer of capacity n can
// serve; -1 when none.
func classDown(n int) int {
	if n < 1<<minBufClassBits || n > maxDecoded {
		return -1
	}
	k := bits.Len(uint(n)) - 1 // 2^k <= n < 2^(k+1)
	j := (n - 1<<k) >> (k - 3)
	return (k-minBufClassBits)*bufSteps + j
}

// getBuf returns a buffer of length n, from the pool when it has one.
func getBuf(n int) []byte {
	c := classUp(n)
	if c < 0 {
		return make([]byte, n)
	}
	if b, ok := bufPools[c].Get().([]byte); ok {
		return b[:n]
	}
	return make([]byte, n, classSize(c))
}

// putBuf gives b back to the pool; its owner must hold no slice of it
// any more.
func putBuf(b []byte) {
	c := classDown(cap(b))
	if c < 0 {
		return
	}
	b = b[:cap(b)]
	if poisonReleased {
		for i := range b {
			b[i] = poisonByte
		}
	}
	bufPools[c].Put(b[:0]) // boxes a slice header: 24 bytes a Put
}

// decodedSize is how many bytes the EVENTS payload decompresses to, as
// its block's header says (zstd's frame content size, S2's length); 0
// when it does not say (then the decoder grows its buffer itself).
func decodedSize(payload []byte, flags uint8) int {
	if flags&flagTail != 0 {
		l, k := binary.Uvarint(payload)
		if k <= 0 || l > uint64(len(payload)-k) {
			return 0
		}
		payload = payload[k : k+int(l)]
		flags &^= flagTail
	}
	switch flags {
	case flagZstd:
		var h zstd.Header
		if h.Decode(payload) != nil || !h.HasFCS || h.FrameContentSize > maxDecoded {
			return 0
		}
		return int(h.FrameContentSize)
	case flagS2:
		n, err := s2.DecodedLen(payload)
		if err != nil || n > maxDecoded {
			return 0
		}
		return n
	}
	return 0
}

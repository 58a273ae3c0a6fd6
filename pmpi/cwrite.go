package main

/*
#include <stdlib.h>
#include "gclock.h"
*/
import "C"

import (
	"syscall"

	"github.com/gclock/gclock/trace"
)

// cWriterLevel is the zstd level of the chunks the C writer compresses:
// zstd's fastest regular level. What it compresses is the chunk array
// without the two timing columns (a few KB of template indices, seq and
// request codes), which every level shrinks to almost nothing
// (docs/explanation/decisions.md, "Chunks written in C").
const cWriterLevel = -1

// cShared is the C chunk writer's side of the rank file (cshim/cwrite.c),
// for trace.Writer.SetShared.
type cShared struct {
	s *C.gclock_cw_state // set by Lock, for Unlock
}

// Lock waits until the C writer is between frames and returns its state.
func (c *cShared) Lock() trace.SharedState {
	s := C.gclock_cw_lock()
	c.s = s
	st := trace.SharedState{Off: int64(s.off), Chunks: int(s.chunks), Events: uint64(s.events), Calls: uint64(s.calls)}
	if s.err != 0 {
		st.WriteErr, st.ErrLen = syscall.Errno(s.err), int64(s.err_len)
		s.err = 0
	}
	return st
}

// Unlock publishes st to the C writer and lets it go on.
func (c *cShared) Unlock(st trace.SharedState) {
	s := c.s
	s.off, s.chunks = C.int64_t(st.Off), C.uint32_t(st.Chunks)
	s.events, s.calls = C.uint64_t(st.Events), C.uint64_t(st.Calls)
	s.fd, s.dev, s.ino = C.int32_t(st.FD), C.uint64_t(st.Dev), C.uint64_t(st.Ino)
	s.armed = 0
	if st.Armed {
		s.armed = 1
	}
	C.gclock_cw_unlock()
}

// armCWriter sets up the C chunk writer (cshim/cwrite.c) for buffer halves
// of n events and shares the rank file with it: from now on a full half is
// written on the thread that filled it without a call into Go. Only with
// synchronous flushes (the default: GCLOCK_FLUSH_SYNC=0 queues halves
// for a goroutine), and not with GCLOCK_CODEC=s2 (S2 is Go's). Returns why
// it could not be set up, or "".
func (r *recorder) armCWriter(cfg config, n int) string {
	if !cfg.CWrite || !fq.sync || r.w == nil || (cfg.CodecGiven && cfg.Codec == trace.CodecS2) {
		return ""
	}
	tail := 0
	if cfg.Codec == trace.CodecS2 {
		tail = 1 // the default: the timing columns raw after the block, as the S2 chunks keep them
	}
	if why := C.gclock_cw_setup(C.int(cWriterLevel), C.int(tail), C.uint32_t(min(n, trace.MaxChunkEvents))); why != nil {
		return C.GoString(why)
	}
	r.w.SetShared(&cShared{})
	return ""
}

// cWriterWrite has the C writer write evs as one chunk, as a full half
// would be; false when it handed them back (not armed, or a case for Go).
// For tests.
func cWriterWrite(evs []C.gclock_event) bool {
	return len(evs) > 0 && C.gclock_cw_write_test(&evs[0], C.uint32_t(len(evs))) == 1
}

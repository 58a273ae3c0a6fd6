package main

/*
#include <stdlib.h>
#include "encode.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gclock/gclock/trace"
)

// cColumns encodes one buffer half's records into the columns of a chunk
// with the C encoder (cshim/encode.c). The result aliases the encoder's
// memory: it is valid until the next call, and callers serialise (r.mu).
func cColumns(evs []C.gclock_event) (trace.Columns, error) {
	if len(evs) == 0 {
		return trace.Columns{}, nil
	}
	if len(evs) > trace.MaxChunkEvents {
		return trace.Columns{}, fmt.Errorf("chunk of %d events exceeds %d", len(evs), trace.MaxChunkEvents)
	}
	var out C.gclock_enc_out
	if C.gclock_encode_columns(&evs[0], C.uint32_t(len(evs)), &out) != 0 {
		return trace.Columns{}, errors.New("chunk encoder: out of memory")
	}
	bytesAt := func(p *C.uint8_t, n C.size_t) []byte {
		if n == 0 {
			return nil // an all-zero column is stored empty
		}
		return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
	}
	col := func(i int) []byte { return bytesAt(out.col[i], out.len[i]) }
	var sites []uint64
	if out.nsites > 0 {
		sites = unsafe.Slice((*uint64)(unsafe.Pointer(out.sites)), int(out.nsites))
	}
	// A thread's records are in call order, so their entry times rise
	// (docs/explanation/recorder.md "Threads"), with one exception: a half that filled
	// inside a call with several records (MPI_Waitall's completions) starts
	// with the gclock_flush record of that pause, and the call's remaining
	// records, which entered earlier, follow it. So the earliest entry is
	// the first record's or one of those right after it.
	first := int64(evs[0].enter_ns)
	for i := 1; i < len(evs) && int64(evs[i].enter_ns) < int64(evs[0].enter_ns); i++ {
		first = min(first, int64(evs[i].enter_ns))
	}
	last := int64(evs[len(evs)-1].enter_ns)
	return trace.Columns{
		N: int(out.n), Calls: int(out.calls),
		Seq: col(C.GCK_ENC_SEQ), Enter: col(C.GCK_ENC_ENTER), Dur: col(C.GCK_ENC_DUR),
		Req: col(C.GCK_ENC_REQ), Tmpl: col(C.GCK_ENC_TMPL), TW: col(C.GCK_ENC_TW),
		Templates: bytesAt(out.templates, out.templates_len), Sites: sites,
		First: first, Last: max(first, last), Spanned: out.n > 0,
	}, nil
}

// encodePrepare sizes the C encoder's workspace for n events and touches
// it (gclock_encode_prepare). Callers serialise (r.mu).
func encodePrepare(n int) error {
	if C.gclock_encode_prepare(C.uint32_t(n)) != 0 {
		return errors.New("chunk encoder: out of memory")
	}
	return nil
}

// standInRecords returns n records shaped like a loop's calls (one op,
// times 1 µs apart with some jitter), in C memory; free with the returned
// function. For prepareFlush.
func standInRecords(n int) ([]C.gclock_event, func()) {
	p := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.gclock_event{})))
	if p == nil || n <= 0 {
		C.free(p)
		return nil, func() {}
	}
	recs := unsafe.Slice((*C.gclock_event)(p), n)
	for i := range recs {
		enter := int64(i)*1000 + int64(i*7919%211)
		recs[i].enter_ns = C.int64_t(enter)
		recs[i].exit_ns = C.int64_t(enter + 300 + int64(i*104729%257))
		recs[i].seq = C.uint32_t(i)
		recs[i].root = -1
		recs[i].op = C.uint16_t(trace.OpBarrier)
	}
	return recs, func() { C.free(p) }
}

// cRecords lays events out as the shim's 72-byte records, in C memory
// (free with the returned function): what a buffer half holds. For tests
// of the C encoder against trace.EncodeColumns.
func cRecords(evs []trace.Event) ([]C.gclock_event, func()) {
	if len(evs) == 0 {
		return nil, func() {}
	}
	p := C.calloc(C.size_t(len(evs)), C.size_t(unsafe.Sizeof(C.gclock_event{})))
	recs := unsafe.Slice((*C.gclock_event)(p), len(evs))
	for i, e := range evs {
		r := &recs[i]
		r.enter_ns = C.int64_t(e.EnterNS)
		r.exit_ns = C.int64_t(e.ExitNS)
		r.sent = C.uint64_t(e.Sent)
		r.recv = C.uint64_t(e.Recv)
		r.callsite = C.uint64_t(e.Callsite)
		r.comm = C.uint32_t(e.Comm)
		r.seq = C.uint32_t(e.Seq)
		r.root = C.int32_t(e.Root)
		r.op = C.uint16_t(e.Op)
		r.peer = C.int32_t(e.Peer)
		r.tag = C.int32_t(e.Tag)
		r.req = C.uint32_t(e.Req)
	}
	return recs, func() { C.free(p) }
}

// stampRecords sets the fields of recs that are no part of an event
// (flags, reserved; pad, the half's generation) to values derived from
// each record's index and salt (tests: the encoder must ignore them).
func stampRecords(recs []C.gclock_event, salt uint32) {
	for i := range recs {
		v := uint32(i)*0x9E3779B1 ^ salt
		recs[i].flags = C.uint16_t(v>>16 | 1)
		recs[i].pad = C.uint32_t(v | 1)
	}
}

// encodeWithC runs cRecords and cColumns over evs and returns copies of
// the columns (tests).
func encodeWithC(evs []trace.Event) (trace.Columns, error) {
	recs, free := cRecords(evs)
	defer free()
	c, err := cColumns(recs)
	if err != nil {
		return c, err
	}
	cp := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		return append([]byte{}, b...)
	}
	return trace.Columns{
		N: c.N, Calls: c.Calls,
		Seq: cp(c.Seq), Enter: cp(c.Enter), Dur: cp(c.Dur), Req: cp(c.Req), Tmpl: cp(c.Tmpl), TW: cp(c.TW),
		Templates: cp(c.Templates), Sites: append([]uint64(nil), c.Sites...),
		First: c.First, Last: c.Last, Spanned: c.Spanned,
	}, nil
}

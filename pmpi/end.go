package main

/*
#include "gclock.h"
*/
import "C"

import "github.com/gclock/gclock/trace"

// endOfProcess is how the process ended as the C shim recorded it
// (cshim/buffers.c gclock_end_record: MPI_Abort's errorcode and call site,
// exit()'s status), for the footer; nil when nothing was recorded (an
// MPI_Finalize). docs/guide/crash-hang.md.
func endOfProcess() *trace.End {
	var e C.gclock_live_end
	if C.gclock_end_get(&e) == 0 {
		return nil
	}
	out := &trace.End{Code: int32(e.code), SigCode: int32(e.si_code), Addr: uint64(e.addr),
		Site: uint64(e.callsite), NS: int64(e.t), Pid: int32(e.pid), Tid: int32(e.tid), Thread: -1}
	if e.thread != C.UINT32_MAX {
		out.Thread = int32(e.thread)
	}
	switch e.kind {
	case C.GCK_END_ABORT:
		out.Kind = trace.EndAbort
	case C.GCK_END_SIGNAL:
		out.Kind = trace.EndSignal
	case C.GCK_END_EXIT:
		out.Kind = trace.EndExit
	default:
		return nil
	}
	return out
}

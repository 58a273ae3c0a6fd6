//go:build cgo

package mpirt

/*
#cgo CFLAGS: -I${SRCDIR}/../cshim -std=gnu11 -O2 -Wall -Wextra
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "mpidl.h"
#include "../cshim/mpidl.c"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

func (w *World) loop(lib string, errc chan<- error) {
	runtime.LockOSThread() // MPI_THREAD_FUNNELED: every call on this thread
	var clib *C.char
	if lib != "" {
		clib = C.CString(lib)
		defer C.free(unsafe.Pointer(clib))
	}
	var msg [512]C.char
	if C.gck_mpidl_open(clib, &msg[0], C.size_t(len(msg))) != 0 {
		errc <- fmt.Errorf("%w: %s", ErrUnavailable, C.GoString(&msg[0]))
		return
	}
	var rank, size C.int
	if rc := C.gck_mpidl_init(&rank, &size); rc != 0 {
		errc <- fmt.Errorf("mpirt: MPI_Init_thread: error %d", int(rc))
		return
	}
	w.Rank, w.Size, w.Impl = int(rank), int(size), C.GoString(C.gck_mpidl_impl())
	errc <- nil
	for fn := range w.calls {
		fn()
	}
}

func bufPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func send(b []byte, dest, tag int) int {
	return int(C.gck_mpidl_send(bufPtr(b), C.int(len(b)), C.int(dest), C.int(tag)))
}

func recv(b []byte, src, tag int) int {
	return int(C.gck_mpidl_recv(bufPtr(b), C.int(len(b)), C.int(src), C.int(tag)))
}

func iprobe(src, tag int) (bool, int) {
	var flag C.int
	rc := C.gck_mpidl_iprobe(C.int(src), C.int(tag), &flag)
	return flag != 0, int(rc)
}

func isend(b []byte, dest, tag int) int {
	return int(C.gck_mpidl_isend(bufPtr(b), C.int(len(b)), C.int(dest), C.int(tag)))
}

func test() (bool, int) {
	var flag C.int
	rc := C.gck_mpidl_test(&flag)
	return flag != 0, int(rc)
}

func finalize() int { return int(C.gck_mpidl_finalize()) }

func abort(code int) { C.gck_mpidl_abort(C.int(code)) }

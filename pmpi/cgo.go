package main

// The include path falls back to Debian's default-MPI header directory so
// `go build ./...` and `go vet ./...` work without the Makefile; `make`
// (and `make MPI=mpich`) put the chosen implementation's -I first via
// CGO_CFLAGS. libmpi is never linked: see cshim/gclock.h.

/*
#cgo CFLAGS: -I${SRCDIR}/../cshim -I/usr/include/x86_64-linux-gnu/mpi -std=gnu11 -O2
#cgo LDFLAGS: -lm -L${SRCDIR}/../build -lgclock -Wl,-rpath,${SRCDIR}/../build
#include <stdlib.h>
#include "gclock.h"
void gclock_go_register_all(void);
*/
import "C"

import "runtime"

// The C library (libgclock.so, the preloaded part) calls into Go through
// the entry points registered here, when it has loaded this library at
// MPI_Init (cshim/gobridge.c), or at once when linked with it (tests).
//
// GOMAXPROCS is capped at 2: the recorder's Go code runs on the calling
// thread (and one background writer at most), while every P may get a
// thread of its own (the garbage collector's idle workers run on idle Ps),
// and a rank bound to a socket or not bound at all would otherwise add a
// thread per core of it to the user's thread count (ulimit -u).
func init() {
	if runtime.GOMAXPROCS(0) > 2 {
		runtime.GOMAXPROCS(2)
	}
	C.gclock_go_register_all()
}

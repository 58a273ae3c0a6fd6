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

// The C library (libgclock.so, the preloaded part) calls into Go through
// the entry points registered here, when it has loaded this library at
// MPI_Init (cshim/gobridge.c), or at once when linked with it (tests).
func init() { C.gclock_go_register_all() }

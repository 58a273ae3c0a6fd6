package main

// The include path falls back to Debian's default-MPI header directory so
// `go build ./...` and `go vet ./...` work without the Makefile; `make`
// (and `make MPI=mpich`) put the chosen implementation's -I first via
// CGO_CFLAGS. libmpi is never linked: see cshim/gclock.h.

/*
#cgo CFLAGS: -I${SRCDIR}/../cshim -I/usr/include/x86_64-linux-gnu/mpi -std=gnu11 -O2
#cgo LDFLAGS: -lm
#include <stdlib.h>
#include "gclock.h"
*/
import "C"

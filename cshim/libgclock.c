/* libgclock.c: the preloaded library, libgclock.so, built from this one
 * translation unit (the Makefile; C only). The recorder's Go half,
 * libgclock-go.so (package pmpi), is loaded by gobridge.c at MPI_Init. */
#define _GNU_SOURCE /* before any system header (dl_iterate_phdr, RTLD_DEFAULT) */
#include "pmpi_gen.c" /* first: must not see pmpi_gen.h's macros */
#include "resolve.c"
#include "shim.c"
#include "timer.c"
#include "buffers.c"
#include "comms.c"
#include "lifecycle.c"
#include "goside.c"
#include "wrappers_gen.c"
#include "polls.c"
#include "fortran.c"
#include "fortran_gen.c"
#include "pingpong.c"
#include "flush.c"
#include "encode.c"
#include "cwrite.c"
#include "typesize.c"
#include "gobridge.c"

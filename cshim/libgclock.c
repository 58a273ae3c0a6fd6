/* libgclock.c: the preloaded library, libgclock.so, built from this one
 * translation unit (the Makefile; C only). The recorder's Go half,
 * libgclock-go.so (package pmpi), is loaded by gobridge.c at MPI_Init.
 *
 * Headers only declare; each .c file below defines. The hot path's helpers
 * are static inline functions defined in .c files (hotpath.c, bytes.c,
 * reqtable.c, requests.c, p2p_rules.c, rma.c, and the Fortran conversions
 * in fortran.c) and declared in the header of the same name, so every file
 * of this one unit can call them and the compiler inlines them as if they
 * were written in place. They are included where their bodies stood when
 * they were in headers (hotpath.c and bytes.c first, the request and rule
 * files right before wrappers_gen.c): the compiler's inlining choices, and
 * so the machine code, are the same as before the split.
 * docs/explanation/cshim.md draws the files and what includes what. */
#define _GNU_SOURCE /* before any system header (dl_iterate_phdr, RTLD_DEFAULT) */
#include "pmpi_gen.c" /* first: must not see pmpi_gen.h's macros */
#include "hotpath.c"
#include "bytes.c"
#include "resolve.c"
#include "shim.c"
#include "timer.c"
#include "buffers.c"
#include "comms.c"
#include "lifecycle.c"
#include "goside.c"
#include "reqtable.c"
#include "requests.c"
#include "p2p_rules.c"
#include "rma.c"
#include "wrappers_gen.c"
#include "polls.c"
#include "reqscan.c"
#include "fortran.c"
#include "fortran_gen.c"
#include "pingpong.c"
#include "flush.c"
#include "encode.c"
#include "cwrite.c"
#include "typesize.c"
#include "gobridge.c"

/* The C shim lives in cshim/; cgo compiles only C files in the package
 * directory, so this unity file pulls it in. The Makefile passes a hash of
 * cshim/ in CGO_CFLAGS so Go's build cache notices edits there. */
#define _GNU_SOURCE /* before any system header (dl_iterate_phdr, RTLD_DEFAULT) */
#include "../cshim/pmpi_gen.c" /* first: must not see pmpi_gen.h's macros */
#include "../cshim/resolve.c"
#include "../cshim/shim.c"
#include "../cshim/timer.c"
#include "../cshim/buffers.c"
#include "../cshim/comms.c"
#include "../cshim/lifecycle.c"
#include "../cshim/goside.c"
#include "../cshim/wrappers_gen.c"
#include "../cshim/polls.c"
#include "../cshim/fortran.c"
#include "../cshim/fortran_gen.c"
#include "../cshim/pingpong.c"
#include "../cshim/flush.c"
#include "../cshim/encode.c"
#include "../cshim/typesize.c"

/* The C shim lives in cshim/; cgo compiles only C files in the package
 * directory, so this unity file pulls it in. The Makefile passes a hash of
 * cshim/ in CGO_CFLAGS so Go's build cache notices edits there. */
#include "../cshim/shim.c"
#include "../cshim/wrappers_gen.c"
#include "../cshim/pingpong.c"
#include "../cshim/flush.c"

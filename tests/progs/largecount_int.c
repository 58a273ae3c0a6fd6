/* progs/largecount.c with the int-count calls on every MPI
 * (tests/largecount_test.go compares the two traces). */
#define GCK_INT_ONLY 1
#include "largecount.c"

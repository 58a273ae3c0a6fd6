/*
 * typesize.c: the datatype size cache of bytes.h's gclock_type_size on MPIs
 * whose handles are pointers (Open MPI). Off the hot path: reached once per
 * predefined datatype and slot, and for every call with a derived one.
 */
#include "typesize.h"
#include "pmpi_gen.h" /* PMPI_Type_size, PMPI_Type_get_envelope */

uint64_t gclock_tsz[GCK_TSZ_SLOTS] = {[0 ... GCK_TSZ_SLOTS - 1] = GCK_TSZ_FREE};

int gclock_tsize_miss(MPI_Datatype type)
{
	int sz = 0;
	if (PMPI_Type_size(type, &sz) != MPI_SUCCESS || sz < 0)
		return -1;
	uintptr_t h = (uintptr_t)type;
	if (h == 0 || (h >> 48) != 0) /* not a user-space pointer: not cached */
		return sz;
	uint64_t *slot = &gclock_tsz[gclock_tsz_slot(h)];
	uint64_t w = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if ((w >> 16) == GCK_TSZ_ASK_KEY(h)) /* entered to be asked */
		return sz;
	int ni = 0, na = 0, nd = 0, comb = -1;
	uint64_t word = GCK_TSZ_ASK_KEY(h) << 16 | GCK_TSZ_ASK;
	if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb == MPI_COMBINER_NAMED &&
	    sz < (int)GCK_TSZ_ASK)
		word = (uint64_t)h << 16 | (uint64_t)sz;
	__atomic_store_n(slot, word, __ATOMIC_RELAXED);
	return sz;
}

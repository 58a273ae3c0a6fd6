/*
 * typesize.h: what a datatype's size costs least: read from a builtin
 * handle (MPICH family), or from the cache by handle (Open MPI) that
 * typesize.c fills. Declarations and two pure inline helpers (they read
 * only their argument); bytes.c's gclock_type_size uses them.
 */
#ifndef GCK_TYPESIZE_H
#define GCK_TYPESIZE_H

#include <stdint.h>
#include <mpi.h>

/* The library's own, like gclock.h's declarations: hidden. */
#pragma GCC visibility push(hidden)

/* gclock_builtin_size returns a builtin datatype's size read from its
 * handle on MPICH-family MPIs, -1 elsewhere and for every other handle.
 * There a builtin datatype's handle is 0x4c00SSII: kind builtin (bits
 * 30-31 = 01), object datatype (bits 26-29 = 0011), size SS in bytes,
 * index II (the constants in mpi.h; MPICH's MPIR_Datatype_get_basic_size
 * reads it the same way; Intel MPI, MVAPICH and Cray MPICH share the
 * encoding). Saves the PMPI_Type_size call on every send and receive.
 * tests/typesize_test.go checks it against PMPI_Type_size for every
 * datatype constant of MPICH's mpi.h. */
static inline int gclock_builtin_size(MPI_Datatype type)
{
#if defined(MPICH) && !defined(OPEN_MPI)
	/* Only where handles are ints (not under an ABI whose handles are
	 * pointers: there the encoding does not hold). */
	const int int_handles = _Generic((MPI_Datatype)0, int: 1, default: 0);
	unsigned h = (unsigned)(uintptr_t)type;
	if (int_handles && (h & 0xfc000000u) == 0x4c000000u && (h & 0xff00u) != 0)
		return (int)((h >> 8) & 0xffu);
#else
	(void)type;
#endif
	return -1;
}

/* Where handles are pointers (Open MPI), the sizes of predefined datatypes
 * are cached by handle: gclock_tsz[] holds words handle << 16 | size, one
 * per slot, read and written whole (relaxed atomics: threads only ever
 * store correct words). Only datatypes MPI_Type_get_envelope calls
 * MPI_COMBINER_NAMED get a size there: they are static objects that live
 * as long as MPI and never change. Any other handle is entered as
 * GCK_TSZ_ASK_KEY(handle) << 16 ("call PMPI_Type_size"), a key no handle
 * has (handles are aligned, the key is odd), so a derived datatype that is
 * freed and whose memory is reused by another one is always asked again,
 * and a miss costs its two calls once. A slot nothing entered holds
 * GCK_TSZ_FREE, whose key no handle has either: the hit is one compare of
 * the key (gclock_type_size), no check of the size or of an empty slot. Saves the PMPI_Type_size call (≈ 45
 * instructions with Open MPI's parameter checks) on every send, receive
 * and collective with a predefined datatype. tests/typesize_test.go
 * compares the recorded bytes with MPI_Type_size for every datatype
 * constant of the MPI's mpi.h and for derived datatypes freed and
 * re-created at one address. */
#define GCK_TSZ_BITS 6
#define GCK_TSZ_SLOTS (1u << GCK_TSZ_BITS)
#define GCK_TSZ_ASK 0xffffu
#define GCK_TSZ_ASK_KEY(h) ((uint64_t)(h) ^ 1u)
#define GCK_TSZ_FREE (~(uint64_t)0)
extern uint64_t gclock_tsz[GCK_TSZ_SLOTS];

static inline uint32_t gclock_tsz_slot(uintptr_t h)
{
	return (uint32_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - GCK_TSZ_BITS));
}

/* gclock_tsize_miss returns type's size from PMPI_Type_size (-1 on error)
 * and enters the handle in gclock_tsz (typesize.c). */
int gclock_tsize_miss(MPI_Datatype type);

#pragma GCC visibility pop

#endif

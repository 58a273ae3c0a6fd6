/*
 * Byte-count rules, one per rule name used in cshim/collectives.tbl.
 *
 * Sent counts the payload bytes the collective reads from this rank's
 * buffers for delivery (to others or itself); Recv counts the bytes it
 * writes into this rank's receive buffer. A block that stays in place
 * (MPI_IN_PLACE) is neither sent nor received; an in-place reduction input
 * is still read and combined, so it counts as sent. Only arguments
 * significant at this rank are looked at (a non-root's recvtype may be
 * MPI_DATATYPE_NULL), and a zero count never queries its datatype.
 * Intercommunicators record 0/0 (see docs/explanation/recorder.md).
 *
 * Every rule has the signature (cs, &sent, &recv, <table arguments>).
 */
#ifndef GCK_BYTES_H
#define GCK_BYTES_H

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
 * as long as MPI and never change. Any other handle is entered with
 * GCK_TSZ_ASK ("call PMPI_Type_size"), so a derived datatype that is freed
 * and whose memory is reused by another one is always asked again, and a
 * miss costs its two calls once. Saves the PMPI_Type_size call (≈ 45
 * instructions with Open MPI's parameter checks) on every send, receive
 * and collective with a predefined datatype. tests/typesize_test.go
 * compares the recorded bytes with MPI_Type_size for every datatype
 * constant of the MPI's mpi.h and for derived datatypes freed and
 * re-created at one address. */
#define GCK_TSZ_BITS 6
#define GCK_TSZ_SLOTS (1u << GCK_TSZ_BITS)
#define GCK_TSZ_ASK 0xffffu
extern uint64_t gclock_tsz[GCK_TSZ_SLOTS];

static inline uint32_t gclock_tsz_slot(uintptr_t h)
{
	return (uint32_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - GCK_TSZ_BITS));
}

/* gclock_tsize_miss returns type's size from PMPI_Type_size (-1 on error)
 * and enters the handle in gclock_tsz (typesize.c). */
int gclock_tsize_miss(MPI_Datatype type);

/* gclock_type_size returns type's size in bytes, -1 when MPI reports an
 * error. */
static GCK_INLINE int gclock_type_size(MPI_Datatype type)
{
	int b = gclock_builtin_size(type);
	if (b > 0)
		return b;
#if defined(OPEN_MPI)
	const int ptr_handles = _Generic((MPI_Datatype)0, int: 0, default: 1);
	if (ptr_handles) {
		uintptr_t h = (uintptr_t)type;
		uint64_t w = __atomic_load_n(&gclock_tsz[gclock_tsz_slot(h)], __ATOMIC_RELAXED);
		if (w != 0 && (w >> 16) == (uint64_t)h && (w & 0xffffu) != GCK_TSZ_ASK)
			return (int)(w & 0xffffu);
		return gclock_tsize_miss(type);
	}
#endif
	int sz = 0;
	if (PMPI_Type_size(type, &sz) != MPI_SUCCESS || sz < 0)
		return -1;
	return sz;
}

/* gclock_tsize returns count*size(type), 0 for count <= 0. */
static GCK_INLINE uint64_t gclock_tsize(MPI_Count count, MPI_Datatype type)
{
	if (count <= 0)
		return 0;
	int sz = gclock_type_size(type);
	return sz > 0 ? (uint64_t)count * (uint64_t)sz : 0;
}

/* A count array of an MPI-3 call (int) or of an MPI-4 large-count one
 * (MPI_Count): the rules that take arrays are called through macros that
 * wrap the argument with GCK_COUNTS, so one rule serves both (the int twin
 * and its `_c` variant, cshim/largecount.tbl). */
typedef struct gclock_counts {
	const int *i;       /* int counts, or NULL */
	const MPI_Count *c; /* MPI_Count counts when i is NULL */
} gclock_counts;

static inline gclock_counts gclock_counts_int(const int *p) { return (gclock_counts){p, NULL}; }
static inline gclock_counts gclock_counts_big(const MPI_Count *p) { return (gclock_counts){NULL, p}; }
#define GCK_COUNTS(p)                                                                  \
	_Generic((p), int *: gclock_counts_int, const int *: gclock_counts_int,          \
		 MPI_Count *: gclock_counts_big, const MPI_Count *: gclock_counts_big)(p)

/* gclock_at returns counts[i]. */
static inline MPI_Count gclock_at(gclock_counts counts, int i)
{
	return counts.i != NULL ? (MPI_Count)counts.i[i] : counts.c[i];
}

static inline uint64_t gclock_sum(gclock_counts counts, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++) {
		MPI_Count v = gclock_at(counts, i);
		if (v > 0)
			s += (uint64_t)v;
	}
	return s;
}

static inline uint64_t gclock_vsize(gclock_counts counts, int n, MPI_Datatype type)
{
	uint64_t c = gclock_sum(counts, n);
	if (c == 0)
		return 0;
	return c * gclock_tsize(1, type);
}

static inline uint64_t gclock_cnt(MPI_Count count)
{
	return count > 0 ? (uint64_t)count : 0;
}

#define GCK_RULE(name, ...)                                                  \
	static inline void gclock_bytes_##name(const gclock_comm_slot *cs,      \
					       uint64_t *sent, uint64_t *recv, \
					       __VA_ARGS__)

static inline void gclock_bytes_none(const gclock_comm_slot *cs, uint64_t *sent,
				     uint64_t *recv)
{
	(void)cs;
	*sent = 0;
	*recv = 0;
}

GCK_RULE(bcast, MPI_Count count, MPI_Datatype type, int root)
{
	uint64_t b = cs->inter ? 0 : gclock_tsize(count, type);
	if (cs->rank == root)
		*sent = b;
	else
		*recv = b;
}

GCK_RULE(reduce, MPI_Count count, MPI_Datatype type, int root)
{
	if (cs->inter)
		return;
	uint64_t b = gclock_tsize(count, type);
	*sent = b;
	if (cs->rank == root)
		*recv = b;
}

GCK_RULE(allreduce, MPI_Count count, MPI_Datatype type)
{
	if (cs->inter)
		return;
	*sent = *recv = gclock_tsize(count, type);
}

GCK_RULE(exscan, MPI_Count count, MPI_Datatype type)
{
	uint64_t b = gclock_tsize(count, type);
	*sent = b;
	*recv = cs->rank == 0 ? 0 : b;
}

GCK_RULE(reduce_scatter, gclock_counts rcounts, MPI_Datatype type)
{
	if (cs->inter)
		return;
	uint64_t t = gclock_tsize(1, type);
	*sent = gclock_sum(rcounts, cs->size) * t;
	*recv = gclock_cnt(gclock_at(rcounts, cs->rank)) * t;
}

GCK_RULE(reduce_scatter_block, MPI_Count rcount, MPI_Datatype type)
{
	if (cs->inter)
		return;
	uint64_t b = gclock_tsize(rcount, type);
	*sent = b * (uint64_t)cs->size;
	*recv = b;
}

GCK_RULE(gather, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    MPI_Count rcount, MPI_Datatype rtype, int root)
{
	if (cs->inter)
		return;
	if (cs->rank != root) {
		*sent = gclock_tsize(scount, stype);
		return;
	}
	uint64_t blk = gclock_tsize(rcount, rtype);
	if (sendbuf == MPI_IN_PLACE) {
		*recv = blk * (uint64_t)(cs->size - 1);
	} else {
		*sent = gclock_tsize(scount, stype);
		*recv = blk * (uint64_t)cs->size;
	}
}

GCK_RULE(gatherv, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    gclock_counts rcounts, MPI_Datatype rtype, int root)
{
	if (cs->inter)
		return;
	if (cs->rank != root) {
		*sent = gclock_tsize(scount, stype);
		return;
	}
	uint64_t c = gclock_sum(rcounts, cs->size);
	if (sendbuf == MPI_IN_PLACE)
		c -= gclock_cnt(gclock_at(rcounts, cs->rank));
	else
		*sent = gclock_tsize(scount, stype);
	*recv = c ? c * gclock_tsize(1, rtype) : 0;
}

GCK_RULE(scatter, MPI_Count scount, MPI_Datatype stype, const void *recvbuf,
	    MPI_Count rcount, MPI_Datatype rtype, int root)
{
	if (cs->inter)
		return;
	if (cs->rank != root) {
		*recv = gclock_tsize(rcount, rtype);
		return;
	}
	uint64_t blk = gclock_tsize(scount, stype);
	if (recvbuf == MPI_IN_PLACE) {
		*sent = blk * (uint64_t)(cs->size - 1);
	} else {
		*sent = blk * (uint64_t)cs->size;
		*recv = gclock_tsize(rcount, rtype);
	}
}

GCK_RULE(scatterv, gclock_counts scounts, MPI_Datatype stype,
	    const void *recvbuf, MPI_Count rcount, MPI_Datatype rtype, int root)
{
	if (cs->inter)
		return;
	if (cs->rank != root) {
		*recv = gclock_tsize(rcount, rtype);
		return;
	}
	uint64_t c = gclock_sum(scounts, cs->size);
	if (recvbuf == MPI_IN_PLACE)
		c -= gclock_cnt(gclock_at(scounts, cs->rank));
	else
		*recv = gclock_tsize(rcount, rtype);
	*sent = c ? c * gclock_tsize(1, stype) : 0;
}

GCK_RULE(allgather, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    MPI_Count rcount, MPI_Datatype rtype)
{
	if (cs->inter)
		return;
	uint64_t blk = gclock_tsize(rcount, rtype);
	if (sendbuf == MPI_IN_PLACE) {
		*sent = blk;
		*recv = blk * (uint64_t)(cs->size - 1);
	} else {
		*sent = gclock_tsize(scount, stype);
		*recv = blk * (uint64_t)cs->size;
	}
}

GCK_RULE(allgatherv, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    gclock_counts rcounts, MPI_Datatype rtype)
{
	if (cs->inter)
		return;
	uint64_t c = gclock_sum(rcounts, cs->size);
	uint64_t t = c ? gclock_tsize(1, rtype) : 0;
	if (sendbuf == MPI_IN_PLACE) {
		uint64_t own = gclock_cnt(gclock_at(rcounts, cs->rank));
		*sent = own * t;
		*recv = (c - own) * t;
	} else {
		*sent = gclock_tsize(scount, stype);
		*recv = c * t;
	}
}

GCK_RULE(alltoall, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    MPI_Count rcount, MPI_Datatype rtype)
{
	if (cs->inter)
		return;
	uint64_t blk = gclock_tsize(rcount, rtype);
	if (sendbuf == MPI_IN_PLACE) {
		*sent = *recv = blk * (uint64_t)(cs->size - 1);
	} else {
		*sent = gclock_tsize(scount, stype) * (uint64_t)cs->size;
		*recv = blk * (uint64_t)cs->size;
	}
}

GCK_RULE(alltoallv, const void *sendbuf, gclock_counts scounts,
	    MPI_Datatype stype, gclock_counts rcounts, MPI_Datatype rtype)
{
	if (cs->inter)
		return;
	uint64_t rc = gclock_sum(rcounts, cs->size);
	if (sendbuf == MPI_IN_PLACE) {
		rc -= gclock_cnt(gclock_at(rcounts, cs->rank));
		*sent = *recv = rc ? rc * gclock_tsize(1, rtype) : 0;
	} else {
		*sent = gclock_vsize(scounts, cs->size, stype);
		*recv = rc ? rc * gclock_tsize(1, rtype) : 0;
	}
}

/* Alltoallw: per-peer datatypes; consecutive equal types reuse the size. */
static inline uint64_t gclock_wsize(gclock_counts counts, const MPI_Datatype types[],
				    int n, int skip)
{
	uint64_t total = 0;
	MPI_Datatype last = types[0]; /* compared only once have != 0 */
	uint64_t lastsz = 0;
	int have = 0;
	for (int i = 0; i < n; i++) {
		MPI_Count v = gclock_at(counts, i);
		if (i == skip || v <= 0)
			continue;
		if (!have || types[i] != last) {
			last = types[i];
			lastsz = gclock_tsize(1, last);
			have = 1;
		}
		total += (uint64_t)v * lastsz;
	}
	return total;
}

GCK_RULE(alltoallw, const void *sendbuf, gclock_counts scounts,
	    const MPI_Datatype stypes[], gclock_counts rcounts,
	    const MPI_Datatype rtypes[])
{
	if (cs->inter)
		return;
	if (sendbuf == MPI_IN_PLACE) {
		*sent = *recv = gclock_wsize(rcounts, rtypes, cs->size, cs->rank);
	} else {
		*sent = gclock_wsize(scounts, stypes, cs->size, -1);
		*recv = gclock_wsize(rcounts, rtypes, cs->size, -1);
	}
}

/* Neighbourhood collectives: one block per neighbour (cs->indeg sources,
 * cs->outdeg destinations; a Cartesian topology's MPI_PROC_NULL
 * neighbours are counted like the others). */
GCK_RULE(neighbor_allgather, MPI_Count scount, MPI_Datatype stype, MPI_Count rcount, MPI_Datatype rtype)
{
	*sent = gclock_tsize(scount, stype) * (uint64_t)(cs->outdeg > 0 ? cs->outdeg : 0);
	*recv = gclock_tsize(rcount, rtype) * (uint64_t)(cs->indeg > 0 ? cs->indeg : 0);
}

GCK_RULE(neighbor_allgatherv, MPI_Count scount, MPI_Datatype stype, gclock_counts rcounts, MPI_Datatype rtype)
{
	*sent = gclock_tsize(scount, stype) * (uint64_t)(cs->outdeg > 0 ? cs->outdeg : 0);
	*recv = cs->indeg > 0 ? gclock_vsize(rcounts, cs->indeg, rtype) : 0;
}

GCK_RULE(neighbor_alltoallv, gclock_counts scounts, MPI_Datatype stype, gclock_counts rcounts,
	 MPI_Datatype rtype)
{
	*sent = cs->outdeg > 0 ? gclock_vsize(scounts, cs->outdeg, stype) : 0;
	*recv = cs->indeg > 0 ? gclock_vsize(rcounts, cs->indeg, rtype) : 0;
}

GCK_RULE(neighbor_alltoallw, gclock_counts scounts, const MPI_Datatype stypes[], gclock_counts rcounts,
	 const MPI_Datatype rtypes[])
{
	*sent = cs->outdeg > 0 ? gclock_wsize(scounts, stypes, cs->outdeg, -1) : 0;
	*recv = cs->indeg > 0 ? gclock_wsize(rcounts, rtypes, cs->indeg, -1) : 0;
}

/* The array rules' call macros (GCK_COUNTS: int or MPI_Count arrays). */
#define gclock_bytes_reduce_scatter(cs, s, r, rc, t) (gclock_bytes_reduce_scatter)(cs, s, r, GCK_COUNTS(rc), t)
#define gclock_bytes_gatherv(cs, s, r, sb, sc, st, rc, rt, root)                                     \
	(gclock_bytes_gatherv)(cs, s, r, sb, sc, st, GCK_COUNTS(rc), rt, root)
#define gclock_bytes_scatterv(cs, s, r, sc, st, rb, rc, rt, root)                                    \
	(gclock_bytes_scatterv)(cs, s, r, GCK_COUNTS(sc), st, rb, rc, rt, root)
#define gclock_bytes_allgatherv(cs, s, r, sb, sc, st, rc, rt)                                        \
	(gclock_bytes_allgatherv)(cs, s, r, sb, sc, st, GCK_COUNTS(rc), rt)
#define gclock_bytes_alltoallv(cs, s, r, sb, sc, st, rc, rt)                                         \
	(gclock_bytes_alltoallv)(cs, s, r, sb, GCK_COUNTS(sc), st, GCK_COUNTS(rc), rt)
#define gclock_bytes_alltoallw(cs, s, r, sb, sc, st, rc, rt)                                         \
	(gclock_bytes_alltoallw)(cs, s, r, sb, GCK_COUNTS(sc), st, GCK_COUNTS(rc), rt)
#define gclock_bytes_neighbor_allgatherv(cs, s, r, sc, st, rc, rt)                                   \
	(gclock_bytes_neighbor_allgatherv)(cs, s, r, sc, st, GCK_COUNTS(rc), rt)
#define gclock_bytes_neighbor_alltoallw(cs, s, r, sc, st, rc, rt)                                    \
	(gclock_bytes_neighbor_alltoallw)(cs, s, r, GCK_COUNTS(sc), st, GCK_COUNTS(rc), rt)
#define gclock_bytes_neighbor_alltoallv(cs, s, r, sc, st, rc, rt)                                    \
	(gclock_bytes_neighbor_alltoallv)(cs, s, r, GCK_COUNTS(sc), st, GCK_COUNTS(rc), rt)

#endif

/*
 * bytes.c: the byte-count rules of the collective wrappers (declared, with
 * what each counts, in bytes.h) and the datatype sizes they read. Hot
 * path; static inline, compiled into libgclock.c before wrappers_gen.c.
 */
#include "bytes.h"
#include "typesize.h"

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
		/* a hit: only a named datatype's own key matches (typesize.h) */
		if (GCK_LIKELY((w >> 16) == (uint64_t)h))
			return (int)(w & 0xffffu);
		return gclock_tsize_miss(type);
	}
#endif
	int sz = 0;
	if (PMPI_Type_size(type, &sz) != MPI_SUCCESS || sz < 0)
		return -1;
	return sz;
}

static GCK_INLINE uint64_t gclock_tsize(MPI_Count count, MPI_Datatype type)
{
	if (count <= 0)
		return 0;
	int sz = gclock_type_size(type);
	return sz > 0 ? (uint64_t)count * (uint64_t)sz : 0;
}


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

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
 *
 * This header declares; the definitions are in bytes.c (static inline
 * functions, compiled in the one translation unit cshim/libgclock.c;
 * docs/explanation/cshim.md).
 */
#ifndef GCK_BYTES_H
#define GCK_BYTES_H

#include "gclock.h"

/* gclock_type_size returns type's size in bytes, -1 when MPI reports an
 * error. */
static GCK_INLINE int gclock_type_size(MPI_Datatype type);

/* gclock_tsize returns count*size(type), 0 for count <= 0. */
static GCK_INLINE uint64_t gclock_tsize(MPI_Count count, MPI_Datatype type);

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

#define GCK_RULE(name, ...)                                                  \
	static inline void(gclock_bytes_##name)(const gclock_comm_slot *cs,      \
					       uint64_t *sent, uint64_t *recv, \
					       __VA_ARGS__)

static inline void gclock_bytes_none(const gclock_comm_slot *cs, uint64_t *sent,
				     uint64_t *recv);

GCK_RULE(bcast, MPI_Count count, MPI_Datatype type, int root);

GCK_RULE(reduce, MPI_Count count, MPI_Datatype type, int root);

GCK_RULE(allreduce, MPI_Count count, MPI_Datatype type);

GCK_RULE(exscan, MPI_Count count, MPI_Datatype type);

GCK_RULE(reduce_scatter, gclock_counts rcounts, MPI_Datatype type);

GCK_RULE(reduce_scatter_block, MPI_Count rcount, MPI_Datatype type);

GCK_RULE(gather, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    MPI_Count rcount, MPI_Datatype rtype, int root);

GCK_RULE(gatherv, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    gclock_counts rcounts, MPI_Datatype rtype, int root);

GCK_RULE(scatter, MPI_Count scount, MPI_Datatype stype, const void *recvbuf,
	    MPI_Count rcount, MPI_Datatype rtype, int root);

GCK_RULE(scatterv, gclock_counts scounts, MPI_Datatype stype,
	    const void *recvbuf, MPI_Count rcount, MPI_Datatype rtype, int root);

GCK_RULE(allgather, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    MPI_Count rcount, MPI_Datatype rtype);

GCK_RULE(allgatherv, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    gclock_counts rcounts, MPI_Datatype rtype);

GCK_RULE(alltoall, const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
	    MPI_Count rcount, MPI_Datatype rtype);

GCK_RULE(alltoallv, const void *sendbuf, gclock_counts scounts,
	    MPI_Datatype stype, gclock_counts rcounts, MPI_Datatype rtype);

GCK_RULE(alltoallw, const void *sendbuf, gclock_counts scounts,
	    const MPI_Datatype stypes[], gclock_counts rcounts,
	    const MPI_Datatype rtypes[]);

/* Neighbourhood collectives: one block per neighbour (cs->indeg sources,
 * cs->outdeg destinations; a Cartesian topology's MPI_PROC_NULL
 * neighbours are counted like the others). */
GCK_RULE(neighbor_allgather, MPI_Count scount, MPI_Datatype stype, MPI_Count rcount, MPI_Datatype rtype);

GCK_RULE(neighbor_allgatherv, MPI_Count scount, MPI_Datatype stype, gclock_counts rcounts, MPI_Datatype rtype);

GCK_RULE(neighbor_alltoallv, gclock_counts scounts, MPI_Datatype stype, gclock_counts rcounts,
	 MPI_Datatype rtype);

GCK_RULE(neighbor_alltoallw, gclock_counts scounts, const MPI_Datatype stypes[], gclock_counts rcounts,
	 const MPI_Datatype rtypes[]);

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

/*
 * Fortran bindings (issue 11, docs/explanation/recorder.md "Fortran"): helpers of the
 * wrappers generated into fortran_gen.c from the same table rows as the C
 * wrappers, and of the hand-written lifecycle and communicator wrappers in
 * fortran.c.
 *
 * Open MPI's Fortran layers (mpif.h and `use mpi`: libmpi_mpifh; `use
 * mpi_f08`: libmpi_usempif08) call PMPI_* directly, so the C wrappers never
 * see a Fortran program. A Fortran wrapper converts only the handles it needs
 * for recording (communicator, datatypes, requests, statuses) to C, records
 * with the C wrappers' byte and request rules (bytes.h, p2p_rules.h), and
 * calls the real Fortran entry point with the application's arguments
 * untouched, so MPI_IN_PLACE, MPI_BOTTOM and the Fortran sentinels need no
 * translation. The only substitutions are the statuses: where the
 * application passes MPI_STATUS(ES)_IGNORE, the real call gets the wrapper's
 * own Fortran status(es), so a receive's source, tag and size are known.
 * MPICH's Fortran layer calls the C MPI_* functions; the reentrancy guard
 * keeps those calls from being recorded twice.
 *
 * This header declares; the definitions are in fortran.c (static inline
 * functions, compiled in the one translation unit cshim/libgclock.c;
 * docs/explanation/cshim.md).
 */
#ifndef GCK_FORTRAN_H
#define GCK_FORTRAN_H

#include <mpi.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint must be a C int");
/* A Fortran status (MPI_STATUS_SIZE integers) fits in a C MPI_Status in
 * both Open MPI (6 and 24 bytes) and MPICH (5 and 20 bytes). */
#define GCK_F_STATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))

/* Fortran's subroutine pointer: arguments by reference, no result. */
typedef void (*gclock_fsub)();

/* Binding kinds of a wrapper (the real entry point's name and how choice
 * buffers are passed). */
enum {
	GCK_F_LEGACY = 0, /* mpif.h / use mpi: mpi_x_ -> pmpi_x_ */
	GCK_F_F08 = 1,    /* use mpi_f08: mpi_x_f08_ -> pmpi_x_f08_ (Open MPI), pmpir_x_f08_ (MPICH) */
	GCK_F_F08TS = 2,  /* MPICH use mpi_f08 with choice buffers: mpi_x_f08ts_ -> pmpir_x_f08ts_ */
};

/* gclock_fortran_real returns the real Fortran entry point of the wrapper
 * of lower (mpi_allreduce) of kind GCK_F_* (looked up once, then cached in
 * *slot). If there is none, NULL and one warning (fortran.c). */
gclock_fsub gclock_fortran_real(gclock_fsub *slot, const char *lower, int kind);

#define GCK_FREAL(slot, lower, kind)                                          \
	(__builtin_expect((slot) != NULL, 1) ? (slot) : gclock_fortran_real(&(slot), lower, kind))

/* gclock_fortran_missing fills *ierr when no real entry point exists. */
void gclock_fortran_missing(MPI_Fint *ierr);

/* Handle conversion. Open MPI's handles are pointers found through a table
 * (MPI_Comm_f2c & co. are functions, reached through pointers resolved like
 * the PMPI ones); MPICH's are the Fortran integers themselves (macros). */
#ifdef OPEN_MPI
extern MPI_Comm (*gclock_fp_comm_f2c)(MPI_Fint);
extern MPI_Datatype (*gclock_fp_type_f2c)(MPI_Fint);
extern MPI_Request (*gclock_fp_request_f2c)(MPI_Fint);
extern MPI_Group (*gclock_fp_group_f2c)(MPI_Fint);
extern MPI_Win (*gclock_fp_win_f2c)(MPI_Fint);
extern MPI_Message (*gclock_fp_message_f2c)(MPI_Fint);
void *gclock_fortran_fn(void **slot, const char *name);
#define GCK_FFN(slot, name) \
	(*(__builtin_expect((slot) != NULL, 1) ? (slot) : (__typeof__(slot))gclock_fortran_fn((void **)&(slot), name)))
#define gclock_comm_f2c(f) GCK_FFN(gclock_fp_comm_f2c, "PMPI_Comm_f2c")(f)
#define gclock_type_f2c(f) GCK_FFN(gclock_fp_type_f2c, "PMPI_Type_f2c")(f)
#define gclock_request_f2c(f) GCK_FFN(gclock_fp_request_f2c, "PMPI_Request_f2c")(f)
#define gclock_group_f2c(f) GCK_FFN(gclock_fp_group_f2c, "PMPI_Group_f2c")(f)
#define gclock_win_f2c(f) GCK_FFN(gclock_fp_win_f2c, "PMPI_Win_f2c")(f)
#define gclock_message_f2c(f) GCK_FFN(gclock_fp_message_f2c, "PMPI_Message_f2c")(f)
#else
#define gclock_comm_f2c(f) MPI_Comm_f2c(f)
#define gclock_type_f2c(f) MPI_Type_f2c(f)
#define gclock_request_f2c(f) MPI_Request_f2c(f)
#define gclock_group_f2c(f) MPI_Group_f2c(f)
#define gclock_win_f2c(f) MPI_Win_f2c(f)
#define gclock_message_f2c(f) MPI_Message_f2c(f)
#endif
extern int (*gclock_fp_status_f2c)(const MPI_Fint *, MPI_Status *);

/* The Fortran sentinels (MPI_IN_PLACE, MPI_STATUS_IGNORE,
 * MPI_STATUSES_IGNORE) of every binding and mangling, read from the MPI
 * library after MPI_Init (fortran.c: gclock_fortran_setup); NULL entries are
 * unknown. */
#define GCK_F_SENTINELS 4
extern const void *gclock_f_in_place[GCK_F_SENTINELS];
extern const void *gclock_f_status_ignore[GCK_F_SENTINELS];
extern const void *gclock_f_statuses_ignore[GCK_F_SENTINELS];

/* gclock_f_buf maps Fortran's MPI_IN_PLACE to C's, for the byte rules only;
 * desc: p is an array descriptor (MPICH's f08ts bindings), whose first
 * member is the data address. */
static inline const void *gclock_f_buf(const void *p, int desc);

/* gclock_f_status converts a Fortran status the real call filled. */
static inline void gclock_f_status(const MPI_Fint *f, MPI_Status *c);

/* gclock_f_status_arg is the status to hand to the real call: the
 * application's, or own when it passed MPI_STATUS_IGNORE. */
static inline MPI_Fint *gclock_f_status_arg(MPI_Fint *status, MPI_Fint *own);

/* gclock_f_reqs converts the request handles of a multi-request call
 * (before the call, while they are still valid) into the thread's scratch
 * array (grown to count when needed); returns how many, -1 when it cannot
 * hold them (more than GCK_SCRATCH_MAX, or no memory) or
 * the thread has no scratch (the call is then not recorded). */
static inline int gclock_f_reqs(const MPI_Fint *freqs, int count);

/* gclock_f_statuses_arg: the statuses array to hand to the real call for n
 * converted requests: the application's, or the thread's scratch (used as
 * Fortran statuses) when it passed MPI_STATUSES_IGNORE and n fits. *cst
 * gets the C statuses the rule reads (scratch), or MPI_STATUSES_IGNORE. */
static inline MPI_Fint *gclock_f_statuses_arg(MPI_Fint *statuses, int count, int n,
					      MPI_Status **cst);

/* gclock_f_statuses converts the first n Fortran statuses at f into the C
 * statuses at c; f may be c itself (the scratch): converting from the last
 * to the first never overwrites a Fortran status not yet read, because a
 * C status is at least as large as a Fortran one. */
static inline void gclock_f_statuses(const MPI_Fint *f, MPI_Status *c, int n);

/* gclock_f_types converts the Fortran datatype handles of an Alltoallw
 * (one per member: GCK_F_TYPES_SIZE) or a Neighbor_alltoallw (one per
 * destination or source: GCK_F_TYPES_OUTDEG, _INDEG) into out (cap
 * entries); 0 if they do not fit (bytes then recorded as 0). */
#define GCK_F_TYPES 256
enum { GCK_F_TYPES_SIZE, GCK_F_TYPES_OUTDEG, GCK_F_TYPES_INDEG };
static inline int gclock_f_types(const MPI_Fint *f, MPI_Comm comm, MPI_Datatype *out, int which);

/* gclock_f_index: a Fortran index (1-based) as the C rules read it. */
static inline int gclock_f_index(MPI_Fint i);

/* gclock_f_indices shifts n Fortran indices by d (-1 before the rule reads
 * them, +1 after, so the application's array is as the MPI library left
 * it). */
static inline void gclock_f_indices(MPI_Fint *idx, const MPI_Fint *outcount, int n, int d);

/* Exported names of one Fortran wrapper: the four manglings of mpif.h and
 * `use mpi` (gfortran and most compilers: lower_; g77/-fsecond-underscore:
 * lower__; IBM XL / -fno-underscoring: lower; Cray / Intel on Windows
 * habits: UPPER). */
#define GCK_F_ALIASES(fn, lower, UPPER)                                    \
	extern __typeof__(fn) lower __attribute__((alias(#fn)));           \
	extern __typeof__(fn) lower##_ __attribute__((alias(#fn)));        \
	extern __typeof__(fn) lower##__ __attribute__((alias(#fn)));       \
	extern __typeof__(fn) UPPER __attribute__((alias(#fn)))

/* GCK_F_WRAP defines the mpif.h / `use mpi` wrapper (exported under the
 * four manglings of lower/UPPER) and the `use mpi_f08` wrapper
 * <lower>_f08_, both running body_<lower>(real, return address, desc,
 * arguments...); GCK_F_WRAP_BUF is for functions with choice buffers, whose
 * MPICH f08 wrapper is <lower>_f08ts_ (buffers as descriptors). */
#define GCK_F_ONE(lower, kind, desc, name, params, ...)                         \
	static gclock_fsub r##kind##_##lower;                                   \
	void name params;                                                       \
	void name params                                                        \
	{                                                                       \
		body_##lower(GCK_FREAL(r##kind##_##lower, #lower, kind),        \
			     __builtin_return_address(0), desc, __VA_ARGS__);   \
	}

#define GCK_F_LEGACY_WRAP(lower, UPPER, params, ...)                            \
	static gclock_fsub r_##lower;                                           \
	static void f_##lower params                                            \
	{                                                                       \
		body_##lower(GCK_FREAL(r_##lower, #lower, GCK_F_LEGACY),        \
			     __builtin_return_address(0), 0, __VA_ARGS__);      \
	}                                                                       \
	GCK_F_ALIASES(f_##lower, lower, UPPER);

#define GCK_F_WRAP(lower, UPPER, params, ...)                                   \
	GCK_F_LEGACY_WRAP(lower, UPPER, params, __VA_ARGS__)                    \
	GCK_F_ONE(lower, 1, 0, lower##_f08_, params, __VA_ARGS__)

#ifdef OPEN_MPI
#define GCK_F_WRAP_BUF(lower, UPPER, params, ...)                               \
	GCK_F_LEGACY_WRAP(lower, UPPER, params, __VA_ARGS__)                    \
	GCK_F_ONE(lower, 1, 0, lower##_f08_, params, __VA_ARGS__)
#else
#define GCK_F_WRAP_BUF(lower, UPPER, params, ...)                               \
	GCK_F_LEGACY_WRAP(lower, UPPER, params, __VA_ARGS__)                    \
	GCK_F_ONE(lower, 2, 1, lower##_f08ts_, params, __VA_ARGS__)
#endif

#define GCK_F_INLINE static inline __attribute__((always_inline))

/* gclock_f_forget drops the requests of a Fortran MPI_Waitall too large to
 * record (the scratch cannot hold them): every one completes. */
static inline void gclock_f_forget(const MPI_Fint *freqs, int count);

#endif

/*
 * Fortran bindings, hand-written part (issue 11; docs/explanation/recorder.md
 * "Fortran"): finding the real Fortran entry points and the Fortran
 * sentinels, and the wrappers that are hand-written on the C side too
 * (MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort, the communicator
 * constructors and MPI_Comm_free). They share their bookkeeping with the C
 * wrappers (lifecycle.c, comms.c). The table rows' Fortran wrappers are
 * generated into fortran_gen.c.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "fortran.h"
#include "hotpath.h"
#include "requests.h"

/* ---- the generated Fortran wrappers' conversions (fortran.h) ------------- */

static inline int gclock_f_is(const void *p, const void *const set[GCK_F_SENTINELS])
{
	if (p == NULL)
		return 1;
	for (int i = 0; i < GCK_F_SENTINELS; i++)
		if (set[i] != NULL && p == set[i])
			return 1;
	return 0;
}

static inline const void *gclock_f_buf(const void *p, int desc)
{
	if (desc && p != NULL)
		p = *(const void *const *)p;
	return (p != NULL && gclock_f_is(p, gclock_f_in_place)) ? MPI_IN_PLACE : p;
}

static inline void gclock_f_status(const MPI_Fint *f, MPI_Status *c)
{
	if (gclock_fp_status_f2c == NULL || gclock_fp_status_f2c(f, c) != MPI_SUCCESS) {
		c->MPI_SOURCE = MPI_ANY_SOURCE;
		c->MPI_TAG = MPI_ANY_TAG;
	}
}

static inline MPI_Fint *gclock_f_status_arg(MPI_Fint *status, MPI_Fint *own)
{
	return gclock_f_is(status, gclock_f_status_ignore) ? own : status;
}

static inline int gclock_f_reqs(const MPI_Fint *freqs, int count)
{
	gclock_tbuf *b = gclock_buf();
	if (b != NULL && GCK_UNLIKELY(count > b->sc_cap))
		(void)gclock_scratch_grow(b, count);
	if (b == NULL || b->sc_req == NULL || count > b->sc_cap)
		return -1;
	int n = count < 0 ? 0 : count;
	for (int i = 0; i < n; i++)
		b->sc_req[i] = gclock_request_f2c(freqs[i]);
	return n;
}

static inline MPI_Fint *gclock_f_statuses_arg(MPI_Fint *statuses, int count, int n,
					      MPI_Status **cst)
{
	gclock_tbuf *b = gclock_tl_buf;
	*cst = MPI_STATUSES_IGNORE;
	if (b == NULL || b->sc_st == NULL || n != count)
		return statuses;
	*cst = b->sc_st;
	if (gclock_f_is(statuses, gclock_f_statuses_ignore))
		return (MPI_Fint *)(void *)b->sc_st;
	return statuses;
}

static inline void gclock_f_statuses(const MPI_Fint *f, MPI_Status *c, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		MPI_Status t;
		gclock_f_status(f + (size_t)i * GCK_F_STATUS_INTS, &t);
		c[i] = t;
	}
}

static inline int gclock_f_types(const MPI_Fint *f, MPI_Comm comm, MPI_Datatype *out, int which)
{
	gclock_comm_slot *cs = gclock_comm_get(comm);
	if (cs == NULL || cs->inter)
		return 0;
	int n = which == GCK_F_TYPES_OUTDEG ? cs->outdeg : which == GCK_F_TYPES_INDEG ? cs->indeg : cs->size;
	if (n < 0 || n > GCK_F_TYPES)
		return 0;
	for (int i = 0; i < n; i++)
		out[i] = gclock_type_f2c(f[i]);
	return 1;
}

static inline int gclock_f_index(MPI_Fint i)
{
	return (i == MPI_UNDEFINED || i < 1) ? i : i - 1;
}

static inline void gclock_f_indices(MPI_Fint *idx, const MPI_Fint *outcount, int n, int d)
{
	if (*outcount == MPI_UNDEFINED || *outcount < 0 || *outcount > n)
		return;
	for (int i = 0; i < *outcount; i++)
		idx[i] += d;
}

static inline void gclock_f_forget(const MPI_Fint *freqs, int count)
{
	for (int i = 0; i < count; i++)
		gclock_forget(gclock_request_f2c(freqs[i]));
}

#ifdef OPEN_MPI
MPI_Comm (*gclock_fp_comm_f2c)(MPI_Fint);
MPI_Datatype (*gclock_fp_type_f2c)(MPI_Fint);
MPI_Request (*gclock_fp_request_f2c)(MPI_Fint);
MPI_Group (*gclock_fp_group_f2c)(MPI_Fint);
MPI_Win (*gclock_fp_win_f2c)(MPI_Fint);
MPI_Message (*gclock_fp_message_f2c)(MPI_Fint);

/* Zero handles for a conversion function no library provides: recording
 * then sees MPI_COMM_NULL-like handles and skips (never a jump to 0). */
static intptr_t f2c_missing(MPI_Fint f)
{
	(void)f;
	return 0;
}

void *gclock_fortran_fn(void **slot, const char *name)
{
	void *p = gclock_sym(name);
	if (p == NULL)
		p = (void *)f2c_missing;
	__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}
#endif

int (*gclock_fp_status_f2c)(const MPI_Fint *, MPI_Status *);
const void *gclock_f_in_place[GCK_F_SENTINELS];
const void *gclock_f_status_ignore[GCK_F_SENTINELS];
const void *gclock_f_statuses_ignore[GCK_F_SENTINELS];

static int f_warned;

gclock_fsub gclock_fortran_real(gclock_fsub *slot, const char *lower, int kind)
{
	/* The real entry points have names that are not ours, so the global
	 * scope finds the MPI library's: Open MPI pmpi_x_ and pmpi_x_f08_,
	 * MPICH pmpi_x_, pmpir_x_f08_ and pmpir_x_f08ts_. Failing that, the
	 * definition after ours of the wrapper's own name (RTLD_NEXT). */
	static const char *const fmt[][2] = {
		{"p%s_", "%s_"},
#ifdef OPEN_MPI
		{"p%s_f08_", "%s_f08_"},
#else
		{"pmpir%s_f08_", "%s_f08_"},
#endif
		{"pmpir%s_f08ts_", "%s_f08ts_"},
	};
	char name[128];
	const char *base = lower;
	if (kind != GCK_F_LEGACY && strncmp(fmt[kind][0], "pmpir", 5) == 0)
		base = lower + 3; /* mpi_barrier -> _barrier */
	snprintf(name, sizeof name, fmt[kind][0], base);
	void *p = gclock_sym(name);
	if (p == NULL) {
		snprintf(name, sizeof name, fmt[kind][1], lower);
		p = dlsym(RTLD_NEXT, name);
	}
	if (p == NULL) {
		if (!__atomic_exchange_n(&f_warned, 1, __ATOMIC_ACQ_REL))
			fprintf(stderr, "gclock: the real Fortran entry point of %s (kind %d) is not in any "
					"loaded MPI library; that call fails with MPI_ERR_OTHER\n", lower, kind);
		return NULL;
	}
	__atomic_store_n(slot, (gclock_fsub)p, __ATOMIC_RELEASE);
	return (gclock_fsub)p;
}

void gclock_fortran_missing(MPI_Fint *ierr)
{
	if (ierr != NULL)
		*ierr = MPI_ERR_OTHER;
}

static const void *deref(const char *sym)
{
	const void *const *p = (const void *const *)gclock_sym(sym);
	return p != NULL ? *p : NULL;
}

void gclock_fortran_setup(void)
{
	gclock_fp_status_f2c = (int (*)(const MPI_Fint *, MPI_Status *))gclock_sym("PMPI_Status_f2c");
	gclock_f_status_ignore[0] = deref("MPI_F_STATUS_IGNORE");
	gclock_f_statuses_ignore[0] = deref("MPI_F_STATUSES_IGNORE");
#ifdef OPEN_MPI
	/* Common blocks shared by mpif.h, `use mpi` and `use mpi_f08`, under
	 * each compiler mangling (Open MPI's own checks accept all four). */
	static const char *const mangle[GCK_F_SENTINELS] = {"%s_", "%s", "%s__", "%s"};
	static const char *const base[3] = {"mpi_fortran_in_place", "mpi_fortran_status_ignore",
					    "mpi_fortran_statuses_ignore"};
	const void **set[3] = {gclock_f_in_place, gclock_f_status_ignore, gclock_f_statuses_ignore};
	for (int b = 0; b < 3; b++) {
		for (int m = 0; m < GCK_F_SENTINELS; m++) {
			char name[64];
			snprintf(name, sizeof name, mangle[m], base[b]);
			if (m == 3)
				for (char *c = name; *c; c++)
					*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
			if (b == 0 || m > 0) /* [0] of the status sets is MPI_F_* */
				set[b][m] = gclock_sym(name);
		}
	}
#else
	/* MPICH: mpif.h's common block, recorded at Fortran init, and the
	 * mpi_f08 objects. */
	gclock_f_in_place[0] = deref("MPIR_F_MPI_IN_PLACE");
	gclock_f_in_place[1] = gclock_sym("MPIR_F08_MPI_IN_PLACE");
	gclock_f_status_ignore[1] = deref("MPI_F08_STATUS_IGNORE");
	gclock_f_statuses_ignore[1] = deref("MPI_F08_STATUSES_IGNORE");
#endif
}

/* ---- lifecycle ------------------------------------------------------------ */

GCK_F_INLINE void body_mpi_init(gclock_fsub real, void *ra, int desc, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	MPI_Fint own = 0;
	if (ierr == NULL)
		ierr = &own;
	if (real == NULL) {
		gclock_fortran_missing(ierr);
		return;
	}
	if (gclock_tl_guard) {
		gclock_init_seen = 1;
		real(ierr);
		return;
	}
	int swapped = gclock_init_begin();
	real(ierr);
	if (*ierr == MPI_SUCCESS)
		gclock_fortran_setup();
	gclock_init_end(swapped, *ierr);
}
GCK_F_WRAP(mpi_init, MPI_INIT, (MPI_Fint *ierr), ierr)

GCK_F_INLINE void body_mpi_init_thread(gclock_fsub real, void *ra, int desc, MPI_Fint *required,
				       MPI_Fint *provided, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	MPI_Fint own = 0;
	if (ierr == NULL)
		ierr = &own;
	if (real == NULL) {
		gclock_fortran_missing(ierr);
		return;
	}
	if (gclock_tl_guard) {
		gclock_init_seen = 1;
		real(required, provided, ierr);
		return;
	}
	int swapped = gclock_init_begin();
	real(required, provided, ierr);
	if (*ierr == MPI_SUCCESS)
		gclock_fortran_setup();
	gclock_init_end(swapped, *ierr);
}
GCK_F_WRAP(mpi_init_thread, MPI_INIT_THREAD,
	   (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr), required, provided, ierr)

GCK_F_INLINE void body_mpi_finalize(gclock_fsub real, void *ra, int desc, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	MPI_Fint own = 0;
	if (ierr == NULL)
		ierr = &own;
	if (real == NULL) {
		gclock_fortran_missing(ierr);
		return;
	}
	int mine = gclock_finalize_begin();
	real(ierr);
	if (mine)
		gclock_finalize_end();
}
GCK_F_WRAP(mpi_finalize, MPI_FINALIZE, (MPI_Fint *ierr), ierr)

/* MPI_PCONTROL(LEVEL) has no IERROR argument in the standard. Open MPI's
 * binding calls PMPI_Pcontrol, MPICH's the C MPI_Pcontrol (the guard keeps
 * that from counting twice). MPICH's mpi_f08 binding takes an optional
 * IERROR after LEVEL (NULL when absent) and stores through it when given:
 * the f08 wrapper passes it on (before 2026-11-27 it did not, and the real
 * function stored through whatever the register held). An extra argument
 * is harmless to the bindings that take one. */
GCK_F_INLINE void body_mpi_pcontrol(gclock_fsub real, void *ra, int desc, MPI_Fint *level,
				    MPI_Fint *ierr)
{
	(void)desc;
	if (real == NULL)
		return;
	if (!gclock_active || gclock_tl_guard) {
		real(level, ierr);
		return;
	}
	gclock_tl_guard++;
	int64_t t0 = gclock_now();
	real(level, ierr);
	int64_t t1 = gclock_now();
	gclock_pcontrol(level != NULL ? (int)*level : 1, t0, t1, ra);
	gclock_tl_guard--;
}
GCK_F_LEGACY_WRAP(mpi_pcontrol, MPI_PCONTROL, (MPI_Fint *level), level, NULL)
GCK_F_ONE(mpi_pcontrol, 1, 0, mpi_pcontrol_f08_, (MPI_Fint *level, MPI_Fint *ierr), level, ierr)

GCK_F_INLINE void body_mpi_abort(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *errorcode,
				 MPI_Fint *ierr)
{
	(void)desc;
	MPI_Fint own = 0;
	if (ierr == NULL)
		ierr = &own;
	if (real == NULL) {
		gclock_fortran_missing(ierr);
		return;
	}
	gclock_abort_begin(errorcode != NULL ? *errorcode : 0, ra);
	real(comm, errorcode, ierr);
}
GCK_F_WRAP(mpi_abort, MPI_ABORT, (MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr), comm,
	   errorcode, ierr)

/* ---- communicators --------------------------------------------------------- */

/* GCK_F_COMM: body of a communicator-creating wrapper; call is the real
 * call, newcomm the Fortran handle it writes. */
#define GCK_F_COMM(kind, call)                                                  \
	MPI_Fint own = 0;                                                       \
	if (ierr == NULL)                                                       \
		ierr = &own;                                                    \
	if (real == NULL) {                                                     \
		gclock_fortran_missing(ierr);                                   \
		return;                                                         \
	}                                                                       \
	if (!gclock_active || gclock_tl_guard) {                                \
		call;                                                           \
		return;                                                         \
	}                                                                       \
	gclock_tl_guard++;                                                      \
	uint32_t counter;                                                       \
	gclock_comm_slot *parent = gclock_comm_new_begin(gclock_comm_f2c(*comm), &counter); \
	call;                                                                   \
	if (*ierr == MPI_SUCCESS)                                               \
		gclock_comm_new_end(*ierr, parent, counter, gclock_comm_f2c(*newcomm), kind); \
	gclock_tl_guard--

GCK_F_INLINE void body_mpi_comm_dup(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *newcomm,
				    MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("dup", real(comm, newcomm, ierr));
}
GCK_F_WRAP(mpi_comm_dup, MPI_COMM_DUP, (MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierr), comm,
	   newcomm, ierr)

GCK_F_INLINE void body_mpi_comm_dup_with_info(gclock_fsub real, void *ra, int desc, MPI_Fint *comm,
					      MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("dup", real(comm, info, newcomm, ierr));
}
GCK_F_WRAP(mpi_comm_dup_with_info, MPI_COMM_DUP_WITH_INFO,
	   (MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr), comm, info, newcomm, ierr)

GCK_F_INLINE void body_mpi_comm_split(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *color,
				      MPI_Fint *key, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("split", real(comm, color, key, newcomm, ierr));
}
GCK_F_WRAP(mpi_comm_split, MPI_COMM_SPLIT,
	   (MPI_Fint *comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm, MPI_Fint *ierr),
	   comm, color, key, newcomm, ierr)

GCK_F_INLINE void body_mpi_comm_split_type(gclock_fsub real, void *ra, int desc, MPI_Fint *comm,
					   MPI_Fint *split_type, MPI_Fint *key, MPI_Fint *info,
					   MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("split_type", real(comm, split_type, key, info, newcomm, ierr));
}
GCK_F_WRAP(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE,
	   (MPI_Fint *comm, MPI_Fint *split_type, MPI_Fint *key, MPI_Fint *info,
	    MPI_Fint *newcomm, MPI_Fint *ierr),
	   comm, split_type, key, info, newcomm, ierr)

GCK_F_INLINE void body_mpi_comm_create(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *group,
				       MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("create", real(comm, group, newcomm, ierr));
}
GCK_F_WRAP(mpi_comm_create, MPI_COMM_CREATE,
	   (MPI_Fint *comm, MPI_Fint *group, MPI_Fint *newcomm, MPI_Fint *ierr), comm, group,
	   newcomm, ierr)

/* Topologies and intercommunicators: the same bookkeeping as their C
 * wrappers (comms.c); the parent is the first communicator argument. */
GCK_F_INLINE void body_mpi_cart_create(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *ndims,
				       MPI_Fint *dims, MPI_Fint *periods, MPI_Fint *reorder,
				       MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("cart", real(comm, ndims, dims, periods, reorder, newcomm, ierr));
}
GCK_F_WRAP(mpi_cart_create, MPI_CART_CREATE,
	   (MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods, MPI_Fint *reorder,
	    MPI_Fint *newcomm, MPI_Fint *ierr),
	   comm, ndims, dims, periods, reorder, newcomm, ierr)

GCK_F_INLINE void body_mpi_cart_sub(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *remain,
				    MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("cart_sub", real(comm, remain, newcomm, ierr));
}
GCK_F_WRAP(mpi_cart_sub, MPI_CART_SUB, (MPI_Fint *comm, MPI_Fint *remain, MPI_Fint *newcomm, MPI_Fint *ierr),
	   comm, remain, newcomm, ierr)

GCK_F_INLINE void body_mpi_graph_create(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *nnodes,
					MPI_Fint *index, MPI_Fint *edges, MPI_Fint *reorder,
					MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("graph", real(comm, nnodes, index, edges, reorder, newcomm, ierr));
}
GCK_F_WRAP(mpi_graph_create, MPI_GRAPH_CREATE,
	   (MPI_Fint *comm, MPI_Fint *nnodes, MPI_Fint *index, MPI_Fint *edges, MPI_Fint *reorder,
	    MPI_Fint *newcomm, MPI_Fint *ierr),
	   comm, nnodes, index, edges, reorder, newcomm, ierr)

GCK_F_INLINE void body_mpi_dist_graph_create_adjacent(gclock_fsub real, void *ra, int desc, MPI_Fint *comm,
						      MPI_Fint *indegree, MPI_Fint *sources,
						      MPI_Fint *sourceweights, MPI_Fint *outdegree,
						      MPI_Fint *destinations, MPI_Fint *destweights,
						      MPI_Fint *info, MPI_Fint *reorder, MPI_Fint *newcomm,
						      MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("dist_graph", real(comm, indegree, sources, sourceweights, outdegree, destinations,
				      destweights, info, reorder, newcomm, ierr));
}
GCK_F_WRAP(mpi_dist_graph_create_adjacent, MPI_DIST_GRAPH_CREATE_ADJACENT,
	   (MPI_Fint *comm, MPI_Fint *indegree, MPI_Fint *sources, MPI_Fint *sourceweights,
	    MPI_Fint *outdegree, MPI_Fint *destinations, MPI_Fint *destweights, MPI_Fint *info,
	    MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr),
	   comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder,
	   newcomm, ierr)

GCK_F_INLINE void body_mpi_dist_graph_create(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *n,
					     MPI_Fint *sources, MPI_Fint *degrees, MPI_Fint *destinations,
					     MPI_Fint *weights, MPI_Fint *info, MPI_Fint *reorder,
					     MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("dist_graph",
		   real(comm, n, sources, degrees, destinations, weights, info, reorder, newcomm, ierr));
}
GCK_F_WRAP(mpi_dist_graph_create, MPI_DIST_GRAPH_CREATE,
	   (MPI_Fint *comm, MPI_Fint *n, MPI_Fint *sources, MPI_Fint *degrees, MPI_Fint *destinations,
	    MPI_Fint *weights, MPI_Fint *info, MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr),
	   comm, n, sources, degrees, destinations, weights, info, reorder, newcomm, ierr)

GCK_F_INLINE void body_mpi_intercomm_create(gclock_fsub real, void *ra, int desc, MPI_Fint *comm,
					    MPI_Fint *local_leader, MPI_Fint *peer_comm,
					    MPI_Fint *remote_leader, MPI_Fint *tag, MPI_Fint *newcomm,
					    MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_COMM("intercomm", real(comm, local_leader, peer_comm, remote_leader, tag, newcomm, ierr));
}
GCK_F_WRAP(mpi_intercomm_create, MPI_INTERCOMM_CREATE,
	   (MPI_Fint *comm, MPI_Fint *local_leader, MPI_Fint *peer_comm, MPI_Fint *remote_leader,
	    MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr),
	   comm, local_leader, peer_comm, remote_leader, tag, newcomm, ierr)

/* GCK_F_AFTER: body of a constructor whose bookkeeping is one call after
 * the real one (before: statements run first, under the guard). */
#define GCK_F_AFTER(call, before, after)                                        \
	MPI_Fint own = 0;                                                       \
	if (ierr == NULL)                                                       \
		ierr = &own;                                                    \
	if (real == NULL) {                                                     \
		gclock_fortran_missing(ierr);                                   \
		return;                                                         \
	}                                                                       \
	if (!gclock_active || gclock_tl_guard || newcomm == NULL) {             \
		call;                                                           \
		return;                                                         \
	}                                                                       \
	gclock_tl_guard++;                                                      \
	before;                                                                 \
	call;                                                                   \
	after;                                                                  \
	gclock_tl_guard--

GCK_F_INLINE void body_mpi_intercomm_merge(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, void *high,
					   MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_AFTER(real(comm, high, newcomm, ierr), (void)0,
		    gclock_comm_by_members(*ierr, gclock_comm_f2c(*newcomm), "merge"));
}
GCK_F_WRAP(mpi_intercomm_merge, MPI_INTERCOMM_MERGE,
	   (MPI_Fint *comm, void *high, MPI_Fint *newcomm, MPI_Fint *ierr), comm, high, newcomm, ierr)

GCK_F_INLINE void body_mpi_comm_create_group(gclock_fsub real, void *ra, int desc, MPI_Fint *comm,
					     MPI_Fint *group, MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	GCK_F_AFTER(real(comm, group, tag, newcomm, ierr), (void)0,
		    gclock_comm_by_members(*ierr, gclock_comm_f2c(*newcomm), "create_group"));
}
GCK_F_WRAP(mpi_comm_create_group, MPI_COMM_CREATE_GROUP,
	   (MPI_Fint *comm, MPI_Fint *group, MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr), comm, group,
	   tag, newcomm, ierr)

/* MPI_Comm_idup: the handle the real call writes is noted with the
 * parent's counter; the communicator is registered at its first use. */
GCK_F_INLINE void body_mpi_comm_idup(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *newcomm,
				     MPI_Fint *request, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	uint32_t counter = 0;
	gclock_comm_slot *parent = NULL;
	GCK_F_AFTER(real(comm, newcomm, request, ierr),
		    parent = gclock_comm_new_begin(gclock_comm_f2c(*comm), &counter),
		    gclock_idup_note(*ierr, parent, counter, gclock_comm_f2c(*newcomm)));
}
GCK_F_WRAP(mpi_comm_idup, MPI_COMM_IDUP, (MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierr),
	   comm, newcomm, request, ierr)

GCK_F_INLINE void body_mpi_comm_free(gclock_fsub real, void *ra, int desc, MPI_Fint *comm, MPI_Fint *ierr)
{
	(void)ra, (void)desc;
	MPI_Fint own = 0;
	if (ierr == NULL)
		ierr = &own;
	if (real == NULL) {
		gclock_fortran_missing(ierr);
		return;
	}
	if (!gclock_active || gclock_tl_guard || comm == NULL) {
		real(comm, ierr);
		return;
	}
	gclock_tl_guard++;
	uintptr_t k = (uintptr_t)gclock_comm_f2c(*comm);
	real(comm, ierr);
	gclock_comm_free_done(*ierr, k);
	gclock_tl_guard--;
}
GCK_F_WRAP(mpi_comm_free, MPI_COMM_FREE, (MPI_Fint *comm, MPI_Fint *ierr), comm, ierr)

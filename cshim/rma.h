/*
 * One-sided (RMA) recording (issue 11 §4; docs/explanation/rma.md). The wrappers are
 * generated from cshim/rma.tbl into wrappers_gen.c exactly like the
 * point-to-point ones (requests.h): gclock_p2p_<rule>_pre before and
 * gclock_p2p_<rule>_post after the PMPI function. Hot path: no Go call, no
 * allocation, no lock, no system call beyond the timer (window creation
 * and free are not hot: they register the window like a communicator).
 *
 * Windows live in the communicator table (gclock_comms), keyed by their
 * MPI_Win handle: a window is a communicator-like object with an agreed id
 * (parent communicator's id and creation counter, kind "win_create" ...),
 * its members as world ranks (so targets translate to world ranks) and a
 * sequence counter for its collective calls (creation, MPI_Win_fence,
 * MPI_Win_free). MPI_Win and MPI_Comm handles of live objects never
 * coincide (Open MPI: distinct objects; MPICH: the handle's kind bits).
 *
 * This header declares; the definitions are in rma.c (static inline
 * functions, compiled in the one translation unit cshim/libgclock.c;
 * docs/explanation/cshim.md).
 */
#ifndef GCK_RMA_H
#define GCK_RMA_H

#include "gclock.h"
#include "requests.h"

/* trace: Tag of MPI_Win_lock events. */
enum { GCK_LOCK_EXCLUSIVE = 1, GCK_LOCK_SHARED = 2 };

/* ---- window creation and free (comms.c) --------------------------------- */

void gclock_win_new_end(int rc, gclock_comm_slot *parent, uint32_t counter, MPI_Win win,
			const char *kind);
MPI_Group gclock_world_group(void);

/* win_create(size, comm, win): MPI_Win_create, _allocate,
 * _allocate_shared. The event: Comm = the new window, Seq = its instance 0,
 * Sent = the bytes this rank exposes. */
static inline void gclock_p2p_win_create_pre(gclock_p2p *cx, MPI_Aint size, MPI_Comm comm,
					     MPI_Win *win);

static inline void gclock_p2p_win_create_post(gclock_p2p *cx, int rc, MPI_Aint size,
					      MPI_Comm comm, MPI_Win *win);

/* win_create_dynamic(comm, win): no memory exposed yet. */
static inline void gclock_p2p_win_create_dynamic_pre(gclock_p2p *cx, MPI_Comm comm, MPI_Win *win);

static inline void gclock_p2p_win_create_dynamic_post(gclock_p2p *cx, int rc, MPI_Comm comm,
						      MPI_Win *win);

/* win_free(win): the window's last instance; its slot is released. */
static inline void gclock_p2p_win_free_pre(gclock_p2p *cx, MPI_Win *win);

static inline void gclock_p2p_win_free_post(gclock_p2p *cx, int rc, MPI_Win *win);

/* ---- communication ------------------------------------------------------ */

/* rma_put(origin_count, origin_datatype, target_rank, win): MPI_Put,
 * MPI_Accumulate (Sent = origin bytes). */
static inline void gclock_p2p_rma_put_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int target,
					  MPI_Win win);

static inline void gclock_p2p_rma_put_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					   int target, MPI_Win win);

/* rma_get(origin_count, origin_datatype, target_rank, win): MPI_Get
 * (Recv = origin bytes). */
static inline void gclock_p2p_rma_get_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int target,
					  MPI_Win win);

static inline void gclock_p2p_rma_get_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					   int target, MPI_Win win);

/* rma_getacc(origin_count, origin_datatype, result_count, result_datatype,
 * target_rank, win): MPI_Get_accumulate (Sent origin, Recv result). */
static inline void gclock_p2p_rma_getacc_pre(gclock_p2p *cx, MPI_Count ocount, MPI_Datatype otype,
					     MPI_Count rcount, MPI_Datatype rtype, int target,
					     MPI_Win win);

static inline void gclock_p2p_rma_getacc_post(gclock_p2p *cx, int rc, MPI_Count ocount,
					      MPI_Datatype otype, MPI_Count rcount,
					      MPI_Datatype rtype, int target, MPI_Win win);

/* rma_fetch(datatype, target_rank, win): MPI_Fetch_and_op,
 * MPI_Compare_and_swap (one element each way). */
static inline void gclock_p2p_rma_fetch_pre(gclock_p2p *cx, MPI_Datatype type, int target,
					    MPI_Win win);

static inline void gclock_p2p_rma_fetch_post(gclock_p2p *cx, int rc, MPI_Datatype type,
					     int target, MPI_Win win);

/* rma_rput(origin_count, origin_datatype, target_rank, win, request):
 * MPI_Rput, MPI_Raccumulate. */
static inline void gclock_p2p_rma_rput_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					   int target, MPI_Win win, MPI_Request *request);

static inline void gclock_p2p_rma_rput_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					    int target, MPI_Win win, MPI_Request *request);

/* rma_rget(origin_count, origin_datatype, target_rank, win, request): MPI_Rget. */
static inline void gclock_p2p_rma_rget_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					   int target, MPI_Win win, MPI_Request *request);

static inline void gclock_p2p_rma_rget_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					    int target, MPI_Win win, MPI_Request *request);

/* rma_rgetacc(...): MPI_Rget_accumulate; its completion carries the
 * result bytes. */
static inline void gclock_p2p_rma_rgetacc_pre(gclock_p2p *cx, MPI_Count ocount, MPI_Datatype otype,
					      MPI_Count rcount, MPI_Datatype rtype, int target,
					      MPI_Win win, MPI_Request *request);

static inline void gclock_p2p_rma_rgetacc_post(gclock_p2p *cx, int rc, MPI_Count ocount,
					       MPI_Datatype otype, MPI_Count rcount,
					       MPI_Datatype rtype, int target, MPI_Win win,
					       MPI_Request *request);

/* ---- synchronisation ---------------------------------------------------- */

/* win_fence(assert, win): an instance of the window (Seq), Tag = assert. */
static inline void gclock_p2p_win_fence_pre(gclock_p2p *cx, int assert, MPI_Win win);

static inline void gclock_p2p_win_fence_post(gclock_p2p *cx, int rc, int assert, MPI_Win win);

/* win_target(rank, win): MPI_Win_unlock, MPI_Win_flush(_local); Peer =
 * the target. */
static inline void gclock_p2p_win_target_pre(gclock_p2p *cx, int rank, MPI_Win win);

static inline void gclock_p2p_win_target_post(gclock_p2p *cx, int rc, int rank, MPI_Win win);

/* win_lock(lock_type, rank, win): Tag = 1 exclusive, 2 shared. */
static inline void gclock_p2p_win_lock_pre(gclock_p2p *cx, int lock_type, int rank, MPI_Win win);

static inline void gclock_p2p_win_lock_post(gclock_p2p *cx, int rc, int lock_type, int rank,
					    MPI_Win win);

/* win_all(win): calls on every target or the whole epoch (lock_all,
 * unlock_all, flush_all, flush_local_all, complete, wait, sync); Peer =
 * trace.PeerAny. */
static inline void gclock_p2p_win_all_pre(gclock_p2p *cx, MPI_Win win);

static inline void gclock_p2p_win_all_post(gclock_p2p *cx, int rc, MPI_Win win);

/* win_test(win, flag): MPI_Win_test; Tag = flag (1: the exposure epoch
 * ended). */
static inline void gclock_p2p_win_test_pre(gclock_p2p *cx, MPI_Win win, int *flag);

static inline void gclock_p2p_win_test_post(gclock_p2p *cx, int rc, MPI_Win win, int *flag);

/* win_group(group, win): MPI_Win_post, MPI_Win_start: one event per group
 * member (Seq 0, 1, ...), Peer = its world rank. */
static inline void gclock_p2p_win_group_pre(gclock_p2p *cx, MPI_Group group, MPI_Win win);

static inline void gclock_p2p_win_group_post(gclock_p2p *cx, int rc, MPI_Group group, MPI_Win win);

#endif

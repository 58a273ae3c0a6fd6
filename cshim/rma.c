/*
 * rma.c: the recording rules of the one-sided (RMA) wrappers, one
 * gclock_p2p_<rule>_pre and _post per rule name of cshim/rma.tbl
 * (declared in rma.h). Hot path, static inline, compiled into libgclock.c
 * before wrappers_gen.c.
 */
#include "rma.h"
#include "requests.h"
#include "hotpath.h"
#include "bytes.h"

/* gclock_win_get finds the slot of a window; NULL: not recorded (a window
 * created before MPI_Init finished or by an unwrapped binding). */
static inline gclock_comm_slot *gclock_win_get(MPI_Win win)
{
	uintptr_t k = (uintptr_t)win;
	if (!gclock_active || k == GCK_KEY_EMPTY || k == GCK_KEY_TOMB)
		return NULL;
	return gclock_slot_find(k);
}

static inline const char *gclock_win_kind(uint16_t op)
{
	switch (op) {
	case GCK_OP_MPI_WIN_ALLOCATE:
		return "win_allocate";
	case GCK_OP_MPI_WIN_ALLOCATE_SHARED:
		return "win_allocate_shared";
	case GCK_OP_MPI_WIN_CREATE_DYNAMIC:
		return "win_create_dynamic";
	default:
		return "win_create";
	}
}

static inline void gclock_p2p_win_create_pre(gclock_p2p *cx, MPI_Aint size, MPI_Comm comm,
					     MPI_Win *win)
{
	(void)win;
	uint32_t counter = 0;
	cx->cs = gclock_comm_new_begin(comm, &counter);
	cx->tag = (int32_t)counter;
	cx->sent = size > 0 ? (uint64_t)size : 0;
}

static inline void gclock_p2p_win_create_post(gclock_p2p *cx, int rc, MPI_Aint size,
					      MPI_Comm comm, MPI_Win *win)
{
	(void)size, (void)comm;
	if (cx->cs == NULL || rc != MPI_SUCCESS || win == NULL)
		return;
	gclock_win_new_end(rc, cx->cs, (uint32_t)cx->tag, *win, gclock_win_kind(cx->op));
	gclock_comm_slot *ws = gclock_win_get(*win);
	if (ws != NULL)
		gclock_put(cx, ws->local, ws->seq++, -1, 0, 0, 0, cx->sent, 0);
}

static inline void gclock_p2p_win_create_dynamic_pre(gclock_p2p *cx, MPI_Comm comm, MPI_Win *win)
{
	gclock_p2p_win_create_pre(cx, 0, comm, win);
}

static inline void gclock_p2p_win_create_dynamic_post(gclock_p2p *cx, int rc, MPI_Comm comm,
						      MPI_Win *win)
{
	gclock_p2p_win_create_post(cx, rc, 0, comm, win);
}

static inline void gclock_p2p_win_free_pre(gclock_p2p *cx, MPI_Win *win)
{
	cx->wkey = win != NULL ? (uintptr_t)*win : 0;
	cx->cs = win != NULL ? gclock_win_get(*win) : NULL;
}

static inline void gclock_p2p_win_free_post(gclock_p2p *cx, int rc, MPI_Win *win)
{
	(void)win;
	if (cx->cs == NULL)
		return;
	gclock_put(cx, cx->cs->local, cx->cs->seq++, -1, 0, 0, 0, 0, 0);
	gclock_comm_free_done(rc, cx->wkey);
}

static inline void gclock_rma_target(gclock_p2p *cx, int target, MPI_Win win)
{
	cx->cs = gclock_win_get(win);
	if (cx->cs != NULL)
		cx->peer = gclock_peer(cx->cs, target);
}

static inline uint64_t gclock_rma_bytes(int target, MPI_Count count, MPI_Datatype type)
{
	return target == MPI_PROC_NULL ? 0 : gclock_tsize(count, type);
}

static inline void gclock_rma_put_event(gclock_p2p *cx, uint32_t req)
{
	if (cx->cs != NULL)
		gclock_put(cx, cx->cs->local, 0, -1, cx->peer, 0, req, cx->sent, cx->recv);
}

static inline void gclock_p2p_rma_put_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int target,
					  MPI_Win win)
{
	gclock_rma_target(cx, target, win);
	if (cx->cs != NULL)
		cx->sent = gclock_rma_bytes(target, count, type);
}

static inline void gclock_p2p_rma_put_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					   int target, MPI_Win win)
{
	(void)rc, (void)count, (void)type, (void)target, (void)win;
	gclock_rma_put_event(cx, 0);
}

static inline void gclock_p2p_rma_get_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int target,
					  MPI_Win win)
{
	gclock_rma_target(cx, target, win);
	if (cx->cs != NULL)
		cx->recv = gclock_rma_bytes(target, count, type);
}

static inline void gclock_p2p_rma_get_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					   int target, MPI_Win win)
{
	(void)rc, (void)count, (void)type, (void)target, (void)win;
	gclock_rma_put_event(cx, 0);
}

static inline void gclock_p2p_rma_getacc_pre(gclock_p2p *cx, MPI_Count ocount, MPI_Datatype otype,
					     MPI_Count rcount, MPI_Datatype rtype, int target,
					     MPI_Win win)
{
	gclock_rma_target(cx, target, win);
	if (cx->cs != NULL) {
		cx->sent = gclock_rma_bytes(target, ocount, otype);
		cx->recv = gclock_rma_bytes(target, rcount, rtype);
	}
}

static inline void gclock_p2p_rma_getacc_post(gclock_p2p *cx, int rc, MPI_Count ocount,
					      MPI_Datatype otype, MPI_Count rcount,
					      MPI_Datatype rtype, int target, MPI_Win win)
{
	(void)rc, (void)ocount, (void)otype, (void)rcount, (void)rtype, (void)target, (void)win;
	gclock_rma_put_event(cx, 0);
}

static inline void gclock_p2p_rma_fetch_pre(gclock_p2p *cx, MPI_Datatype type, int target,
					    MPI_Win win)
{
	gclock_p2p_rma_getacc_pre(cx, 1, type, 1, type, target, win);
}

static inline void gclock_p2p_rma_fetch_post(gclock_p2p *cx, int rc, MPI_Datatype type,
					     int target, MPI_Win win)
{
	(void)rc, (void)type, (void)target, (void)win;
	gclock_rma_put_event(cx, 0);
}

/* Request-based calls: the request enters the table (requests.h) and its
 * completion by MPI_Wait* / MPI_Test* is recorded with target and bytes. */
static inline void gclock_rma_track(gclock_p2p *cx, int rc, MPI_Request *request, uint16_t kind)
{
	if (cx->cs == NULL)
		return;
	uint32_t id = 0;
	if (rc == MPI_SUCCESS && request != NULL)
		id = gclock_track(cx, *request, kind, 0, cx->peer, 0,
				  kind == GCK_REQ_RMA_PUT ? cx->sent : cx->recv);
	gclock_rma_put_event(cx, id);
}

static inline void gclock_p2p_rma_rput_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					   int target, MPI_Win win, MPI_Request *request)
{
	(void)request;
	gclock_p2p_rma_put_pre(cx, count, type, target, win);
}

static inline void gclock_p2p_rma_rput_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					    int target, MPI_Win win, MPI_Request *request)
{
	(void)count, (void)type, (void)target, (void)win;
	gclock_rma_track(cx, rc, request, GCK_REQ_RMA_PUT);
}

static inline void gclock_p2p_rma_rget_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					   int target, MPI_Win win, MPI_Request *request)
{
	(void)request;
	gclock_p2p_rma_get_pre(cx, count, type, target, win);
}

static inline void gclock_p2p_rma_rget_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					    int target, MPI_Win win, MPI_Request *request)
{
	(void)count, (void)type, (void)target, (void)win;
	gclock_rma_track(cx, rc, request, GCK_REQ_RMA_GET);
}

static inline void gclock_p2p_rma_rgetacc_pre(gclock_p2p *cx, MPI_Count ocount, MPI_Datatype otype,
					      MPI_Count rcount, MPI_Datatype rtype, int target,
					      MPI_Win win, MPI_Request *request)
{
	(void)request;
	gclock_p2p_rma_getacc_pre(cx, ocount, otype, rcount, rtype, target, win);
}

static inline void gclock_p2p_rma_rgetacc_post(gclock_p2p *cx, int rc, MPI_Count ocount,
					       MPI_Datatype otype, MPI_Count rcount,
					       MPI_Datatype rtype, int target, MPI_Win win,
					       MPI_Request *request)
{
	(void)ocount, (void)otype, (void)rcount, (void)rtype, (void)target, (void)win;
	gclock_rma_track(cx, rc, request, GCK_REQ_RMA_GET);
}

static inline void gclock_p2p_win_fence_pre(gclock_p2p *cx, int assert, MPI_Win win)
{
	(void)assert;
	cx->cs = gclock_win_get(win);
}

static inline void gclock_p2p_win_fence_post(gclock_p2p *cx, int rc, int assert, MPI_Win win)
{
	(void)rc, (void)win;
	if (cx->cs != NULL)
		gclock_put(cx, cx->cs->local, cx->cs->seq++, -1, 0, assert, 0, 0, 0);
}

static inline void gclock_p2p_win_target_pre(gclock_p2p *cx, int rank, MPI_Win win)
{
	gclock_rma_target(cx, rank, win);
}

static inline void gclock_p2p_win_target_post(gclock_p2p *cx, int rc, int rank, MPI_Win win)
{
	(void)rc, (void)rank, (void)win;
	if (cx->cs != NULL)
		gclock_put(cx, cx->cs->local, 0, -1, cx->peer, cx->tag, 0, 0, 0);
}

static inline void gclock_p2p_win_lock_pre(gclock_p2p *cx, int lock_type, int rank, MPI_Win win)
{
	gclock_rma_target(cx, rank, win);
	cx->tag = lock_type == MPI_LOCK_EXCLUSIVE ? GCK_LOCK_EXCLUSIVE : GCK_LOCK_SHARED;
}

static inline void gclock_p2p_win_lock_post(gclock_p2p *cx, int rc, int lock_type, int rank,
					    MPI_Win win)
{
	(void)lock_type;
	gclock_p2p_win_target_post(cx, rc, rank, win);
}

static inline void gclock_p2p_win_all_pre(gclock_p2p *cx, MPI_Win win)
{
	cx->cs = gclock_win_get(win);
}

static inline void gclock_p2p_win_all_post(gclock_p2p *cx, int rc, MPI_Win win)
{
	(void)rc, (void)win;
	if (cx->cs != NULL)
		gclock_put(cx, cx->cs->local, 0, -1, GCK_PEER_ANY, 0, 0, 0, 0);
}

static inline void gclock_p2p_win_test_pre(gclock_p2p *cx, MPI_Win win, int *flag)
{
	(void)flag;
	cx->cs = gclock_win_get(win);
}

static inline void gclock_p2p_win_test_post(gclock_p2p *cx, int rc, MPI_Win win, int *flag)
{
	(void)win;
	if (cx->cs != NULL)
		gclock_put(cx, cx->cs->local, 0, -1, GCK_PEER_ANY,
			   rc == MPI_SUCCESS && flag != NULL && *flag ? 1 : 0, 0, 0, 0);
}

static inline void gclock_p2p_win_group_pre(gclock_p2p *cx, MPI_Group group, MPI_Win win)
{
	(void)group;
	cx->cs = gclock_win_get(win);
}

static inline void gclock_p2p_win_group_post(gclock_p2p *cx, int rc, MPI_Group group, MPI_Win win)
{
	(void)rc, (void)win;
	if (cx->cs == NULL)
		return;
	int n = 0;
	if (PMPI_Group_size(group, &n) != MPI_SUCCESS || n <= 0) {
		gclock_put(cx, cx->cs->local, 0, -1, GCK_PEER_NULL, 0, 0, 0, 0);
		return;
	}
	MPI_Group world = gclock_world_group();
	int in[64], out[64];
	uint32_t seq = 0;
	for (int i = 0; i < n; i += 64) {
		int m = n - i < 64 ? n - i : 64;
		for (int j = 0; j < m; j++)
			in[j] = i + j;
		if (PMPI_Group_translate_ranks(group, m, in, world, out) != MPI_SUCCESS)
			for (int j = 0; j < m; j++)
				out[j] = GCK_PEER_ANY;
		for (int j = 0; j < m; j++)
			gclock_put(cx, cx->cs->local, seq++, -1, out[j] == MPI_UNDEFINED ? GCK_PEER_ANY : out[j],
				   0, 0, 0, 0);
	}
}

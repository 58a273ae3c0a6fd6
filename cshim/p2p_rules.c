/*
 * p2p_rules.c: the recording rules of the point-to-point, request and
 * nonblocking-collective wrappers, one gclock_p2p_<rule>_pre and _post per
 * rule name of cshim/p2p.tbl (declared in p2p_rules.h). Hot path, static
 * inline, compiled into libgclock.c before wrappers_gen.c.
 */
#include "p2p_rules.h"
#include "requests.h"
#include "reqtable.h"
#include "hotpath.h"
#include "bytes.h"

static GCK_INLINE void gclock_p2p_send_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
				       int dest, int tag, MPI_Comm comm)
{
	cx->cs = gclock_comm_get(comm);
	if (cx->cs != NULL) {
		cx->sent = dest == MPI_PROC_NULL ? 0 : gclock_tsize(count, type);
		cx->peer = gclock_peer(cx->cs, dest);
	} else {
		cx->peer = gclock_fl_rank(dest); /* the marker's (wrapgen peerInCx) */
	}
	cx->tag = tag;
}

static inline void gclock_p2p_send_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					int dest, int tag, MPI_Comm comm)
{
	(void)rc, (void)count, (void)type, (void)dest, (void)comm;
	if (cx->cs != NULL)
		gclock_put_in(cx, gclock_tl_buf, GCK_SAME_LOC, cx->cs->local, 0, -1, cx->peer, tag, 0, cx->sent, 0);
}

static inline void gclock_p2p_recv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
				       int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	(void)tag;
	cx->st = gclock_own_status(cx, status);
	cx->cs = gclock_comm_get(comm);
	if (cx->cs != NULL)
		cx->recv = source == MPI_PROC_NULL ? 0 : gclock_tsize(count, type);
}

/* gclock_resolve fills peer, tag and bytes of a received message from st
 * (the posted values when the call failed). */
static inline void gclock_resolve(gclock_p2p *cx, int rc, MPI_Status *st, int source, int tag,
				  uint64_t posted, int32_t *peer, int32_t *rtag, uint64_t *bytes)
{
	if (rc == MPI_SUCCESS) {
		*peer = gclock_peer(cx->cs, st->MPI_SOURCE);
		*rtag = st->MPI_TAG;
		*bytes = *peer == GCK_PEER_NULL ? 0 : gclock_status_bytes(st, posted);
	} else {
		*peer = gclock_peer(cx->cs, source);
		*rtag = tag;
		*bytes = posted;
	}
}

static inline void gclock_p2p_recv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	(void)count, (void)type, (void)comm, (void)status;
	if (cx->cs == NULL)
		return;
	int32_t peer, rtag;
	uint64_t bytes;
	gclock_resolve(cx, rc, cx->st, source, tag, cx->recv, &peer, &rtag, &bytes);
	gclock_put(cx, cx->cs->local, 0, -1, peer, rtag, 0, 0, bytes);
}

static inline void gclock_p2p_sendrecv_pre(gclock_p2p *cx, MPI_Count scount, MPI_Datatype stype,
					   int dest, int stag, MPI_Count rcount, MPI_Datatype rtype,
					   int source, int rtag, MPI_Comm comm,
					   MPI_Status *status)
{
	(void)stag, (void)rtag;
	cx->st = gclock_own_status(cx, status);
	cx->cs = gclock_comm_get(comm);
	if (cx->cs != NULL) {
		cx->sent = dest == MPI_PROC_NULL ? 0 : gclock_tsize(scount, stype);
		cx->recv = source == MPI_PROC_NULL ? 0 : gclock_tsize(rcount, rtype);
		cx->peer = gclock_peer(cx->cs, dest);
	}
}

static inline void gclock_p2p_sendrecv_post(gclock_p2p *cx, int rc, MPI_Count scount,
					    MPI_Datatype stype, int dest, int stag,
					    MPI_Count rcount, MPI_Datatype rtype, int source,
					    int rtag, MPI_Comm comm, MPI_Status *status)
{
	(void)scount, (void)stype, (void)dest, (void)rcount, (void)rtype, (void)comm, (void)status;
	if (cx->cs == NULL)
		return;
	gclock_put(cx, cx->cs->local, 0, -1, cx->peer, stag, 0, cx->sent, 0);
	int32_t peer, tag;
	uint64_t bytes;
	gclock_resolve(cx, rc, cx->st, source, rtag, cx->recv, &peer, &tag, &bytes);
	gclock_put(cx, cx->cs->local, 1, -1, peer, tag, 0, 0, bytes);
}

static inline void gclock_p2p_sendrecv_replace_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
						   int dest, int stag, int source, int rtag,
						   MPI_Comm comm, MPI_Status *status)
{
	gclock_p2p_sendrecv_pre(cx, count, type, dest, stag, count, type, source, rtag, comm, status);
}

static inline void gclock_p2p_sendrecv_replace_post(gclock_p2p *cx, int rc, MPI_Count count,
						    MPI_Datatype type, int dest, int stag,
						    int source, int rtag, MPI_Comm comm,
						    MPI_Status *status)
{
	gclock_p2p_sendrecv_post(cx, rc, count, type, dest, stag, count, type, source, rtag, comm, status);
}

static inline void gclock_p2p_probe_pre(gclock_p2p *cx, int source, int tag, MPI_Comm comm,
					MPI_Status *status)
{
	(void)source, (void)tag;
	cx->st = gclock_own_status(cx, status);
	cx->cs = gclock_comm_get(comm);
}

static inline void gclock_p2p_probe_post(gclock_p2p *cx, int rc, int source, int tag,
					 MPI_Comm comm, MPI_Status *status)
{
	(void)comm, (void)status;
	if (cx->cs == NULL)
		return;
	int32_t peer, rtag;
	uint64_t bytes;
	gclock_resolve(cx, rc, cx->st, source, tag, 0, &peer, &rtag, &bytes);
	gclock_put(cx, cx->cs->local, 0, -1, peer, rtag, 0, 0, bytes);
}

static inline void gclock_p2p_iprobe_pre(gclock_p2p *cx, int source, int tag, MPI_Comm comm,
					 int *flag, MPI_Status *status)
{
	(void)flag;
	gclock_p2p_probe_pre(cx, source, tag, comm, status);
}

static inline void gclock_p2p_iprobe_post(gclock_p2p *cx, int rc, int source, int tag,
					  MPI_Comm comm, int *flag, MPI_Status *status)
{
	if (cx->cs == NULL)
		return;
	if (rc == MPI_SUCCESS && *flag)
		gclock_p2p_probe_post(cx, rc, source, tag, comm, status);
	else
		gclock_poll_miss(cx, cx->cs->local);
}

/* ---- matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv) ----
 * MPI_Mrecv and MPI_Imrecv name no communicator, source or tag: they
 * receive the message a probe matched. The probe keeps them, keyed by the
 * message handle, in a small per-thread table (no lock; a message is
 * normally received by the thread that probed it); a receive whose
 * message is not found (probed by another thread, or on a communicator
 * not recorded) is passed through unrecorded. */
static GCK_INLINE void gclock_p2p_start_msg(gclock_p2p *cx, int rc, MPI_Request *request,
					uint16_t kind, uint16_t persistent, int32_t tag, int same);

static inline void gclock_msg_keep(MPI_Message m, gclock_comm_slot *cs, int32_t peer, int32_t tag)
{
	gclock_msg_slot *s = &gclock_msgs[gclock_msg_next++ % GCK_MSG_SLOTS];
	s->key = (uintptr_t)m;
	s->cs = cs;
	s->peer = peer;
	s->tag = tag;
}

static inline gclock_msg_slot *gclock_msg_find(MPI_Message m)
{
	for (int i = 0; i < GCK_MSG_SLOTS; i++)
		if (gclock_msgs[i].cs != NULL && gclock_msgs[i].key == (uintptr_t)m)
			return &gclock_msgs[i];
	return NULL;
}

static inline void gclock_p2p_mprobe_pre(gclock_p2p *cx, int source, int tag, MPI_Comm comm,
					 MPI_Message *message, MPI_Status *status)
{
	(void)message;
	gclock_p2p_probe_pre(cx, source, tag, comm, status);
}

static inline void gclock_p2p_mprobe_post(gclock_p2p *cx, int rc, int source, int tag,
					  MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	(void)comm, (void)status;
	if (cx->cs == NULL)
		return;
	int32_t peer, rtag;
	uint64_t bytes;
	gclock_resolve(cx, rc, cx->st, source, tag, 0, &peer, &rtag, &bytes);
	if (rc == MPI_SUCCESS && message != NULL)
		gclock_msg_keep(*message, cx->cs, peer, rtag);
	gclock_put(cx, cx->cs->local, 0, -1, peer, rtag, 0, 0, bytes);
}

static inline void gclock_p2p_improbe_pre(gclock_p2p *cx, int source, int tag, MPI_Comm comm,
					  int *flag, MPI_Message *message, MPI_Status *status)
{
	(void)flag, (void)message;
	gclock_p2p_probe_pre(cx, source, tag, comm, status);
}

static inline void gclock_p2p_improbe_post(gclock_p2p *cx, int rc, int source, int tag,
					   MPI_Comm comm, int *flag, MPI_Message *message,
					   MPI_Status *status)
{
	if (cx->cs == NULL)
		return;
	if (rc == MPI_SUCCESS && *flag)
		gclock_p2p_mprobe_post(cx, rc, source, tag, comm, message, status);
	else
		gclock_poll_miss(cx, cx->cs->local);
}

/* gclock_msg_take moves a probed message's communicator, source and tag
 * into cx (cx->cs stays NULL when the message is not known). */
static inline void gclock_msg_take(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, const MPI_Message *message)
{
	gclock_msg_slot *m = message != NULL ? gclock_msg_find(*message) : NULL;
	if (m == NULL)
		return;
	cx->cs = m->cs;
	cx->peer = m->peer;
	cx->tag = m->tag;
	m->cs = NULL;
	cx->recv = m->peer == GCK_PEER_NULL ? 0 : gclock_tsize(count, type);
}

static inline void gclock_p2p_mrecv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					MPI_Message *message, MPI_Status *status)
{
	cx->st = gclock_own_status(cx, status);
	gclock_msg_take(cx, count, type, message);
}

static inline void gclock_p2p_mrecv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					 MPI_Message *message, MPI_Status *status)
{
	(void)count, (void)type, (void)message, (void)status;
	if (cx->cs == NULL)
		return;
	int32_t peer = cx->peer, rtag = cx->tag;
	uint64_t bytes = cx->recv;
	if (rc == MPI_SUCCESS && peer != GCK_PEER_NULL) {
		peer = gclock_peer(cx->cs, cx->st->MPI_SOURCE);
		rtag = cx->st->MPI_TAG;
		bytes = gclock_status_bytes(cx->st, cx->recv);
	}
	gclock_put(cx, cx->cs->local, 0, -1, peer, rtag, 0, 0, bytes);
}

static inline void gclock_p2p_imrecv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					 MPI_Message *message, MPI_Request *request)
{
	(void)request;
	gclock_msg_take(cx, count, type, message);
}

static inline void gclock_p2p_imrecv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					  MPI_Message *message, MPI_Request *request)
{
	(void)count, (void)type, (void)message;
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_RECV, 0, cx->tag, 0); /* tag: the probe's */
}

/* isend / irecv / send_init / recv_init (count, datatype, peer, tag, comm,
 * request): the request enters the table; the event carries its id. same:
 * gclock_put_in's (the in-flight mark holds comm, seq 0, root -1, tag). */
static GCK_INLINE void gclock_p2p_start_msg(gclock_p2p *cx, int rc, MPI_Request *request,
					uint16_t kind, uint16_t persistent, int32_t tag, int same)
{
	if (cx->cs == NULL)
		return;
	uint32_t id = 0;
	gclock_tbuf *b = gclock_tl_buf; /* read once for both */
	if (rc == MPI_SUCCESS) {
		if (GCK_UNLIKELY(b == NULL))
			b = gclock_tbuf_new();
		id = gclock_track_in(cx, b, *request, kind, persistent, cx->peer, tag,
				     kind == GCK_REQ_SEND ? cx->sent : cx->recv);
	}
	gclock_put_in(cx, b, same, cx->cs->local, 0, -1, cx->peer, tag, id, cx->sent, cx->recv);
}

static GCK_INLINE void gclock_p2p_isend_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int dest,
					int tag, MPI_Comm comm, MPI_Request *request)
{
	(void)request;
	gclock_p2p_send_pre(cx, count, type, dest, tag, comm);
}

static GCK_INLINE void gclock_p2p_isend_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					 int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	(void)count, (void)type, (void)dest, (void)comm;
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_SEND, 0, tag, GCK_SAME_LOC);
}

static GCK_INLINE void gclock_p2p_irecv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int source,
					int tag, MPI_Comm comm, MPI_Request *request)
{
	(void)request, (void)tag;
	cx->cs = gclock_comm_get(comm);
	if (cx->cs != NULL) {
		cx->recv = source == MPI_PROC_NULL ? 0 : gclock_tsize(count, type);
		cx->peer = gclock_peer(cx->cs, source);
	} else {
		cx->peer = gclock_fl_rank(source); /* the marker's (wrapgen peerInCx) */
	}
}

static GCK_INLINE void gclock_p2p_irecv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					 int source, int tag, MPI_Comm comm, MPI_Request *request)
{
	(void)count, (void)type, (void)source, (void)comm;
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_RECV, 0, tag, GCK_SAME_LOC);
}

static inline void gclock_p2p_send_init_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					    int dest, int tag, MPI_Comm comm,
					    MPI_Request *request)
{
	gclock_p2p_isend_pre(cx, count, type, dest, tag, comm, request);
}

static inline void gclock_p2p_send_init_post(gclock_p2p *cx, int rc, MPI_Count count,
					     MPI_Datatype type, int dest, int tag,
					     MPI_Comm comm, MPI_Request *request)
{
	(void)count, (void)type, (void)dest, (void)comm;
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_SEND, 1, tag, GCK_SAME_LOC);
}

static inline void gclock_p2p_recv_init_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					    int source, int tag, MPI_Comm comm,
					    MPI_Request *request)
{
	gclock_p2p_irecv_pre(cx, count, type, source, tag, comm, request);
}

static inline void gclock_p2p_recv_init_post(gclock_p2p *cx, int rc, MPI_Count count,
					     MPI_Datatype type, int source, int tag,
					     MPI_Comm comm, MPI_Request *request)
{
	(void)count, (void)type, (void)source, (void)comm;
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_RECV, 1, tag, GCK_SAME_LOC);
}

/* gclock_restart records one activation of a persistent request. */
static inline void gclock_restart(gclock_p2p *cx, MPI_Request r, uint32_t seq)
{
	gclock_req_slot *s = gclock_req_find(gclock_req_key(r));
	if (s == NULL)
		return;
	gclock_put(cx, s->comm, seq, -1, s->peer, s->tag, s->id,
		   s->kind == GCK_REQ_SEND ? s->bytes : 0,
		   s->kind == GCK_REQ_RECV ? s->bytes : 0);
}

static inline void gclock_p2p_start_pre(gclock_p2p *cx, MPI_Request *request)
{
	cx->saved = *request;
}

static inline void gclock_p2p_start_post(gclock_p2p *cx, int rc, MPI_Request *request)
{
	(void)request;
	if (rc == MPI_SUCCESS)
		gclock_restart(cx, cx->saved, 0);
}

static inline void gclock_p2p_startall_pre(gclock_p2p *cx, int count, MPI_Request reqs[])
{
	(void)cx, (void)count, (void)reqs;
}

static inline void gclock_p2p_startall_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[])
{
	if (rc != MPI_SUCCESS)
		return;
	uint32_t seq = 0;
	for (int i = 0; i < count; i++) {
		uint32_t before = (uint32_t)cx->nrec;
		gclock_restart(cx, reqs[i], seq);
		if ((uint32_t)cx->nrec != before)
			seq++;
	}
}

static inline void gclock_p2p_request_free_pre(gclock_p2p *cx, MPI_Request *request)
{
	cx->saved = *request;
}

static inline void gclock_p2p_request_free_post(gclock_p2p *cx, int rc, MPI_Request *request)
{
	(void)request;
	if (rc != MPI_SUCCESS)
		return;
	gclock_shared_req r;
	int32_t src;
	if (gclock_take(gclock_req_key(cx->saved), 1, NULL, &r, &src))
		gclock_put(cx, r.comm, 0, -1, r.peer, r.tag, r.id, 0, 0);
}

static inline void gclock_p2p_wait_pre(gclock_p2p *cx, MPI_Request *request, MPI_Status *status)
{
	cx->saved = *request;
	cx->st = gclock_own_status(cx, status);
}

static inline void gclock_p2p_wait_post(gclock_p2p *cx, int rc, MPI_Request *request,
					MPI_Status *status)
{
	(void)request, (void)status;
	if (rc == MPI_SUCCESS)
		gclock_complete(cx, cx->saved, cx->st, 0);
	gclock_call_only(cx);
}

static inline void gclock_p2p_test_pre(gclock_p2p *cx, MPI_Request *request, int *flag,
				       MPI_Status *status)
{
	(void)flag;
	gclock_p2p_wait_pre(cx, request, status);
}

static inline void gclock_p2p_test_post(gclock_p2p *cx, int rc, MPI_Request *request, int *flag,
					MPI_Status *status)
{
	(void)request, (void)status;
	if (rc == MPI_SUCCESS && *flag)
		gclock_complete(cx, cx->saved, cx->st, 0);
	if (cx->nrec == 0)
		gclock_poll_miss(cx, 0);
}

/* gclock_sts_at is status i of the array the real call filled, or NULL when
 * it filled none: cx->sts is the application's MPI_STATUSES_IGNORE when the
 * scratch statuses could not stand in (more requests than it can hold).
 * That sentinel is NULL in Open MPI but (MPI_Status *)1 in MPICH. */
static inline MPI_Status *gclock_sts_at(gclock_p2p *cx, int i)
{
	if (cx->sts == NULL || cx->sts == MPI_STATUSES_IGNORE)
		return NULL;
	return &cx->sts[i];
}

static GCK_INLINE void gclock_complete_all(gclock_p2p *cx)
{
	uint32_t seq = 0;
	gclock_tbuf *b = cx->b; /* the thread's buffer (gclock_copy_reqs); not NULL when ncopy > 0 */
	MPI_Status *const sts = gclock_sts_at(cx, 0); /* NULL: the call filled no statuses */
	if (cx->ncopy > 0 && sts != NULL && gclock_complete_run_ok(cx, b) && b->cap - b->n >= (uint32_t)cx->ncopy) {
		/* every completion in one loop (requests.h: a call's run), into
		 * consecutive records of the half, which has room for all of
		 * them; what no completion changes is read once: the handles and
		 * statuses (walked by pointer: a call without statuses, more
		 * requests than the scratch holds, takes the per-record path
		 * below), the call's shared fields */
		const MPI_Request *k = b->sc_req;
		const MPI_Request *const end = k + cx->ncopy;
		const MPI_Status *st = sts;
		const gclock_run run = {.t0 = cx->t0,
					.t1 = cx->t1,
					.ra = (uint64_t)(uintptr_t)cx->ra,
					.rof = {-1, cx->op, 0},
					.gen = b->gen,
					.tombs = gclock_req_tombs_now()};
		gclock_event *const e = &b->ev[b->n];
#ifndef GCK_NO_INFLIGHT
		/* the call's first record is the one gclock_fl_enter marked in
		 * flight (slot n has not moved): unmarked before any exit field
		 * goes in, as gclock_put_in does (a call that completes no
		 * tracked request leaves it so: gclock_call_only) */
		__atomic_store_n(&e->pad, 0u, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
		if (b->shq_head != b->shq_tail) {
			const gclock_shared_req *q1 = gclock_shq_one(b);
			if (q1 != NULL) {
				/* the FIFO of shared handles holds one entry (MPICH's
				 * halo step: its second send's): only a completion of
				 * that handle looks at it, the others take the table's
				 * path with the handle kept in a register; once its
				 * entry is taken the FIFO is empty (D104) */
				const uintptr_t fk = q1->key;
				for (; k != end; k++, st++) {
					if (gclock_req_key(*k) != fk) {
						seq += (uint32_t)gclock_complete_next(&run, b, 0, *k, st, seq, e + seq);
						continue;
					}
					seq += (uint32_t)gclock_complete_next(&run, b, 1, *k, st, seq, e + seq);
					if (b->shq_head == b->shq_tail) {
						k++, st++;
						break;
					}
				}
			} else {
				for (; k != end; k++, st++)
					seq += (uint32_t)gclock_complete_next(&run, b, 1, *k, st, seq, e + seq);
			}
		}
		for (; k != end; k++, st++)
			seq += (uint32_t)gclock_complete_next(&run, b, 0, *k, st, seq, e + seq);
		cx->nrec = (int)seq;
		if (GCK_UNLIKELY((b->n += seq) == b->cap))
			gclock_tbuf_full(b);
		return;
	}
	for (int i = 0; i < cx->ncopy; i++)
		seq += (uint32_t)gclock_complete_in(cx, b, b->sc_req[i], gclock_sts_at(cx, i), seq);
}

/* gclock_complete_some: the completed indices of a Waitsome/Testsome. */
static inline void gclock_complete_some(gclock_p2p *cx, int outcount, const int indices[])
{
	uint32_t seq = 0;
	for (int j = 0; j < outcount; j++) {
		int i = indices[j];
		if (i >= 0 && i < cx->ncopy)
			seq += (uint32_t)gclock_complete(cx, cx->b->sc_req[i], gclock_sts_at(cx, j), seq);
	}
}

static GCK_INLINE void gclock_p2p_waitall_pre(gclock_p2p *cx, int count, MPI_Request reqs[],
					  MPI_Status *statuses)
{
	gclock_copy_reqs(cx, count, reqs, statuses);
	/* Beyond the scratch area the handles cannot be remembered; every
	 * request of a Waitall completes, so their slots are freed now (their
	 * completions are not recorded, see docs/explanation/p2p.md). */
	for (int i = cx->ncopy; i < count; i++)
		gclock_forget(reqs[i]);
}

static GCK_INLINE void gclock_p2p_waitall_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   MPI_Status *statuses)
{
	(void)count, (void)reqs, (void)statuses;
	if (rc == MPI_SUCCESS)
		gclock_complete_all(cx);
	gclock_call_only(cx);
}

static inline void gclock_p2p_testall_pre(gclock_p2p *cx, int count, MPI_Request reqs[], int *flag,
					  MPI_Status *statuses)
{
	(void)flag;
	gclock_copy_reqs(cx, count, reqs, statuses);
}

static inline void gclock_p2p_testall_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   int *flag, MPI_Status *statuses)
{
	(void)count, (void)reqs, (void)statuses;
	if (rc == MPI_SUCCESS && *flag)
		gclock_complete_all(cx);
	if (cx->nrec == 0)
		gclock_poll_miss(cx, 0);
}

static inline void gclock_p2p_waitany_pre(gclock_p2p *cx, int count, MPI_Request reqs[], int *index,
					  MPI_Status *status)
{
	(void)index;
	gclock_copy_reqs(cx, count, reqs, MPI_STATUSES_IGNORE);
	cx->sts = NULL;
	cx->st = gclock_own_status(cx, status);
}

static inline void gclock_p2p_waitany_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   int *index, MPI_Status *status)
{
	(void)count, (void)reqs, (void)status;
	if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 0 && *index < cx->ncopy)
		gclock_complete(cx, cx->b->sc_req[*index], cx->st, 0);
	gclock_call_only(cx);
}

static inline void gclock_p2p_testany_pre(gclock_p2p *cx, int count, MPI_Request reqs[], int *index,
					  int *flag, MPI_Status *status)
{
	(void)flag;
	gclock_p2p_waitany_pre(cx, count, reqs, index, status);
}

static inline void gclock_p2p_testany_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   int *index, int *flag, MPI_Status *status)
{
	(void)count, (void)reqs, (void)status;
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && *index >= 0 &&
	    *index < cx->ncopy)
		gclock_complete(cx, cx->b->sc_req[*index], cx->st, 0);
	if (cx->nrec == 0)
		gclock_poll_miss(cx, 0);
}

static inline void gclock_p2p_waitsome_pre(gclock_p2p *cx, int incount, MPI_Request reqs[],
					   int *outcount, int indices[], MPI_Status *statuses)
{
	(void)outcount, (void)indices;
	gclock_copy_reqs(cx, incount, reqs, statuses);
}

static inline void gclock_p2p_waitsome_post(gclock_p2p *cx, int rc, int incount, MPI_Request reqs[],
					    int *outcount, int indices[], MPI_Status *statuses)
{
	(void)incount, (void)reqs, (void)statuses;
	if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
		gclock_complete_some(cx, *outcount, indices);
	gclock_call_only(cx);
}

static inline void gclock_p2p_testsome_pre(gclock_p2p *cx, int incount, MPI_Request reqs[],
					   int *outcount, int indices[], MPI_Status *statuses)
{
	gclock_p2p_waitsome_pre(cx, incount, reqs, outcount, indices, statuses);
}

static inline void gclock_p2p_testsome_post(gclock_p2p *cx, int rc, int incount, MPI_Request reqs[],
					    int *outcount, int indices[], MPI_Status *statuses)
{
	(void)incount, (void)reqs, (void)statuses;
	if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && *outcount > 0)
		gclock_complete_some(cx, *outcount, indices);
	if (cx->nrec == 0)
		gclock_poll_miss(cx, 0);
}

static inline void gclock_p2p_icoll_pre(gclock_p2p *cx, MPI_Comm comm)
{
	cx->cs = gclock_comm_get(comm);
}

static inline void gclock_p2p_icoll_post(gclock_p2p *cx, int rc, int32_t root, MPI_Request *request)
{
	if (cx->cs == NULL)
		return;
	uint32_t seq = cx->cs->seq++; /* counted even if the call failed */
	uint32_t id = 0;
	if (rc == MPI_SUCCESS)
		id = gclock_track(cx, *request, GCK_REQ_COLL, 0, root, 0, 0);
	gclock_put(cx, cx->cs->local, seq, root, 0, 0, id, cx->sent, cx->recv);
}

/*
 * Point-to-point, request and nonblocking-collective recording (issue 7;
 * docs/explanation/p2p.md): the per-call context of a generated wrapper, the event
 * writer gclock_put, runs of unsuccessful polls, and a request's start
 * (gclock_track) and completion (gclock_take, gclock_complete) over the
 * request table of reqtable.h. The rules the wrappers call, one per rule
 * name of cshim/p2p.tbl, are in p2p_rules.h. Everything here is hot path:
 * no Go call, no allocation, no lock, no system call beyond the timer.
 */
#ifndef GCK_REQUESTS_H
#define GCK_REQUESTS_H

#include "gclock.h"
#include "reqtable.h"

/* GCK_REQ_RMA_PUT / _GET: MPI_Rput, MPI_Raccumulate / MPI_Rget,
 * MPI_Rget_accumulate (rma.h): bytes to Sent / Recv at completion. */
enum { GCK_REQ_SEND = 1, GCK_REQ_RECV = 2, GCK_REQ_COLL = 3, GCK_REQ_RMA_PUT = 4, GCK_REQ_RMA_GET = 5 };

/* trace.PeerAny, trace.PeerNull, trace.TagAny */
#define GCK_PEER_ANY (-1)
#define GCK_PEER_NULL (-2)
#define GCK_TAG_CANCELLED (-3) /* trace.TagCancelled */
#define GCK_TAG_ANY (-1)

/* ---- per-call context ----------------------------------------------------- */

typedef struct gclock_p2p {
	uint16_t op;
	void *ra;
	int64_t t0, t1;
	gclock_comm_slot *cs;
	gclock_tbuf *b;
	MPI_Status *st;     /* status handed to PMPI */
	MPI_Status *sts;    /* statuses handed to PMPI (NULL: ignored) */
	MPI_Status own;     /* used when the application ignores its status */
	int ncopy;          /* handles copied into b->sc_req */
	int nrec;           /* events written by this call */
	uint64_t sent, recv;
	int32_t peer, tag;
	MPI_Request saved;  /* single-request calls: the handle before the call */
	uintptr_t wkey;     /* MPI_Win_free: the window handle before the call */
} gclock_p2p;

static inline int32_t gclock_peer_of(const int32_t *peers, int32_t n, int r)
{
	if (r == MPI_PROC_NULL)
		return GCK_PEER_NULL;
	if (r == MPI_ANY_SOURCE)
		return GCK_PEER_ANY;
	if (peers != NULL && r >= 0 && r < n)
		return peers[r];
	return r; /* no member list: the comm rank as given */
}

static inline int32_t gclock_peer(const gclock_comm_slot *cs, int r)
{
	return gclock_peer_of(cs->peers, cs->npeers, r);
}

/* gclock_status_bytes: bytes a status reports. Read from the status
 * itself where the MPI's layout is known, as gclock_status_cancelled does
 * (Open MPI's _ucount; MPICH's count split over count_lo and the bits of
 * count_hi_and_cancelled above its cancelled bit, which Intel MPI,
 * MVAPICH and Cray MPICH share): the byte count MPI_Get_count with
 * MPI_BYTE computes from the same fields, without the call (≈ 7 ns on
 * the Intel VM, 2026-11-26) and without its int limit. Elsewhere
 * MPI_Get_count with MPI_BYTE. */
static inline uint64_t gclock_status_bytes(MPI_Status *st, uint64_t posted)
{
#if defined(OPEN_MPI)
	(void)posted;
	return (uint64_t)st->_ucount;
#elif defined(MPICH)
	(void)posted;
	return ((uint64_t)((unsigned int)st->count_hi_and_cancelled >> 1) << (8 * sizeof(int))) +
	       (uint64_t)(unsigned int)st->count_lo;
#else
	int n = 0;
	if (PMPI_Get_count(st, gclock_byte_type(), &n) != MPI_SUCCESS || n < 0)
		return posted;
	return (uint64_t)n;
#endif
}

static inline gclock_tbuf *gclock_buf(void)
{
	gclock_tbuf *b = gclock_tl_buf;
	if (GCK_UNLIKELY(b == NULL))
		b = gclock_tbuf_new();
	return b;
}

/* gclock_put writes one event of the current call. */
static GCK_INLINE void gclock_put(gclock_p2p *cx, uint32_t comm, uint32_t seq, int32_t root,
			      int32_t peer, int32_t tag, uint32_t req, uint64_t sent,
			      uint64_t recv)
{
	cx->nrec++; /* the call's logic counts it even when not written */
	if (GCK_UNLIKELY(gclock_skip(cx->op)))
		return; /* selective tracing */
	gclock_tbuf *b = gclock_buf();
	if (b == NULL)
		return; /* counted as dropped */
	if (GCK_UNLIKELY(b->poll_n != 0))
		gclock_polls_flush(b);
	gclock_event *e = &b->ev[b->n];
	e->enter_ns = cx->t0;
	e->exit_ns = cx->t1;
	e->sent = sent;
	e->recv = recv;
	e->callsite = (uint64_t)(uintptr_t)cx->ra;
	e->comm = comm;
	e->seq = seq;
	e->root = root;
	e->op = cx->op;
	e->flags = 0;
	e->peer = peer;
	e->tag = tag;
	e->req = req;
	__atomic_store_n(&e->pad, b->gen, __ATOMIC_RELEASE); /* complete */
	if (GCK_UNLIKELY(++b->n == b->cap))
		gclock_tbuf_full(b);
}

/* gclock_poll_miss counts an unsuccessful MPI_Test* / MPI_Iprobe. A run of
 * misses of one op (and call site) on a thread becomes one event. */
static inline void gclock_poll_miss(gclock_p2p *cx, uint32_t comm)
{
	if (GCK_UNLIKELY(gclock_skip(cx->op)))
		return;
	gclock_tbuf *b = gclock_buf();
	if (b == NULL)
		return;
	if (b->poll_n != 0 && (b->poll_op != cx->op || b->poll_comm != comm ||
			       b->poll_pc != (uint64_t)(uintptr_t)cx->ra || b->poll_n == 0xffffffffu))
		gclock_polls_flush(b);
	if (b->poll_n == 0) {
		b->poll_op = cx->op;
		b->poll_comm = comm;
		b->poll_pc = (uint64_t)(uintptr_t)cx->ra;
		b->poll_t0 = cx->t0;
		b->poll_dur = 0;
	}
	b->poll_n++;
	b->poll_dur += cx->t1 - cx->t0;
}


/* gclock_track enters a new request into the table (or the thread's FIFO
 * of shared handles); returns its id. */
static GCK_INLINE uint32_t gclock_track(gclock_p2p *cx, MPI_Request r, uint16_t kind,
				    uint16_t persistent, int32_t peer, int32_t tag,
				    uint64_t bytes)
{
	gclock_tbuf *b = gclock_buf();
	uint32_t id = gclock_req_id(b);
	uintptr_t k = gclock_req_key(r);
	const int fifo = !persistent && b != NULL && b->shq != NULL &&
			 b->shq_tail - b->shq_head < GCK_SHARED_CAP;
	gclock_req_slot *s;
	if (!gclock_mt) {
		int live;
		s = gclock_req_walk(k, &live);
		if (fifo && (live || (b->shq_head != b->shq_tail && gclock_shq_find(b, k, 0) != NULL))) {
			gclock_shq_push(b, cx->cs, k, id, kind, peer, tag, bytes);
			return id;
		}
		if (live) /* a second entry of k (gclock_req_unique) */
			gclock_req_dups = 1;
		if (s != NULL)
			s->key = GCK_REQ_BUSY;
		else
			__atomic_fetch_add(&gclock_req_lost, 1, __ATOMIC_RELAXED);
	} else {
		if (fifo && (gclock_req_find(k) != NULL || gclock_shq_find(b, k, 0) != NULL)) {
			gclock_shq_push(b, cx->cs, k, id, kind, peer, tag, bytes);
			return id;
		}
		s = gclock_req_claim(k);
	}
	if (s != NULL) {
		s->bytes = bytes;
		s->peers = cx->cs->peers;
		s->npeers = cx->cs->npeers;
		s->id = id;
		s->comm = cx->cs->local;
		s->peer = peer;
		s->tag = tag;
		s->kind = kind;
		s->persistent = persistent;
		s->owner = b;
		gclock_req_publish(s, k);
	}
	return id;
}

/* gclock_take finds the oldest request of handle key (table or the
 * thread's FIFO of shared handles), copies it to *out and ends its
 * bookkeeping (a persistent request stays in the table unless
 * free_persistent). For a receive with a status st it sets *src to the
 * status's source as a world rank, read from the request's member list
 * before the entry ends: once it has, the list may be freed (comms.c's
 * sweep: an entry it sees ended was ended by a release store, after this
 * read). out->peers is not to be read. Returns 0 if the handle is not
 * tracked. */
static GCK_INLINE int gclock_take(uintptr_t key, int free_persistent, const MPI_Status *st,
				  gclock_shared_req *out, int32_t *src)
{
	gclock_tbuf *b = gclock_tl_buf;
	gclock_req_slot *s = gclock_req_find_owned(key, b);
	gclock_shared_req *q = (b != NULL && b->shq_head != b->shq_tail) ? gclock_shq_find(b, key, 0) : NULL;
	if (s == NULL && q == NULL)
		return 0;
	/* The older of the two, if the table's entry was started by this
	 * thread; another thread's shared handle is never this thread's. */
	if (s != NULL && q != NULL && s->owner == (const void *)b && (int32_t)(q->id - s->id) > 0)
		q = NULL;
	if (q != NULL) {
		*out = *q;
		if (st != NULL && q->kind == GCK_REQ_RECV)
			*src = gclock_peer_of(q->peers, q->npeers, st->MPI_SOURCE);
		gclock_shq_consume(b, q);
		return 1;
	}
	out->key = key;
	out->bytes = s->bytes;
	out->id = s->id;
	out->comm = s->comm;
	out->peer = s->peer;
	out->tag = s->tag;
	out->kind = s->kind;
	if (st != NULL && s->kind == GCK_REQ_RECV)
		*src = gclock_peer_of(s->peers, s->npeers, st->MPI_SOURCE);
	if (!s->persistent || free_persistent)
		gclock_req_drop(s);
	return 1;
}

/* gclock_status_cancelled reads MPI_Test_cancelled's answer from the
 * status without a call (Open MPI's _cancelled field, the low bit of
 * MPICH's count_hi_and_cancelled, which Intel MPI, MVAPICH and Cray MPICH
 * share). */
static inline int gclock_status_cancelled(const MPI_Status *st)
{
#if defined(OPEN_MPI)
	return st->_cancelled != 0;
#elif defined(MPICH)
	return (st->count_hi_and_cancelled & 1) != 0;
#else
	int c = 0;
	PMPI_Test_cancelled(st, &c);
	return c;
#endif
}

/* gclock_complete records the completion of the request whose handle was
 * k (st: its status, NULL when none was obtained); seq numbers the event
 * within the call. Returns 1 if the request was a tracked one. */
static GCK_INLINE int gclock_complete(gclock_p2p *cx, MPI_Request k, MPI_Status *st, uint32_t seq)
{
	gclock_shared_req r;
	int32_t src = GCK_PEER_ANY;
	if (!gclock_take(gclock_req_key(k), 0, st, &r, &src))
		return 0;
	int32_t peer = r.peer, tag = r.tag;
	uint64_t sent = 0, recv = 0;
	switch (r.kind) {
	case GCK_REQ_SEND:
		sent = r.bytes;
		if (st != NULL && gclock_status_cancelled(st)) {
			tag = GCK_TAG_CANCELLED;
			sent = 0;
		}
		break;
	case GCK_REQ_RECV:
		recv = r.bytes;
		if (st != NULL && gclock_status_cancelled(st)) {
			tag = GCK_TAG_CANCELLED;
			recv = 0;
		} else if (st != NULL) {
			peer = src;
			tag = st->MPI_TAG;
			recv = peer == GCK_PEER_NULL ? 0 : gclock_status_bytes(st, r.bytes);
		}
		break;
	case GCK_REQ_RMA_PUT: /* MPI_Rput, MPI_Raccumulate (rma.h) */
		sent = r.bytes;
		break;
	case GCK_REQ_RMA_GET: /* MPI_Rget, MPI_Rget_accumulate */
		recv = r.bytes;
		break;
	default: /* nonblocking collective: bytes were recorded at the start */
		peer = 0;
		tag = 0;
		break;
	}
	gclock_put(cx, r.comm, seq, -1, peer, tag, r.id, sent, recv);
	return 1;
}

/* gclock_forget drops the newest request of handle k unrecorded (the
 * positions of a Waitall beyond the scratch area, which are the newest
 * when request arrays are in start order). */
static inline void gclock_forget(MPI_Request k)
{
	uintptr_t key = gclock_req_key(k);
	gclock_tbuf *b = gclock_tl_buf;
	gclock_shared_req *q = (b != NULL && b->shq_head != b->shq_tail) ? gclock_shq_find(b, key, 1) : NULL;
	if (q != NULL) {
		gclock_shq_consume(b, q);
		return;
	}
	gclock_req_slot *s = gclock_req_find(key);
	if (s != NULL && !s->persistent)
		gclock_req_drop(s);
}

/* gclock_copy_reqs saves the handles of a multi-request call (they are
 * overwritten with MPI_REQUEST_NULL by the call) and picks the statuses to
 * hand to PMPI: the application's, else the thread's scratch if count fits,
 * else none (MPI_STATUSES_IGNORE: values as posted, see docs/explanation/p2p.md). */
static inline void gclock_copy_reqs(gclock_p2p *cx, int count, const MPI_Request reqs[],
				    MPI_Status *statuses)
{
	cx->b = gclock_buf();
	cx->ncopy = 0;
	cx->sts = statuses;
	if (cx->b == NULL || cx->b->sc_req == NULL || count <= 0)
		return;
	if (GCK_UNLIKELY(count > cx->b->sc_cap) && reqs != cx->b->sc_req)
		(void)gclock_scratch_grow(cx->b, count);
	int cap = cx->b->sc_cap;
	int n = count < cap ? count : cap;
	for (int i = 0; i < n; i++)
		cx->b->sc_req[i] = reqs[i];
	cx->ncopy = n;
	if (statuses == MPI_STATUSES_IGNORE && count <= cap)
		cx->sts = cx->b->sc_st;
}

static inline void gclock_p2p_begin(gclock_p2p *cx)
{
	cx->cs = NULL;
	cx->b = NULL;
	cx->st = NULL;
	cx->sts = NULL;
	cx->ncopy = 0;
	cx->nrec = 0;
	cx->sent = 0;
	cx->recv = 0;
	cx->peer = 0;
	cx->tag = 0;
}

static inline MPI_Status *gclock_own_status(gclock_p2p *cx, MPI_Status *status)
{
	return status == MPI_STATUS_IGNORE ? &cx->own : status;
}

/* A completion call that completed no tracked request is still recorded
 * (Wait*) as one event with Req 0. */
static inline void gclock_call_only(gclock_p2p *cx)
{
	if (cx->nrec == 0)
		gclock_put(cx, 0, 0, -1, 0, 0, 0, 0, 0);
}

#endif

/*
 * requests.c: point-to-point, request and nonblocking-collective recording
 * (declared, with what each does, in requests.h): the event writer
 * gclock_put, runs of unsuccessful polls, a request's start and
 * completion over the request table (reqtable.c). Hot path, static inline,
 * compiled into libgclock.c before p2p_rules.c and rma.c.
 */
#include "requests.h"
#include "reqtable.h"

/* gclock_peer_of tries a member first: MPI_PROC_NULL and MPI_ANY_SOURCE
 * are negative in every MPI the shim builds with, so a rank in [0, n)
 * is neither, and one unsigned comparison finds it. */
_Static_assert(MPI_PROC_NULL < 0 && MPI_ANY_SOURCE < 0, "the special ranks are negative");

static GCK_INLINE int32_t gclock_peer_of(const int32_t *peers, int32_t n, int r)
{
	if (GCK_LIKELY((uint32_t)r < (uint32_t)n) && peers != NULL)
		return peers[r];
	if (r == MPI_PROC_NULL)
		return GCK_PEER_NULL;
	if (r == MPI_ANY_SOURCE)
		return GCK_PEER_ANY;
	return r; /* no member list (or out of range): the comm rank as given */
}

static GCK_INLINE int32_t gclock_peer(const gclock_comm_slot *cs, int r)
{
	return gclock_peer_of(cs->peers, cs->npeers, r);
}

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

/* gclock_put_exit stores what only the call's return knows into record e
 * of b (exit time, bytes, instance, request id), publishes it with its
 * half's generation and moves b on: the last step of every record
 * gclock_put_in writes. */
static GCK_INLINE void gclock_put_exit(const gclock_p2p *cx, gclock_tbuf *b, gclock_event *e,
				       uint32_t seq, uint32_t req, uint64_t sent, uint64_t recv)
{
	e->exit_ns = cx->t1;
	e->sent = sent;
	e->recv = recv;
	e->seq = seq;
	e->req = req;
	__atomic_store_n(&e->pad, b->gen, __ATOMIC_RELEASE); /* complete */
	if (GCK_UNLIKELY(++b->n == b->cap))
		gclock_tbuf_full(b);
}

static GCK_INLINE void gclock_put_in(gclock_p2p *cx, gclock_tbuf *b, int same, uint32_t comm,
				     uint32_t seq, int32_t root, int32_t peer, int32_t tag, uint32_t req,
				     uint64_t sent, uint64_t recv)
{
	int first = cx->nrec++ == 0; /* the call's logic counts it even when not written */
	if (GCK_UNLIKELY(gclock_skip(cx->op))) {
#ifndef GCK_NO_INFLIGHT
		if (first)
			gclock_fl_clear(); /* marked at entry, no record */
#endif
		return; /* selective tracing */
	}
	gclock_event *e;
#ifndef GCK_NO_INFLIGHT
	if ((same & GCK_SAME_LOC) && first && cx->fl != NULL) {
		/* A send's or a request start's first record: the marker
		 * returned it and ended any run of polls before it (coll 2), and
		 * it is still the thread's next (only this thread writes its
		 * buffer); it has the comm, root, peer and tag already, and the
		 * fields stored here are none the in-flight reader takes from it
		 * (gclock.h GCK_FLF_*): it stays marked until its pad. b is
		 * that buffer: the caller read gclock_tl_buf, which was set
		 * before the marker took the record. */
		e = cx->fl;
		gclock_put_exit(cx, b, e, seq, req, sent, recv);
		return;
	}
#endif
	if (GCK_UNLIKELY(b == NULL) && (b = gclock_tbuf_new()) == NULL)
		return; /* counted as dropped */
	if (GCK_UNLIKELY(b->poll_n != 0)) {
		gclock_polls_flush(b); /* over the marked record (it clears it first) */
		first = 0;
	}
	e = &b->ev[b->n];
#ifndef GCK_NO_INFLIGHT
	if (first) {
		/* The call's first record is the one gclock_fl_enter marked in
		 * flight (slot n has not moved: only this thread writes its
		 * buffer): only what the entry did not store as the record
		 * keeps it goes in (a send's on a path above: GCK_SAME_LOC
		 * without the marker's record, or behind a run of polls). Any
		 * other is unmarked first, so that no exit field is read as
		 * part of the call in flight. */
		if (!(same & GCK_SAME_LOC)) {
			__atomic_store_n(&e->pad, 0u, __ATOMIC_RELAXED);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			e->comm = comm;
			e->root = root;
			e->peer = peer;
			e->tag = tag;
		}
		gclock_put_exit(cx, b, e, seq, req, sent, recv);
		return;
	}
#endif
	(void)same, (void)first;
	e->enter_ns = cx->t0;
	e->callsite = (uint64_t)(uintptr_t)cx->ra;
	e->comm = comm;
	e->root = root;
	e->op = cx->op;
	e->flags = 0;
	e->peer = peer;
	e->tag = tag;
	gclock_put_exit(cx, b, e, seq, req, sent, recv);
}

static GCK_INLINE void gclock_put(gclock_p2p *cx, uint32_t comm, uint32_t seq, int32_t root,
			      int32_t peer, int32_t tag, uint32_t req, uint64_t sent,
			      uint64_t recv)
{
	gclock_put_in(cx, gclock_tl_buf, 0, comm, seq, root, peer, tag, req, sent, recv);
}

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

/* gclock_fifo_room: a start may go to b's FIFO of shared handles. */
static GCK_INLINE int gclock_fifo_room(const gclock_tbuf *b, uint16_t persistent)
{
	return !persistent && b != NULL && b->shq != NULL && b->shq_tail - b->shq_head < GCK_SHARED_CAP;
}

static GCK_INLINE uint32_t gclock_track_in(gclock_p2p *cx, gclock_tbuf *b, MPI_Request r, uint16_t kind,
					   uint16_t persistent, int32_t peer, int32_t tag, uint64_t bytes)
{
	uint32_t id = gclock_req_id(b);
	uintptr_t k = gclock_req_key(r);
	gclock_req_slot *s;
	if (!gclock_mt) {
		int live = 0;
		/* the handle's home slot empty (the usual start): no entry of k
		 * anywhere (below MPI_THREAD_MULTIPLE a chain has no hole and a
		 * key sits in the first table whose window had room), and the
		 * walk would return that slot */
		s = &gclock_reqs[gclock_req_hash(k)];
		if (GCK_LIKELY(s->key == GCK_KEY_EMPTY)) {
			GCK_REQ_PROBE();
		} else if (s->key == k && gclock_fifo_room(b, persistent)) {
			/* k is live at its home slot (MPICH's shared handle of
			 * a send that completed at once, a step's second): the
			 * walk would find it and send the start to the FIFO, as
			 * here without the walk */
			GCK_REQ_PROBE();
			gclock_shq_push(b, cx->cs, k, id, kind, peer, tag, bytes);
			return id;
		} else {
			s = gclock_req_walk(k, &live);
		}
		/* the FIFO is looked at only when k is live or it holds
		 * something (a FIFO entry of k with no table entry) */
		if (GCK_UNLIKELY(live || (b != NULL && b->shq_head != b->shq_tail)) &&
		    gclock_fifo_room(b, persistent) && (live || gclock_shq_find(b, k, 0) != NULL)) {
			gclock_shq_push(b, cx->cs, k, id, kind, peer, tag, bytes);
			return id;
		}
		if (live) /* a second entry of k (gclock_req_unique) */
			gclock_req_dups_seen();
		if (s == NULL)
			gclock_req_lost_one(); /* (a found slot needs no claim: gclock_req_walk) */
	} else {
		if (gclock_fifo_room(b, persistent) && (gclock_req_find(k) != NULL || gclock_shq_find(b, k, 0) != NULL)) {
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

static GCK_INLINE uint32_t gclock_track(gclock_p2p *cx, MPI_Request r, uint16_t kind,
				    uint16_t persistent, int32_t peer, int32_t tag,
				    uint64_t bytes)
{
	return gclock_track_in(cx, gclock_buf(), r, kind, persistent, peer, tag, bytes);
}

static GCK_INLINE int gclock_take_in(gclock_tbuf *b, uintptr_t key, int free_persistent, const MPI_Status *st,
				     gclock_shared_req *out, int32_t *src)
{
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

static GCK_INLINE int gclock_take(uintptr_t key, int free_persistent, const MPI_Status *st,
				  gclock_shared_req *out, int32_t *src)
{
	return gclock_take_in(gclock_tl_buf, key, free_persistent, st, out, src);
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

static GCK_INLINE void gclock_completion_values(const gclock_shared_req *r, const MPI_Status *st, int32_t src,
					      int32_t *peerp, int32_t *tagp, uint64_t *sentp, uint64_t *recvp)
{
	int32_t peer = r->peer, tag = r->tag;
	uint64_t sent = 0, recv = 0;
	switch (r->kind) {
	case GCK_REQ_SEND:
		sent = r->bytes;
		if (st != NULL && gclock_status_cancelled(st)) {
			tag = GCK_TAG_CANCELLED;
			sent = 0;
		}
		break;
	case GCK_REQ_RECV:
		recv = r->bytes;
		if (st != NULL && gclock_status_cancelled(st)) {
			tag = GCK_TAG_CANCELLED;
			recv = 0;
		} else if (st != NULL) {
			peer = src;
			tag = st->MPI_TAG;
			recv = peer == GCK_PEER_NULL ? 0 : gclock_status_bytes((MPI_Status *)st, r->bytes);
		}
		break;
	case GCK_REQ_RMA_PUT: /* MPI_Rput, MPI_Raccumulate (rma.h) */
		sent = r->bytes;
		break;
	case GCK_REQ_RMA_GET: /* MPI_Rget, MPI_Rget_accumulate */
		recv = r->bytes;
		break;
	default: /* nonblocking collective: bytes were recorded at the start */
		peer = 0;
		tag = 0;
		break;
	}
	*peerp = peer;
	*tagp = tag;
	*sentp = sent;
	*recvp = recv;
}

static GCK_INLINE int gclock_complete_in(gclock_p2p *cx, gclock_tbuf *b, MPI_Request k, MPI_Status *st,
					 uint32_t seq)
{
	gclock_shared_req r;
	int32_t src = GCK_PEER_ANY;
	if (!gclock_take_in(b, gclock_req_key(k), 0, st, &r, &src))
		return 0;
	int32_t peer, tag;
	uint64_t sent, recv;
	gclock_completion_values(&r, st, src, &peer, &tag, &sent, &recv);
	gclock_put_in(cx, b, 0, r.comm, seq, -1, peer, tag, r.id, sent, recv);
	return 1;
}

static GCK_INLINE int gclock_complete_run_ok(const gclock_p2p *cx, const gclock_tbuf *b)
{
	return !gclock_skip(cx->op) && gclock_req_unique() && b->poll_n == 0;
}

static GCK_INLINE int gclock_complete_next(const gclock_run *run, gclock_tbuf *b, int fifo, MPI_Request k,
					   const MPI_Status *st, uint32_t seq, gclock_event *e)
{
	const uintptr_t key = gclock_req_key(k);
	gclock_req_slot *s = gclock_req_find_unique(key);
	gclock_shared_req r;
	int32_t src = GCK_PEER_ANY;
	if (fifo && b->shq_head != b->shq_tail) {
		/* the thread's FIFO holds shared handles (MPICH: a send that
		 * completed at once): the older of its entry and the table's,
		 * as gclock_take_in decides */
		gclock_shared_req *q = gclock_shq_oldest(b, key);
		if (q != NULL && (s == NULL || s->owner != (const void *)b || (int32_t)(q->id - s->id) < 0)) {
			r = *q;
			if (st != NULL && q->kind == GCK_REQ_RECV)
				src = gclock_peer_of(q->peers, q->npeers, st->MPI_SOURCE);
			gclock_shq_consume(b, q);
			goto write;
		}
	}
	if (s == NULL)
		return 0;
	r.bytes = s->bytes;
	r.id = s->id;
	r.comm = s->comm;
	r.peer = s->peer;
	r.tag = s->tag;
	r.kind = s->kind;
	if (st != NULL && s->kind == GCK_REQ_RECV)
		src = gclock_peer_of(s->peers, s->npeers, st->MPI_SOURCE);
	if (!s->persistent)
		gclock_req_drop_as(s, run->tombs);
write:;
	int32_t peer, tag;
	uint64_t sent, recv;
	gclock_completion_values(&r, st, src, &peer, &tag, &sent, &recv);
	/* Pairs of adjacent 32-bit fields, and root with op and flags, are
	 * stored as one 64-bit word each (a struct of the fields in record
	 * order, copied whole: endian-neutral); the call's values come from
	 * run, locals the record's stores cannot alias. */
	const gclock_rec_cs cs = {r.comm, seq};
	const gclock_rec_pt pt = {peer, tag};
	e->enter_ns = run->t0;
	e->exit_ns = run->t1;
	e->sent = sent;
	e->recv = recv;
	e->callsite = run->ra;
	memcpy(&e->comm, &cs, sizeof cs);
	memcpy(&e->root, &run->rof, sizeof run->rof);
	memcpy(&e->peer, &pt, sizeof pt);
	e->req = r.id;
	__atomic_store_n(&e->pad, run->gen, __ATOMIC_RELEASE); /* complete */
	return 1;
}

static GCK_INLINE int gclock_complete(gclock_p2p *cx, MPI_Request k, MPI_Status *st, uint32_t seq)
{
	return gclock_complete_in(cx, gclock_tl_buf, k, st, seq); /* one read for the take and the event */
}

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
	cx->fl = NULL;
}

static inline MPI_Status *gclock_own_status(gclock_p2p *cx, MPI_Status *status)
{
	return status == MPI_STATUS_IGNORE ? &cx->own : status;
}

static inline void gclock_call_only(gclock_p2p *cx)
{
	if (cx->nrec == 0)
		gclock_put(cx, 0, 0, -1, 0, 0, 0, 0, 0);
}

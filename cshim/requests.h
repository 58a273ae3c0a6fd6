/*
 * Point-to-point, request and nonblocking-collective recording (issue 7;
 * docs/p2p.md). The wrappers are generated from cshim/p2p.tbl into
 * wrappers_gen.c; each calls gclock_p2p_<rule>_pre before and
 * gclock_p2p_<rule>_post after its PMPI function. Everything here is hot
 * path: no Go call, no allocation, no lock, no system call beyond the timer.
 *
 * Request table: a fixed 16384-slot open-addressing table keyed by the
 * MPI_Request handle, lock-free (a slot is claimed with one CAS of its key
 * and published with a release store; lookups are acquire loads). Probe
 * chains are bounded (GCK_REQ_PROBES): a request that finds no free
 * slot in its chain is recorded at its start but its completion is not
 * linked (counted in gclock_req_lost). A slot is freed (tombstone) when its
 * request completes, or when MPI_Request_free drops it. A handle that
 * stands for several live requests goes to a per-thread FIFO (see
 * "shared handles" below).
 *
 * Request ids (trace.Event.Req) are per rank, from 1, in start order; a
 * persistent request keeps the id of its MPI_*_init for all activations.
 */
#ifndef GCK_REQUESTS_H
#define GCK_REQUESTS_H

#include "gclock.h"

/* GCK_REQ_RMA_PUT / _GET: MPI_Rput, MPI_Raccumulate / MPI_Rget,
 * MPI_Rget_accumulate (rma.h): bytes to Sent / Recv at completion. */
enum { GCK_REQ_SEND = 1, GCK_REQ_RECV = 2, GCK_REQ_COLL = 3, GCK_REQ_RMA_PUT = 4, GCK_REQ_RMA_GET = 5 };

/* trace.PeerAny, trace.PeerNull, trace.TagAny */
#define GCK_PEER_ANY (-1)
#define GCK_PEER_NULL (-2)
#define GCK_TAG_CANCELLED (-3) /* trace.TagCancelled */
#define GCK_TAG_ANY (-1)

#define GCK_REQ_BITS 14
#define GCK_REQ_SLOTS (1u << GCK_REQ_BITS)
#define GCK_REQ_PROBES 64
/* Request ids a thread takes from the shared counter at a time. */
#define GCK_REQ_BLOCK 4096u
#define GCK_REQ_BUSY (~(uintptr_t)1) /* being filled in */

typedef struct gclock_req_slot {
	uintptr_t key;        /* handle; GCK_KEY_EMPTY / _TOMB / GCK_REQ_BUSY */
	uint64_t bytes;       /* posted bytes (count x type size) */
	const int32_t *peers; /* comm rank -> world rank, for statuses */
	int32_t npeers;
	uint32_t id;          /* trace.Event.Req */
	uint32_t comm;        /* communicator local index */
	int32_t peer;         /* world rank, GCK_PEER_ANY / _NULL */
	int32_t tag;
	uint16_t kind;        /* GCK_REQ_* */
	uint16_t persistent;  /* MPI_*_init: kept across completions */
	const void *owner;    /* thread buffer of the starting thread */
} gclock_req_slot;

static gclock_req_slot gclock_reqs[GCK_REQ_SLOTS];
static uint32_t gclock_req_ids;  /* id blocks handed out (GCK_REQ_BLOCK ids each) */
static uint64_t gclock_req_lost; /* requests whose completion cannot be linked */
/* gclock_req_dups: set once the table may hold two entries of one handle
 * (gclock_req_unique). */
static int gclock_req_dups;

static inline uintptr_t gclock_req_key(MPI_Request r) { return (uintptr_t)r; }

static inline uint32_t gclock_req_hash(uintptr_t k)
{
	return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - GCK_REQ_BITS));
}

/* gclock_req_unique: every handle has at most one entry in the table, so
 * a lookup may stop at its first match. Holds below MPI_THREAD_MULTIPLE
 * until a start enters a handle that is already there (a persistent
 * request, or a shared handle when the thread's FIFO is full):
 * gclock_track sees that in its walk and sets gclock_req_dups for good.
 * Under MPI_THREAD_MULTIPLE two threads can enter one shared handle at
 * the same moment, so lookups walk the whole chain. */
static inline int gclock_req_unique(void)
{
	return !gclock_mt && !gclock_req_dups;
}

/* gclock_req_claim returns a slot whose key is GCK_REQ_BUSY, to be
 * filled and published with gclock_req_publish; NULL if the chain is full.
 * Under MPI_THREAD_MULTIPLE (below it gclock_req_walk finds the slot). */
static inline gclock_req_slot *gclock_req_claim(uintptr_t k)
{
	uint32_t h = gclock_req_hash(k);
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &gclock_reqs[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (sk == GCK_KEY_EMPTY || sk == GCK_KEY_TOMB) {
			if (__atomic_compare_exchange_n(&s->key, &sk, GCK_REQ_BUSY, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				return s;
		}
	}
	__atomic_fetch_add(&gclock_req_lost, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* gclock_req_walk is the start's one walk of k's chain below
 * MPI_THREAD_MULTIPLE (no other thread is in MPI): it reports whether k
 * has a live entry (*live) and returns the chain's first free slot, NULL
 * if none; the caller claims it with a plain store (a locked instruction
 * would wait for the event record's stores before it to drain). One walk
 * instead of gclock_req_find and then gclock_req_claim. */
static inline gclock_req_slot *gclock_req_walk(uintptr_t k, int *live)
{
	uint32_t h = gclock_req_hash(k);
	gclock_req_slot *fs = NULL;
	int found = 0;
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &gclock_reqs[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = s->key;
		if (sk == k) {
			found = 1;
		} else if (sk == GCK_KEY_EMPTY) {
			if (fs == NULL)
				fs = s;
			break;
		} else if (sk == GCK_KEY_TOMB && fs == NULL) {
			fs = s;
		}
	}
	*live = found;
	return fs;
}

static inline void gclock_req_publish(gclock_req_slot *s, uintptr_t k)
{
	__atomic_store_n(&s->key, k, __ATOMIC_RELEASE);
}

/* gclock_req_find returns the oldest (lowest id) entry of handle k (ids
 * rise within a thread, gclock_req_id; entries of one handle from several
 * threads at once are ordered by their blocks, not by time). One
 * handle can stand for several live requests: Open MPI hands out its
 * shared, already complete ompi_request_empty for every MPI_Isend sent
 * inline, and MPICH has similar built-in completed requests. Applications
 * keep request arrays in start order, so the oldest entry is the one the
 * first such handle in a call stands for. */
static inline gclock_req_slot *gclock_req_find(uintptr_t k)
{
	uint32_t h = gclock_req_hash(k);
	const int unique = gclock_req_unique();
	gclock_req_slot *best = NULL;
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &gclock_reqs[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (sk == k) {
			if (unique)
				return s;
			if (best == NULL || (int32_t)(s->id - best->id) < 0)
				best = s;
		} else if (sk == GCK_KEY_EMPTY) {
			break;
		}
	}
	return best;
}

/* gclock_req_find_owned is gclock_req_find preferring the oldest entry
 * started by the thread whose buffer is owner: two threads can enter the
 * same shared handle into the table at the same moment, and each must get
 * its own back. */
static inline gclock_req_slot *gclock_req_find_owned(uintptr_t k, const void *owner)
{
	uint32_t h = gclock_req_hash(k);
	const int unique = gclock_req_unique();
	gclock_req_slot *best = NULL, *mine = NULL;
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &gclock_reqs[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (sk == k) {
			if (unique)
				return s;
			if (best == NULL || (int32_t)(s->id - best->id) < 0)
				best = s;
			if (s->owner == owner && (mine == NULL || (int32_t)(s->id - mine->id) < 0))
				mine = s;
		} else if (sk == GCK_KEY_EMPTY) {
			break;
		}
	}
	return mine != NULL ? mine : best;
}

static inline void gclock_req_drop(gclock_req_slot *s)
{
	__atomic_store_n(&s->key, GCK_KEY_TOMB, __ATOMIC_RELEASE);
}

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

/* gclock_req_id hands out a request id, unique in the process and never
 * 0. Each thread takes a block of GCK_REQ_BLOCK ids from the shared
 * counter at a time, so ids rise within a thread (gclock_take relies on
 * that for one thread's requests) and the hot path has no locked
 * instruction (perf put ≈ 4.5% of a halo exchange's samples on the shared
 * counter's lock xadd, which waits for the event record's stores). */
static inline uint32_t gclock_req_id(gclock_tbuf *b)
{
	/* Block k (from 1) holds ids (k-1)*GCK_REQ_BLOCK+1 .. k*GCK_REQ_BLOCK:
	 * one thread's ids run 1, 2, 3, ... */
	if (GCK_UNLIKELY(b == NULL))
		return (__atomic_add_fetch(&gclock_req_ids, 1, __ATOMIC_RELAXED) - 1) * GCK_REQ_BLOCK + 1;
	if (GCK_UNLIKELY(b->req_next == b->req_end)) {
		b->req_next = (__atomic_add_fetch(&gclock_req_ids, 1, __ATOMIC_RELAXED) - 1) * GCK_REQ_BLOCK + 1;
		b->req_end = b->req_next + GCK_REQ_BLOCK;
	}
	uint32_t id = b->req_next++;
	if (GCK_UNLIKELY(id == 0)) /* after 2^32 ids: 0 means "no request"; */
		return gclock_req_id(b); /* it ends its block, so take the next */
	return id;
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

/* gclock_polls_flush writes the thread's pending run of unsuccessful
 * polls as one gclock_polls event: enter = first call's entry, duration =
 * the summed time inside the calls, Tag = the polled op, Req = calls. */
void gclock_polls_flush(gclock_tbuf *b)
{
	uint32_t n = b->poll_n;
	if (n == 0)
		return;
	b->poll_n = 0;
	gclock_event *e = &b->ev[b->n];
	e->enter_ns = b->poll_t0;
	e->exit_ns = b->poll_t0 + b->poll_dur;
	e->sent = 0;
	e->recv = 0;
	e->callsite = b->poll_pc;
	e->comm = b->poll_comm;
	e->seq = 0;
	e->root = -1;
	e->op = GCK_OP_GCLOCK_POLLS;
	e->flags = 0;
	e->peer = GCK_PEER_ANY;
	e->tag = (int32_t)b->poll_op;
	e->req = n;
	__atomic_store_n(&e->pad, b->gen, __ATOMIC_RELEASE); /* complete */
	if (++b->n == b->cap)
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

/* ---- shared handles --------------------------------------------------------
 * A start whose handle already stands for a live request (Open MPI returns
 * its shared, already complete ompi_request_empty for every inline send)
 * goes to the starting thread's FIFO instead of the table, so any number
 * of them can be outstanding; a completion of such a handle takes the
 * oldest request (table or FIFO) with it. */

/* gclock_shq_find returns the oldest FIFO entry of handle k, or NULL;
 * newest instead when newest is set. */
static inline gclock_shared_req *gclock_shq_find(gclock_tbuf *b, uintptr_t k, int newest)
{
	if (b == NULL || b->shq == NULL)
		return NULL;
	gclock_shared_req *found = NULL;
	for (uint32_t i = b->shq_head; i != b->shq_tail; i++) {
		gclock_shared_req *q = &b->shq[i % GCK_SHARED_CAP];
		if (q->key == k) {
			found = q;
			if (!newest)
				break;
		}
	}
	return found;
}

static inline void gclock_shq_consume(gclock_tbuf *b, gclock_shared_req *q)
{
	q->key = 0;
	while (b->shq_head != b->shq_tail && b->shq[b->shq_head % GCK_SHARED_CAP].key == 0)
		b->shq_head++;
}

/* gclock_shq_push appends a start of the shared handle k to the thread's
 * FIFO (the caller checked that it has room). */
static inline void gclock_shq_push(gclock_tbuf *b, const gclock_comm_slot *cs, uintptr_t k,
				   uint32_t id, uint16_t kind, int32_t peer, int32_t tag,
				   uint64_t bytes)
{
	gclock_shared_req *q = &b->shq[b->shq_tail++ % GCK_SHARED_CAP];
	q->key = k;
	q->bytes = bytes;
	q->peers = cs->peers;
	q->npeers = cs->npeers;
	q->id = id;
	q->comm = cs->local;
	q->peer = peer;
	q->tag = tag;
	q->kind = kind;
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
 * free_persistent). Returns 0 if the handle is not tracked. */
static GCK_INLINE int gclock_take(uintptr_t key, int free_persistent, gclock_shared_req *out)
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
		gclock_shq_consume(b, q);
		return 1;
	}
	out->key = key;
	out->bytes = s->bytes;
	out->peers = s->peers;
	out->npeers = s->npeers;
	out->id = s->id;
	out->comm = s->comm;
	out->peer = s->peer;
	out->tag = s->tag;
	out->kind = s->kind;
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
	if (!gclock_take(gclock_req_key(k), 0, &r))
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
			peer = gclock_peer_of(r.peers, r.npeers, st->MPI_SOURCE);
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
 * else none (MPI_STATUSES_IGNORE: values as posted, see docs/p2p.md). */
static inline void gclock_copy_reqs(gclock_p2p *cx, int count, const MPI_Request reqs[],
				    MPI_Status *statuses)
{
	cx->b = gclock_buf();
	cx->ncopy = 0;
	cx->sts = statuses;
	if (cx->b == NULL || cx->b->sc_req == NULL || count <= 0)
		return;
	int n = count < GCK_SCRATCH ? count : GCK_SCRATCH;
	for (int i = 0; i < n; i++)
		cx->b->sc_req[i] = reqs[i];
	cx->ncopy = n;
	if (statuses == MPI_STATUSES_IGNORE && count <= GCK_SCRATCH)
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

/* ---- rules (one per rule name in cshim/p2p.tbl) ----------------------------- */

/* send(count, datatype, dest, tag, comm): MPI_Send, Ssend, Rsend, Bsend */
static inline void gclock_p2p_send_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
				       int dest, int tag, MPI_Comm comm)
{
	cx->cs = gclock_comm_get(comm);
	if (cx->cs != NULL) {
		cx->sent = dest == MPI_PROC_NULL ? 0 : gclock_tsize(count, type);
		cx->peer = gclock_peer(cx->cs, dest);
	}
	cx->tag = tag;
}

static inline void gclock_p2p_send_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					int dest, int tag, MPI_Comm comm)
{
	(void)rc, (void)count, (void)type, (void)dest, (void)comm;
	if (cx->cs != NULL)
		gclock_put(cx, cx->cs->local, 0, -1, cx->peer, tag, 0, cx->sent, 0);
}

/* recv(count, datatype, source, tag, comm, status) */
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

/* sendrecv(sendcount, sendtype, dest, sendtag, recvcount, recvtype, source,
 * recvtag, comm, status): event 0 the send half, event 1 the receive half. */
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

/* sendrecv_replace(count, datatype, dest, sendtag, source, recvtag, comm, status) */
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

/* probe(source, tag, comm, status): Recv = size of the message found. */
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

/* iprobe(source, tag, comm, flag, status): recorded when a message is
 * found, else counted as a poll. */
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
					uint16_t kind, uint16_t persistent, int32_t tag);

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

/* mprobe(source, tag, comm, message, status): recorded like MPI_Probe;
 * the message is kept for its receive. */
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

/* improbe(source, tag, comm, flag, message, status): like MPI_Iprobe. */
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

/* mrecv(count, datatype, message, status): recorded like MPI_Recv on the
 * probed message's communicator. */
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

/* imrecv(count, datatype, message, request): recorded like MPI_Irecv of
 * the probed message's source and tag. */
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
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_RECV, 0, cx->tag);
}

/* isend / irecv / send_init / recv_init (count, datatype, peer, tag, comm,
 * request): the request enters the table; the event carries its id. */
static GCK_INLINE void gclock_p2p_start_msg(gclock_p2p *cx, int rc, MPI_Request *request,
					uint16_t kind, uint16_t persistent, int32_t tag)
{
	if (cx->cs == NULL)
		return;
	uint32_t id = 0;
	if (rc == MPI_SUCCESS)
		id = gclock_track(cx, *request, kind, persistent, cx->peer, tag,
				  kind == GCK_REQ_SEND ? cx->sent : cx->recv);
	gclock_put(cx, cx->cs->local, 0, -1, cx->peer, tag, id, cx->sent, cx->recv);
}

static inline void gclock_p2p_isend_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int dest,
					int tag, MPI_Comm comm, MPI_Request *request)
{
	(void)request;
	gclock_p2p_send_pre(cx, count, type, dest, tag, comm);
}

static inline void gclock_p2p_isend_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					 int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	(void)count, (void)type, (void)dest, (void)comm;
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_SEND, 0, tag);
}

static inline void gclock_p2p_irecv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int source,
					int tag, MPI_Comm comm, MPI_Request *request)
{
	(void)request, (void)tag;
	cx->cs = gclock_comm_get(comm);
	if (cx->cs != NULL) {
		cx->recv = source == MPI_PROC_NULL ? 0 : gclock_tsize(count, type);
		cx->peer = gclock_peer(cx->cs, source);
	}
}

static inline void gclock_p2p_irecv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					 int source, int tag, MPI_Comm comm, MPI_Request *request)
{
	(void)count, (void)type, (void)source, (void)comm;
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_RECV, 0, tag);
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
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_SEND, 1, tag);
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
	gclock_p2p_start_msg(cx, rc, request, GCK_REQ_RECV, 1, tag);
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

/* start(request) */
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

/* startall(count, array_of_requests) */
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

/* request_free(request): the request ends without a completion call. */
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
	if (gclock_take(gclock_req_key(cx->saved), 1, &r))
		gclock_put(cx, r.comm, 0, -1, r.peer, r.tag, r.id, 0, 0);
}

/* wait(request, status) */
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

/* test(request, flag, status) */
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

/* gclock_complete_all: every copied request of a Waitall/Testall. */
/* gclock_sts_at is status i of the array the real call filled, or NULL when
 * it filled none: cx->sts is the application's MPI_STATUSES_IGNORE when the
 * scratch statuses could not stand in (more than GCK_SCRATCH requests).
 * That sentinel is NULL in Open MPI but (MPI_Status *)1 in MPICH. */
static inline MPI_Status *gclock_sts_at(gclock_p2p *cx, int i)
{
	if (cx->sts == NULL || cx->sts == MPI_STATUSES_IGNORE)
		return NULL;
	return &cx->sts[i];
}

static inline void gclock_complete_all(gclock_p2p *cx)
{
	uint32_t seq = 0;
	for (int i = 0; i < cx->ncopy; i++)
		seq += (uint32_t)gclock_complete(cx, cx->b->sc_req[i], gclock_sts_at(cx, i), seq);
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

/* waitall(count, array_of_requests, array_of_statuses) */
static inline void gclock_p2p_waitall_pre(gclock_p2p *cx, int count, MPI_Request reqs[],
					  MPI_Status *statuses)
{
	gclock_copy_reqs(cx, count, reqs, statuses);
	/* Beyond the scratch area the handles cannot be remembered; every
	 * request of a Waitall completes, so their slots are freed now (their
	 * completions are not recorded, see docs/p2p.md). */
	for (int i = cx->ncopy; i < count; i++)
		gclock_forget(reqs[i]);
}

static inline void gclock_p2p_waitall_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   MPI_Status *statuses)
{
	(void)count, (void)reqs, (void)statuses;
	if (rc == MPI_SUCCESS)
		gclock_complete_all(cx);
	gclock_call_only(cx);
}

/* testall(count, array_of_requests, flag, array_of_statuses) */
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

/* waitany(count, array_of_requests, index, status) */
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

/* testany(count, array_of_requests, index, flag, status) */
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

/* waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses) */
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

/* testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses) */
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

/* Nonblocking collectives (rule icoll_<byte rule>): the start takes the
 * communicator's next collective sequence number, exactly like a blocking
 * collective, and its request enters the table. */
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

#endif

/*
 * The request table: which live MPI_Request stands for which recorded
 * request (docs/explanation/p2p.md), used by requests.h and rma.h; hot path. A
 * 16384-slot open-addressing table keyed by the MPI_Request handle,
 * lock-free (a slot is claimed with one CAS of its key and published with
 * a release store; lookups are acquire loads). Probe chains are bounded
 * (GCK_REQ_PROBES): a request that finds no free slot in its chain goes to
 * the next table (gclock_req_more), allocated when needed; only when no
 * memory is left is it recorded at its start without its completion
 * (counted in gclock_req_lost). A slot is freed (tombstone) when its request
 * completes, or when MPI_Request_free drops it. A handle that stands for
 * several live requests goes to a per-thread FIFO (see "shared handles"
 * below).
 *
 * Request ids (trace.Event.Req) are per rank, from 1, in start order; a
 * persistent request keeps the id of its MPI_*_init for all activations.
 */
#ifndef GCK_REQTABLE_H
#define GCK_REQTABLE_H

#include <pthread.h>
#include <stdlib.h>

#include "gclock.h"

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
/* More tables of GCK_REQ_SLOTS, allocated when a start finds its window
 * full in every table so far (more live requests than the first table
 * holds: before 2026-11-27 such requests were recorded at their start but
 * never completed, e.g. 20,000 receives posted at once); linked in order,
 * published with a release store, never freed. A key sits in the first
 * table whose window had room, so a search stops at an empty slot. */
typedef struct gclock_req_table {
	struct gclock_req_table *next;
	gclock_req_slot s[GCK_REQ_SLOTS];
} gclock_req_table;
static gclock_req_table *gclock_req_more;
static int gclock_req_nomem; /* GCLOCK_TEST_FAULT=reqtable: no memory for another table */
static pthread_mutex_t gclock_req_more_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t gclock_req_ids;  /* id blocks handed out (GCK_REQ_BLOCK ids each) */
static uint64_t gclock_req_lost; /* requests whose completion cannot be linked (no memory for a table) */
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
/* gclock_req_claim_in claims a free slot of k's window in table t. */
static inline gclock_req_slot *gclock_req_claim_in(gclock_req_slot *t, uintptr_t k)
{
	uint32_t h = gclock_req_hash(k);
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &t[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (sk == GCK_KEY_EMPTY || sk == GCK_KEY_TOMB) {
			if (__atomic_compare_exchange_n(&s->key, &sk, GCK_REQ_BUSY, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				return s;
		}
	}
	return NULL;
}

/* gclock_req_claim_more claims k a slot in the later tables, allocating
 * one when all are full (under a mutex: appended at the tail once). */
static __attribute__((noinline)) gclock_req_slot *gclock_req_claim_more(uintptr_t k)
{
	for (;;) {
		gclock_req_table **tail = &gclock_req_more;
		for (gclock_req_table *t = __atomic_load_n(tail, __ATOMIC_ACQUIRE); t != NULL;
		     t = __atomic_load_n(tail, __ATOMIC_ACQUIRE)) {
			gclock_req_slot *s = gclock_req_claim_in(t->s, k);
			if (s != NULL)
				return s;
			tail = &t->next;
		}
		pthread_mutex_lock(&gclock_req_more_mu);
		if (__atomic_load_n(tail, __ATOMIC_ACQUIRE) == NULL) {
			gclock_req_table *t = gclock_req_nomem ? NULL : calloc(1, sizeof *t); /* keys GCK_KEY_EMPTY */
			if (t == NULL) {
				pthread_mutex_unlock(&gclock_req_more_mu);
				__atomic_fetch_add(&gclock_req_lost, 1, __ATOMIC_RELAXED);
				return NULL;
			}
			__atomic_store_n(tail, t, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&gclock_req_more_mu); /* and try again */
	}
}

static inline gclock_req_slot *gclock_req_claim(uintptr_t k)
{
	gclock_req_slot *s = gclock_req_claim_in(gclock_reqs, k);
	return GCK_LIKELY(s != NULL) ? s : gclock_req_claim_more(k);
}

/* gclock_req_walk is the start's one walk of k's chain below
 * MPI_THREAD_MULTIPLE (no other thread is in MPI): it reports whether k
 * has a live entry (*live) and returns the chain's first free slot, NULL
 * if none; the caller claims it with a plain store (a locked instruction
 * would wait for the event record's stores before it to drain). One walk
 * instead of gclock_req_find and then gclock_req_claim. */
/* gclock_req_walk_in walks k's window of table t: sets *found when k is
 * there and *fs to the first free slot if still NULL; 1 when an empty slot
 * ended the walk (k is in no later table). */
static GCK_INLINE int gclock_req_walk_in(gclock_req_slot *t, uintptr_t k, int *found, gclock_req_slot **fs)
{
	uint32_t h = gclock_req_hash(k);
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &t[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = s->key;
		if (sk == k) {
			*found = 1;
		} else if (sk == GCK_KEY_EMPTY) {
			if (*fs == NULL)
				*fs = s;
			return 1;
		} else if (sk == GCK_KEY_TOMB && *fs == NULL) {
			*fs = s;
		}
	}
	return 0;
}

/* gclock_req_walk_more continues a walk in the later tables (below
 * MPI_THREAD_MULTIPLE: no other thread in MPI), appending a table when no
 * window had room; fs is the walk's free slot so far, *live its finding. */
static __attribute__((noinline)) gclock_req_slot *gclock_req_walk_more(uintptr_t k, gclock_req_slot *fs, int *live)
{
	gclock_req_table **tail = &gclock_req_more;
	for (gclock_req_table *t = *tail; t != NULL; t = *tail) {
		if (gclock_req_walk_in(t->s, k, live, &fs))
			return fs;
		tail = &t->next;
	}
	if (fs != NULL)
		return fs;
	gclock_req_table *t = gclock_req_nomem ? NULL : calloc(1, sizeof *t);
	if (t == NULL)
		return NULL; /* counted lost by the caller */
	__atomic_store_n(tail, t, __ATOMIC_RELEASE);
	return &t->s[gclock_req_hash(k)];
}

static GCK_INLINE gclock_req_slot *gclock_req_walk(uintptr_t k, int *live)
{
	uint32_t h = gclock_req_hash(k);
	gclock_req_slot *fs = NULL;
	int found = 0;
	uint32_t p;
	for (p = 0; p < GCK_REQ_PROBES; p++) {
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
	if (GCK_UNLIKELY(p == GCK_REQ_PROBES) &&
	    (fs == NULL || __atomic_load_n(&gclock_req_more, __ATOMIC_RELAXED) != NULL))
		fs = gclock_req_walk_more(k, fs, live);
	return fs;
}

static inline void gclock_req_publish(gclock_req_slot *s, uintptr_t k)
{
	__atomic_store_n(&s->key, k, __ATOMIC_RELEASE);
}

/* gclock_req_find_owned returns the oldest (lowest id) entry of handle k
 * started by the thread whose buffer is owner, else the oldest entry of k
 * (gclock_req_find): two threads can enter the same shared handle into the
 * table at the same moment, and each must get its own back. */
/* gclock_req_find_in looks through k's window of table t (see
 * gclock_req_find_owned); 1 when an empty slot or, with unique, the first
 * match ended the search. */
static GCK_INLINE int gclock_req_find_in(gclock_req_slot *t, uintptr_t k, const void *owner, int unique,
					 gclock_req_slot **best, gclock_req_slot **mine)
{
	uint32_t h = gclock_req_hash(k);
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &t[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (sk == k) {
			if (unique) {
				*best = s;
				return 1;
			}
			if (*best == NULL || (int32_t)(s->id - (*best)->id) < 0)
				*best = s;
			if (s->owner == owner && (*mine == NULL || (int32_t)(s->id - (*mine)->id) < 0))
				*mine = s;
		} else if (sk == GCK_KEY_EMPTY) {
			return 1;
		}
	}
	return 0;
}

/* gclock_req_find_more continues gclock_req_find_owned in the later
 * tables, from its best and mine so far; returns its answer. */
static __attribute__((noinline)) gclock_req_slot *gclock_req_find_more(uintptr_t k, const void *owner, int unique,
								      gclock_req_slot *best, gclock_req_slot *mine)
{
	for (gclock_req_table *t = __atomic_load_n(&gclock_req_more, __ATOMIC_ACQUIRE); t != NULL;
	     t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE))
		if (gclock_req_find_in(t->s, k, owner, unique, &best, &mine))
			break;
	return mine != NULL ? mine : best;
}

static inline gclock_req_slot *gclock_req_find_owned(uintptr_t k, const void *owner)
{
	uint32_t h = gclock_req_hash(k);
	const int unique = gclock_req_unique();
	gclock_req_slot *best = NULL, *mine = NULL;
	uint32_t p;
	for (p = 0; p < GCK_REQ_PROBES; p++) {
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
	if (GCK_UNLIKELY(p == GCK_REQ_PROBES) && __atomic_load_n(&gclock_req_more, __ATOMIC_ACQUIRE) != NULL)
		return gclock_req_find_more(k, owner, unique, best, mine);
	return mine != NULL ? mine : best;
}

/* gclock_req_nobody: an owner no entry has. */
static const char gclock_req_nobody;

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
	return gclock_req_find_owned(k, &gclock_req_nobody);
}

static inline void gclock_req_drop(gclock_req_slot *s)
{
	__atomic_store_n(&s->key, GCK_KEY_TOMB, __ATOMIC_RELEASE);
}

/* gclock_req_id hands out a request id, unique in the process and never
 * 0. Each thread takes a block of GCK_REQ_BLOCK ids from the shared
 * counter at a time, so ids rise within a thread (gclock_take relies on
 * that for one thread's requests) and the hot path has no locked
 * instruction (perf put ≈ 4.5% of a halo exchange's samples on the shared
 * counter's lock xadd, which waits for the event record's stores). */
static GCK_INLINE uint32_t gclock_req_id(gclock_tbuf *b)
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
	/* Release: what the taker read of q (its member list) comes first
	 * (comms.c's sweep frees lists of entries it sees consumed). */
	__atomic_store_n(&q->key, 0, __ATOMIC_RELEASE);
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
#endif

/*
 * reqtable.c: the request table (declared, with how it works, in
 * reqtable.h): its state, claims, walks, lookups and the threads' FIFOs of
 * shared handles. Hot path, static inline, compiled into libgclock.c
 * before requests.c; the state is static, reached only through the
 * functions here.
 */
#include <pthread.h>
#include <stdlib.h>

#include "reqtable.h"

gclock_req_slot gclock_reqs[GCK_REQ_SLOTS];
gclock_req_table *gclock_req_more;
int gclock_req_nomem; /* GCLOCK_TEST_FAULT=reqtable: no memory for another table */
static pthread_mutex_t gclock_req_more_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t gclock_req_ids;  /* id blocks handed out (GCK_REQ_BLOCK ids each) */
uint64_t gclock_req_lost; /* requests whose completion cannot be linked (no memory for a table) */
/* gclock_req_dups: set once the table may hold two entries of one handle
 * (gclock_req_unique). */
static int gclock_req_dups;
/* gclock_req_tombs: set for good once a later table exists; from then on
 * a freed slot of any table becomes a tombstone (gclock_req_drop), as it
 * always does under MPI_THREAD_MULTIPLE. */
static int gclock_req_tombs;

static GCK_INLINE void gclock_req_dups_seen(void) { gclock_req_dups = 1; }
static GCK_INLINE void gclock_req_lost_one(void) { __atomic_fetch_add(&gclock_req_lost, 1, __ATOMIC_RELAXED); }

static inline uintptr_t gclock_req_key(MPI_Request r) { return (uintptr_t)r; }

static inline uint32_t gclock_req_hash(uintptr_t k)
{
	return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - GCK_REQ_BITS));
}

static inline int gclock_req_unique(void)
{
	return !gclock_mt && !gclock_req_dups;
}

/* gclock_req_claim_in claims a free slot of k's window in table t. */
static inline gclock_req_slot *gclock_req_claim_in(gclock_req_slot *t, uintptr_t k)
{
	uint32_t h = gclock_req_hash(k);
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &t[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		GCK_REQ_PROBE();
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
			__atomic_store_n(&gclock_req_tombs, 1, __ATOMIC_RELAXED); /* (other threads read it) */
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

/* gclock_req_walk_in walks k's window of table t: sets *found when k is
 * there and *fs to the first free slot if still NULL; 1 when an empty slot
 * ended the walk (k is in no later table). */
static GCK_INLINE int gclock_req_walk_in(gclock_req_slot *t, uintptr_t k, int *found, gclock_req_slot **fs)
{
	uint32_t h = gclock_req_hash(k);
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &t[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = s->key;
		GCK_REQ_PROBE();
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
	__atomic_store_n(&gclock_req_tombs, 1, __ATOMIC_RELAXED); /* (other threads read it) */
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
		GCK_REQ_PROBE();
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
		GCK_REQ_PROBE();
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

/* gclock_req_nobody: an owner no entry has. */
static const char gclock_req_nobody;

static inline gclock_req_slot *gclock_req_find_owned(uintptr_t k, const void *owner)
{
	uint32_t h = gclock_req_hash(k);
	const int unique = gclock_req_unique();
	gclock_req_slot *best = NULL, *mine = NULL;
	uint32_t p;
	for (p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &gclock_reqs[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		GCK_REQ_PROBE();
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

static inline gclock_req_slot *gclock_req_find(uintptr_t k)
{
	return gclock_req_find_owned(k, &gclock_req_nobody);
}

/* gclock_req_shift closes the hole at slot i of the first table by
 * backward shifting (below MPI_THREAD_MULTIPLE, no later table): each
 * entry of the cluster after i whose probe path passes i (its home slot
 * is not in (i, j], cyclically) moves into the hole, which moves on to
 * where it was; the last hole becomes empty. Entries only move towards
 * their home, so they stay within their GCK_REQ_PROBES window, and an
 * entry GCK_REQ_PROBES or more slots after the hole cannot have it on
 * its path: the scan ends there even when no slot is empty (a full table
 * whose later table could not be allocated). */
static GCK_INLINE gclock_req_slot *gclock_req_find_unique(uintptr_t k)
{
	uint32_t h = gclock_req_hash(k);
	for (uint32_t p = 0; p < GCK_REQ_PROBES; p++) {
		gclock_req_slot *s = &gclock_reqs[(h + p) & (GCK_REQ_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		GCK_REQ_PROBE();
		if (GCK_LIKELY(sk == k))
			return s;
		if (sk == GCK_KEY_EMPTY)
			return NULL;
	}
	return gclock_req_find(k); /* a full window: the later tables too */
}

static __attribute__((noinline)) void gclock_req_shift(uint32_t i)
{
	const uint32_t mask = GCK_REQ_SLOTS - 1;
	for (uint32_t j = (i + 1) & mask; ((j - i) & mask) < GCK_REQ_PROBES; j = (j + 1) & mask) {
		uintptr_t kj = gclock_reqs[j].key;
		if (kj == GCK_KEY_EMPTY)
			break;
		if (((j - gclock_req_hash(kj)) & mask) >= ((j - i) & mask)) {
			gclock_reqs[i] = gclock_reqs[j];
			i = j;
		}
	}
	__atomic_store_n(&gclock_reqs[i].key, GCK_KEY_EMPTY, __ATOMIC_RELEASE);
}

static GCK_INLINE void gclock_req_drop_as(gclock_req_slot *s, int tombs)
{
	if (GCK_LIKELY(!tombs)) {
		/* s is in the first table, the only one; most often the
		 * next slot is empty and nothing needs to move (the last
		 * slot's next is the first: gclock_req_shift sees to it) */
		if (GCK_LIKELY(s != &gclock_reqs[GCK_REQ_SLOTS - 1] && s[1].key == GCK_KEY_EMPTY))
			__atomic_store_n(&s->key, GCK_KEY_EMPTY, __ATOMIC_RELEASE);
		else
			gclock_req_shift((uint32_t)(s - gclock_reqs));
		return;
	}
	__atomic_store_n(&s->key, GCK_KEY_TOMB, __ATOMIC_RELEASE);
}

static inline void gclock_req_drop(gclock_req_slot *s)
{
	gclock_req_drop_as(s, gclock_req_tombs_now());
}

static GCK_INLINE int gclock_req_tombs_now(void)
{
	return gclock_mt | __atomic_load_n(&gclock_req_tombs, __ATOMIC_RELAXED);
}

static GCK_INLINE uint32_t gclock_req_id(gclock_tbuf *b)
{
	/* Block k (from 1) holds ids (k-1)*GCK_REQ_BLOCK+1 .. k*GCK_REQ_BLOCK:
	 * one thread's ids run 1, 2, 3, ... */
	if (GCK_UNLIKELY(b == NULL))
		return (__atomic_add_fetch(&gclock_req_ids, 1, __ATOMIC_RELAXED) - 1) * GCK_REQ_BLOCK + 1;
	if (GCK_UNLIKELY(b->req_next == b->req_end)) {
		b->req_next = (__atomic_add_fetch(&gclock_req_ids, 1, __ATOMIC_RELAXED) - 1) * GCK_REQ_BLOCK + 1;
		b->req_end = b->req_next + GCK_REQ_BLOCK;
		/* 0 means "no request": the block whose last id would be 0
		 * (after 2^32 ids) ends one id early */
		if (GCK_UNLIKELY(b->req_end == 1))
			b->req_end = 0;
	}
	return b->req_next++;
}

static GCK_INLINE gclock_shared_req *gclock_shq_oldest(gclock_tbuf *b, uintptr_t k)
{
	/* the head entry is live (gclock_shq_consume moves the head past the
	 * taken ones) and the oldest of all */
	gclock_shared_req *q = &b->shq[b->shq_head % GCK_SHARED_CAP];
	if (q->key == k)
		return q;
	if (b->shq_tail - b->shq_head == 1)
		return NULL; /* the only entry is another handle's */
	return gclock_shq_find(b, k, 0);
}

static GCK_INLINE const gclock_shared_req *gclock_shq_one(const gclock_tbuf *b)
{
	/* the head entry is live (gclock_shq_consume moves the head past the
	 * taken ones) */
	return b->shq_tail - b->shq_head == 1 ? &b->shq[b->shq_head % GCK_SHARED_CAP] : NULL;
}

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

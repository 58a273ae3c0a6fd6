/*
 * The request table: which live MPI_Request stands for which recorded
 * request (docs/explanation/p2p.md), used by requests.c and rma.c; hot path. A
 * 16384-slot open-addressing table keyed by the MPI_Request handle,
 * lock-free (a slot is claimed with one CAS of its key and published with
 * a release store; lookups are acquire loads). Probe chains are bounded
 * (GCK_REQ_PROBES): a request that finds no free slot in its chain goes to
 * the next table (gclock_req_more), allocated when needed; only when no
 * memory is left is it recorded at its start without its completion
 * (counted in gclock_req_lost). A slot is freed when its request
 * completes, or when MPI_Request_free drops it: below MPI_THREAD_MULTIPLE,
 * while the first table is the only one, by backward-shift deletion (the
 * entries after it in its cluster that may move closer to their home slot
 * do, so the table holds no tombstone and a chain ends at the first empty
 * slot: the probes per start and lookup stay those of the live requests
 * however many have completed); otherwise with a tombstone
 * (GCK_KEY_TOMB: lock-free claims and lookups of other threads never see
 * an entry move, and a key in a later table stays behind a window with no
 * empty slot). A handle that stands for several live requests goes to a
 * per-thread FIFO (see "shared handles" below).
 *
 * Request ids (trace.Event.Req) are per rank, from 1, in start order; a
 * persistent request keeps the id of its MPI_*_init for all activations.
 *
 * This header declares; the definitions are in reqtable.c (static inline
 * functions, compiled in the one translation unit cshim/libgclock.c;
 * docs/explanation/cshim.md).
 */
#ifndef GCK_REQTABLE_H
#define GCK_REQTABLE_H


#include "gclock.h"

#define GCK_REQ_BITS 14
#define GCK_REQ_SLOTS (1u << GCK_REQ_BITS)
#define GCK_REQ_PROBES 64
/* Request ids a thread takes from the shared counter at a time. */
#define GCK_REQ_BLOCK 4096u
#define GCK_REQ_BUSY (~(uintptr_t)1) /* being filled in */
/* GCK_REQ_PROBE() runs once per slot a walk, claim or lookup reads: a
 * test's counter (tests/progs/reqtable.c defines it before including
 * reqtable.c); nothing in the library. */
#ifndef GCK_REQ_PROBE
#define GCK_REQ_PROBE() ((void)0)
#endif

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
	uint64_t spare;       /* to 64 bytes: a slot's address is one shift */
} gclock_req_slot;
_Static_assert(sizeof(gclock_req_slot) == 64, "a request slot is 64 bytes");

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

/* The table's state seen outside reqtable.c (polls.c): the first table,
 * the later ones, the no-memory fault and the requests lost. Hidden, like
 * gclock.h's declarations. */
#pragma GCC visibility push(hidden)
extern gclock_req_slot gclock_reqs[GCK_REQ_SLOTS];
extern gclock_req_table *gclock_req_more;
extern int gclock_req_nomem;
extern uint64_t gclock_req_lost;
#pragma GCC visibility pop

/* gclock_req_dups_seen notes that the table may now hold two entries of
 * one handle (gclock_req_unique); gclock_req_lost_one counts a request
 * whose completion cannot be linked. */
static GCK_INLINE void gclock_req_dups_seen(void);
static GCK_INLINE void gclock_req_lost_one(void);

static inline uintptr_t gclock_req_key(MPI_Request r);

static inline uint32_t gclock_req_hash(uintptr_t k);

/* gclock_req_unique: every handle has at most one entry in the table, so
 * a lookup may stop at its first match. Holds below MPI_THREAD_MULTIPLE
 * until a start enters a handle that is already there (a persistent
 * request, or a shared handle when the thread's FIFO is full):
 * gclock_track sees that in its walk and sets gclock_req_dups for good.
 * Under MPI_THREAD_MULTIPLE two threads can enter one shared handle at
 * the same moment, so lookups walk the whole chain. */
static inline int gclock_req_unique(void);

/* gclock_req_claim returns a slot whose key is GCK_REQ_BUSY, to be
 * filled and published with gclock_req_publish; NULL if the chain is full.
 * Under MPI_THREAD_MULTIPLE (below it gclock_req_walk finds the slot). */

static inline gclock_req_slot *gclock_req_claim(uintptr_t k);

/* gclock_req_walk is the start's one walk of k's chain below
 * MPI_THREAD_MULTIPLE (no other thread is in MPI): it reports whether k
 * has a live entry (*live) and returns the chain's first free slot, NULL
 * if none; the caller fills it and publishes it (no claim: no other
 * thread can look at the slot meanwhile, and a locked instruction would
 * wait for the event record's stores before it to drain). One walk
 * instead of gclock_req_find and then gclock_req_claim. */

static GCK_INLINE gclock_req_slot *gclock_req_walk(uintptr_t k, int *live);

static inline void gclock_req_publish(gclock_req_slot *s, uintptr_t k);

/* gclock_req_find_owned returns the oldest (lowest id) entry of handle k
 * started by the thread whose buffer is owner, else the oldest entry of k
 * (gclock_req_find): two threads can enter the same shared handle into the
 * table at the same moment, and each must get its own back. */

static inline gclock_req_slot *gclock_req_find_owned(uintptr_t k, const void *owner);

/* gclock_req_find returns the oldest (lowest id) entry of handle k (ids
 * rise within a thread, gclock_req_id; entries of one handle from several
 * threads at once are ordered by their blocks, not by time). One
 * handle can stand for several live requests: Open MPI hands out its
 * shared, already complete ompi_request_empty for every MPI_Isend sent
 * inline, and MPICH has similar built-in completed requests. Applications
 * keep request arrays in start order, so the oldest entry is the one the
 * first such handle in a call stands for. */
static inline gclock_req_slot *gclock_req_find(uintptr_t k);

/* gclock_req_find_unique is gclock_req_find while gclock_req_unique()
 * holds (the caller checked): the first entry of k is its only one. */
static GCK_INLINE gclock_req_slot *gclock_req_find_unique(uintptr_t k);

/* gclock_req_drop frees the slot s of a completed or freed request; s may
 * hold another entry afterwards (a backward shift), so the caller reads
 * what it needs of s first. */
static inline void gclock_req_drop(gclock_req_slot *s);

/* gclock_req_tombs_now: a freed slot becomes a tombstone now (under
 * MPI_THREAD_MULTIPLE, or once a later table exists); 0: it is emptied by
 * a backward shift. gclock_req_drop_as is gclock_req_drop with that
 * answer read by the caller, once for a call's completions (below
 * MPI_THREAD_MULTIPLE no other thread adds a table meanwhile). */
static GCK_INLINE int gclock_req_tombs_now(void);
static GCK_INLINE void gclock_req_drop_as(gclock_req_slot *s, int tombs);

/* gclock_req_id hands out a request id, unique in the process and never
 * 0. Each thread takes a block of GCK_REQ_BLOCK ids from the shared
 * counter at a time, so ids rise within a thread (gclock_take relies on
 * that for one thread's requests) and the hot path has no locked
 * instruction (perf put ≈ 4.5% of a halo exchange's samples on the shared
 * counter's lock xadd, which waits for the event record's stores). */
static GCK_INLINE uint32_t gclock_req_id(gclock_tbuf *b);

/* ---- shared handles --------------------------------------------------------
 * A start whose handle already stands for a live request (Open MPI returns
 * its shared, already complete ompi_request_empty for every inline send)
 * goes to the starting thread's FIFO instead of the table, so any number
 * of them can be outstanding; a completion of such a handle takes the
 * oldest request (table or FIFO) with it. */

/* gclock_shq_find returns the oldest FIFO entry of handle k, or NULL;
 * newest instead when newest is set. */
static inline gclock_shared_req *gclock_shq_find(gclock_tbuf *b, uintptr_t k, int newest);

/* gclock_shq_oldest is gclock_shq_find(b, k, 0) for a FIFO that is not
 * empty (b->shq set): its head entry first, no walk when that is k's or
 * the only one (MPICH's halo exchange: one shared send handle at a time). */
static GCK_INLINE gclock_shared_req *gclock_shq_oldest(gclock_tbuf *b, uintptr_t k);

/* gclock_shq_one is the entry of b's FIFO when it holds exactly one
 * (b->shq set), else NULL: a call's run of completions then compares each
 * handle with its key alone (gclock_complete_all, D104). */
static GCK_INLINE const gclock_shared_req *gclock_shq_one(const gclock_tbuf *b);

static inline void gclock_shq_consume(gclock_tbuf *b, gclock_shared_req *q);

/* gclock_shq_push appends a start of the shared handle k to the thread's
 * FIFO (the caller checked that it has room). */
static inline void gclock_shq_push(gclock_tbuf *b, const gclock_comm_slot *cs, uintptr_t k,
				   uint32_t id, uint16_t kind, int32_t peer, int32_t tag,
				   uint64_t bytes);
#endif

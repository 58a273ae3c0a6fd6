/*
 * Point-to-point, request and nonblocking-collective recording (issue 7;
 * docs/explanation/p2p.md): the per-call context of a generated wrapper, the event
 * writer gclock_put, runs of unsuccessful polls, and a request's start
 * (gclock_track) and completion (gclock_take, gclock_complete) over the
 * request table of reqtable.h. The rules the wrappers call, one per rule
 * name of cshim/p2p.tbl, are in p2p_rules.h. Everything here is hot path:
 * no Go call, no allocation, no lock, no system call beyond the timer.
 *
 * This header declares; the definitions are in requests.c (static inline
 * functions, compiled in the one translation unit cshim/libgclock.c;
 * docs/explanation/cshim.md).
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
	gclock_event *fl;   /* the record gclock_fl_enter marked in flight, NULL */
} gclock_p2p;

static GCK_INLINE int32_t gclock_peer(const gclock_comm_slot *cs, int r);

/* gclock_status_bytes: bytes a status reports. Read from the status
 * itself where the MPI's layout is known, as gclock_status_cancelled does
 * (Open MPI's _ucount; MPICH's count split over count_lo and the bits of
 * count_hi_and_cancelled above its cancelled bit, which Intel MPI,
 * MVAPICH and Cray MPICH share): the byte count MPI_Get_count with
 * MPI_BYTE computes from the same fields, without the call (≈ 7 ns on
 * the Intel VM, 2026-11-26) and without its int limit. Elsewhere
 * MPI_Get_count with MPI_BYTE. */
static inline uint64_t gclock_status_bytes(MPI_Status *st, uint64_t posted);

static inline gclock_tbuf *gclock_buf(void);

/* gclock_put writes one event of the current call. The call's first
 * one completes the record gclock_fl_enter marked in flight (hotpath.c):
 * enter_ns, callsite, op and flags are there already. */
static GCK_INLINE void gclock_put(gclock_p2p *cx, uint32_t comm, uint32_t seq, int32_t root,
			      int32_t peer, int32_t tag, uint32_t req, uint64_t sent,
			      uint64_t recv);

/* gclock_put_in is gclock_put into the thread's buffer b, which the
 * caller read already (gclock_tl_buf; NULL: allocated here, if the event
 * is written). same says what the caller knows of the call's first record
 * already: GCK_SAME_LOC, the marker stored comm, root, peer and tag with
 * the values given here (a send or a request start on cx->cs, root -1,
 * peer gclock_peer(cx->cs, its rank argument), the tag the call was
 * given) and flagged no other field in flight; 0, nothing. */
#define GCK_SAME_LOC 1
static GCK_INLINE void gclock_put_in(gclock_p2p *cx, gclock_tbuf *b, int same, uint32_t comm,
				     uint32_t seq, int32_t root, int32_t peer, int32_t tag, uint32_t req,
				     uint64_t sent, uint64_t recv);

/* gclock_poll_miss counts an unsuccessful MPI_Test* / MPI_Iprobe. A run of
 * misses of one op (and call site) on a thread becomes one event. */
static inline void gclock_poll_miss(gclock_p2p *cx, uint32_t comm);

/* gclock_track enters a new request into the table (or the thread's FIFO
 * of shared handles); returns its id. gclock_track_in does so with the
 * thread's buffer b (gclock_buf(): NULL when it has none). */
static GCK_INLINE uint32_t gclock_track(gclock_p2p *cx, MPI_Request r, uint16_t kind,
				    uint16_t persistent, int32_t peer, int32_t tag,
				    uint64_t bytes);
static GCK_INLINE uint32_t gclock_track_in(gclock_p2p *cx, gclock_tbuf *b, MPI_Request r, uint16_t kind,
					   uint16_t persistent, int32_t peer, int32_t tag, uint64_t bytes);

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
				  gclock_shared_req *out, int32_t *src);
/* gclock_take_in is gclock_take for the thread whose buffer is b
 * (gclock_tl_buf, read by the caller). */
static GCK_INLINE int gclock_take_in(gclock_tbuf *b, uintptr_t key, int free_persistent, const MPI_Status *st,
				     gclock_shared_req *out, int32_t *src);

/* gclock_complete records the completion of the request whose handle was
 * k (st: its status, NULL when none was obtained); seq numbers the event
 * within the call. Returns 1 if the request was a tracked one. */
static GCK_INLINE int gclock_complete(gclock_p2p *cx, MPI_Request k, MPI_Status *st, uint32_t seq);
/* gclock_complete_in is gclock_complete for the thread whose buffer is b
 * (gclock_tl_buf, read by the caller once for all its completions). */
static GCK_INLINE int gclock_complete_in(gclock_p2p *cx, gclock_tbuf *b, MPI_Request k, MPI_Status *st,
					 uint32_t seq);

/* gclock_completion_values is what a completion's record keeps of request
 * r (st: its status, NULL when none; src: the status's source as a world
 * rank): peer, tag and bytes, the status's where it has them. */
static GCK_INLINE void gclock_completion_values(const gclock_shared_req *r, const MPI_Status *st, int32_t src,
					      int32_t *peer, int32_t *tag, uint64_t *sent, uint64_t *recv);

/* ---- a multi-request call's completions in one run ------------------------
 * gclock_complete_in takes each completion through gclock_take_in and
 * gclock_put_in, which check per record what cannot change within a
 * call. When gclock_complete_run_ok holds (the op is traced, every handle
 * has at most one table entry and no run of polls is pending; a
 * completion changes none of them) and the half being filled has room for
 * every completion of the call, a Waitall/Testall writes its completions
 * with gclock_complete_next instead: one table lookup (and the thread's
 * FIFO of shared handles when it holds any, taking the older entry as
 * gclock_take_in does) and one whole record each, at consecutive slots
 * from the one the call marked in flight (unmarked once, before the first
 * lookup), and moves the half's cursor once for the call (one test for a
 * full half, not one per record). The same records either way. */
static GCK_INLINE int gclock_complete_run_ok(const gclock_p2p *cx, const gclock_tbuf *b);

/* gclock_run is what every record of a call's run of completions shares,
 * read once into locals the records' stores cannot alias (a store to an
 * int64_t field could be a store to cx->t0, so each record read it
 * again): the call's times, call site, root with op and flags (-1, op, 0:
 * one 64-bit store, see gclock_rec_rof), its half's generation and how a
 * table slot is freed (gclock_req_tombs_now()). */
typedef struct {
	int32_t root;
	uint16_t op, flags;
} gclock_rec_rof;
typedef struct {
	uint32_t comm, seq;
} gclock_rec_cs;
typedef struct {
	int32_t peer, tag;
} gclock_rec_pt;
_Static_assert(sizeof(gclock_rec_rof) == 8 && sizeof(gclock_rec_cs) == 8 && sizeof(gclock_rec_pt) == 8 &&
		       offsetof(gclock_event, seq) == offsetof(gclock_event, comm) + 4 &&
		       offsetof(gclock_event, op) == offsetof(gclock_event, root) + 4 &&
		       offsetof(gclock_event, flags) == offsetof(gclock_event, op) + 2 &&
		       offsetof(gclock_event, tag) == offsetof(gclock_event, peer) + 4,
	       "a record's field pairs are stored as 64-bit words in record order");
typedef struct {
	int64_t t0, t1;
	uint64_t ra;
	gclock_rec_rof rof;
	uint32_t gen;
	int tombs;
} gclock_run;

/* gclock_complete_next records the completion of the request whose
 * handle was k into record e (the caller's slot: the half has room), as
 * the call's record number seq, and publishes it with run->gen; it does
 * not move the half's cursor. Returns 1 if it was a tracked one (else e
 * is untouched). fifo (a constant at each call site): 0 when the caller
 * found b's FIFO empty (no completion fills it), so the loop need not
 * look at it again. */
static GCK_INLINE int gclock_complete_next(const gclock_run *run, gclock_tbuf *b, int fifo, MPI_Request k,
					   const MPI_Status *st, uint32_t seq, gclock_event *e);

/* gclock_forget drops the newest request of handle k unrecorded (the
 * positions of a Waitall beyond the scratch area, which are the newest
 * when request arrays are in start order). */
static inline void gclock_forget(MPI_Request k);

/* gclock_copy_reqs saves the handles of a multi-request call (they are
 * overwritten with MPI_REQUEST_NULL by the call) and picks the statuses to
 * hand to PMPI: the application's, else the thread's scratch if count fits,
 * else none (MPI_STATUSES_IGNORE: values as posted, see docs/explanation/p2p.md). */
static inline void gclock_copy_reqs(gclock_p2p *cx, int count, const MPI_Request reqs[],
				    MPI_Status *statuses);

static inline void gclock_p2p_begin(gclock_p2p *cx);

static inline MPI_Status *gclock_own_status(gclock_p2p *cx, MPI_Status *status);

/* A completion call that completed no tracked request is still recorded
 * (Wait*) as one event with Req 0. */
static inline void gclock_call_only(gclock_p2p *cx);

#endif

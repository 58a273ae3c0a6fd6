/*
 * hotpath.c: what every generated wrapper does per call besides its rule
 * (declared in hotpath.h): read the timer (gclock_now), find the
 * communicator's slot (gclock_comm_get), write a collective's event
 * (gclock_record) and mark the call in flight (gclock_fl_enter,
 * gclock_fl_leave). Static inline, compiled into libgclock.c first, so
 * every file of the one translation unit inlines them. No Go call, no
 * allocation, no lock, no system call beyond the timer.
 */
#include <time.h>

#include "hotpath.h"

/* ---- the timer ------------------------------------------------------------ */

/* gclock_rdtsc reads the TSC. Plain rdtsc (≈10 ns here) rather than
 * rdtscp (≈19 ns): the reads bracket an MPI call of ≥ 4 ns, so the few
 * cycles rdtsc may run ahead of program order do not matter. */
#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t gclock_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#else
static inline uint64_t gclock_rdtsc(void) { return 0; }
#endif

static inline int64_t gclock_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* gclock_tsc_ns reads the TSC in ns (the calibration of gclock_timer_setup). */
static inline int64_t gclock_tsc_ns(void)
{
	uint64_t d = gclock_rdtsc() - gclock_tsc0;
	return gclock_tsc_ns0 + (int64_t)(((unsigned __int128)d * gclock_tsc_mult) >> 32);
}

/* gclock_timer_raw_inline reads the configured timer without injection. */
static inline int64_t gclock_timer_raw_inline(void)
{
	switch (gclock_timer_kind) {
	case GCK_TIMER_MONOTONIC_RAW:
		return gclock_clock(CLOCK_MONOTONIC_RAW);
	case GCK_TIMER_REALTIME:
		return gclock_clock(CLOCK_REALTIME);
	case GCK_TIMER_TSC:
		return gclock_tsc_ns();
	case GCK_TIMER_MPI_WTIME:
		return (int64_t)(PMPI_Wtime() * 1e9);
	default:
		return gclock_clock(CLOCK_MONOTONIC);
	}
}

static inline int64_t gclock_now(void)
{
	if (GCK_LIKELY(gclock_tsc_fast))
		return gclock_tsc_ns();
	return gclock_now_slow();
}

/* gclock_now_any is gclock_now's general path. */
static inline int64_t gclock_now_any(void)
{
	int64_t t = gclock_timer_raw_inline();
	if (GCK_UNLIKELY(gclock_fake_on)) {
		int64_t raw = t;
		t += gclock_fake_off + (int64_t)(gclock_fake_k * (double)raw);
		if (gclock_fake_nl)
			t += (int64_t)__builtin_llround(gclock_fake_extra(raw));
	}
	return t;
}

/* ---- the communicator table's lookups ------------------------------------- */

/* gclock_slot_find finds the table slot keyed k (a communicator's or a
 * window's handle), NULL when absent. Readers take no lock: slots are
 * written only by the create/free wrappers, key last. */
static GCK_INLINE gclock_comm_slot *gclock_slot_find(uintptr_t k)
{
	uint32_t i = (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - GCK_COMM_BITS));
	for (uint32_t probe = 0; probe < GCK_COMM_PROBES; probe++) {
		gclock_comm_slot *s = &gclock_comms[(i + probe) & (GCK_COMM_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (GCK_LIKELY(sk == k))
			return s;
		if (sk == GCK_KEY_EMPTY)
			return NULL;
	}
	return gclock_slot_find_more(k);
}

/* gclock_comm_get finds the slot of comm; NULL means "do not record"
 * (MPI_COMM_NULL or table full). */
static GCK_INLINE gclock_comm_slot *gclock_comm_get(MPI_Comm comm)
{
	gclock_comm_slot *s = gclock_slot_find((uintptr_t)comm);
	if (GCK_LIKELY(s != NULL))
		return s;
	return gclock_comm_unknown(comm);
}

/* ---- the event and the call in flight ------------------------------------- */

static GCK_INLINE void gclock_record(uint16_t op, gclock_comm_slot *cs, int32_t root,
				 uint64_t sent, uint64_t recv, int64_t t0,
				 int64_t t1, void *callsite)
{
	uint32_t seq = cs->seq++; /* counted even if the event is dropped */
	if (GCK_UNLIKELY(gclock_skip(op))) {
#ifndef GCK_NO_INFLIGHT
		gclock_fl_clear(); /* marked at entry, no record */
#endif
		goto resync; /* selective tracing: counted, not written */
	}
	gclock_tbuf *b = gclock_tl_buf;
#ifndef GCK_NO_INFLIGHT
	/* gclock_fl_enter made the buffer, ended a run of polls and wrote
	 * every field but these into the record (slot n has not moved: only
	 * this thread writes its buffer); the in-flight reader takes none of
	 * them from a blocking collective's record, so they go in while it is
	 * still marked, and the pad, stored last, makes it a returned call */
	if (GCK_UNLIKELY(b == NULL))
		goto resync; /* no buffer: counted as dropped */
	(void)t0, (void)callsite, (void)root;
	gclock_event *e = &b->ev[b->n];
	e->exit_ns = t1;
	e->sent = sent;
	e->recv = recv;
#else
	if (GCK_UNLIKELY(b == NULL)) {
		b = gclock_tbuf_new();
		if (b == NULL)
			goto resync; /* counted as dropped */
	}
	if (GCK_UNLIKELY(b->poll_n != 0))
		gclock_polls_flush(b);
	gclock_event *e = &b->ev[b->n];
	e->enter_ns = t0;
	e->exit_ns = t1;
	e->sent = sent;
	e->recv = recv;
	e->callsite = (uint64_t)(uintptr_t)callsite;
	e->comm = cs->local;
	e->seq = seq;
	e->root = root;
	e->op = op;
	e->flags = 0;
	e->peer = 0;
	e->tag = 0;
	e->req = 0;
#endif
	__atomic_store_n(&e->pad, b->gen, __ATOMIC_RELEASE); /* complete */
	if (GCK_UNLIKELY(++b->n == b->cap))
		gclock_tbuf_full(b);
resync:
	/* One predictable compare: armed only on the communicator and instance
	 * every rank agreed on (pmpi/resync.go). */
	if (GCK_UNLIKELY(seq >= cs->resync_at))
		gclock_resync_point(cs, op, sent, recv);
}

/* gclock_fl_rank normalises a comm rank argument: MPI_ANY_SOURCE -1,
 * MPI_PROC_NULL -2 (trace.PeerAny, trace.PeerNull) whatever the MPI's values. */
static GCK_INLINE int32_t gclock_fl_rank(int r)
{
	return r == MPI_ANY_SOURCE ? -1 : r == MPI_PROC_NULL ? -2 : r;
}

/* gclock_fl_peer is a comm rank argument as the record keeps it: the
 * world rank of a member (the communicator's member list), -1 for
 * MPI_ANY_SOURCE, -2 for MPI_PROC_NULL (gclock_peer's rule, requests.c),
 * the comm rank as given where the list is unknown. */
static GCK_INLINE int32_t gclock_fl_peer(const gclock_comm_slot *cs, int r)
{
	if (GCK_LIKELY(cs != NULL && (uint32_t)r < (uint32_t)cs->npeers) && cs->peers != NULL)
		return cs->peers[r];
	return gclock_fl_rank(r);
}

/* gclock_fl_given: a marker argument the call site gives (not the
 * constant GCK_FL_NONE), known at compile time where it is constant. */
#define gclock_fl_given(v) (!(__builtin_constant_p(v) && (v) == GCK_FL_NONE))

/* gclock_fl_enter writes the call into the thread's next record, marks
 * it in flight (gclock.h GCK_PAD_FL) and returns it (NULL: not marked).
 * coll (a constant at every call site): 1, a blocking collective, whose
 * cs is never NULL and whose instance is cs->seq; its record gets here
 * every field its return keeps (comm, seq, root, peer and tag 0, req 0),
 * so gclock_record stores only exit_ns, sent, recv and the pad. 2, a send
 * or a request start whose first record keeps the comm, root, peer and
 * tag stored here (gclock_put_in's GCK_SAME_LOC), and which is never a
 * poll: like a collective it ends a run of polls here, so that its return
 * writes the record returned here without looking for one. 0, any other
 * point-to-point call. A point-to-point call stores what it was given,
 * and flags say which (GCK_FLF_*): an argument the call has not (the
 * constant GCK_FL_NONE, or count 0 of a call that is no wait or test)
 * costs no store. */
static GCK_INLINE gclock_event *gclock_fl_enter(uint16_t op, int coll, const gclock_comm_slot *cs, int32_t root,
						int32_t peer, int32_t tag, int32_t peer2, int32_t tag2, uint32_t count,
						void *ra, int64_t t0)
{
#ifndef GCK_NO_INFLIGHT
	gclock_tbuf *b = gclock_tl_buf;
	if (GCK_UNLIKELY(b == NULL) && (b = gclock_tbuf_new()) == NULL)
		return NULL;
	/* a collective (a send) ends a run of polls as its record would (a
	 * call that may be a poll itself keeps it going: its record ends it);
	 * a send on a communicator not recorded makes no record */
	if (coll && GCK_UNLIKELY(b->poll_n != 0) && (coll == 1 || cs != NULL))
		gclock_fl_polls(b, op);
	gclock_event *e = &b->ev[b->n];
	uint16_t flags = 0;
	e->enter_ns = t0;
	e->callsite = (uint64_t)(uintptr_t)ra;
	if (coll == 1) {
		e->comm = cs->local;
		e->seq = cs->seq;
		e->peer = 0;
		e->tag = 0;
		e->req = 0;
		flags |= GCK_FLF_SEQ;
	} else {
		e->comm = cs != NULL ? cs->local : UINT32_MAX;
		if (gclock_fl_given(peer) || gclock_fl_given(tag)) {
			e->peer = peer;
			e->tag = tag;
			flags |= GCK_FLF_PEER;
		}
		if (gclock_fl_given(peer2) || gclock_fl_given(tag2)) {
			e->exit_ns = (uint64_t)(uint32_t)peer2 | (uint64_t)(uint32_t)tag2 << 32;
			flags |= GCK_FLF_PEER2;
		}
		if (!(__builtin_constant_p(count) && count == 0)) {
			e->req = count;
			flags |= GCK_FLF_COUNT;
		}
	}
	if (gclock_fl_given(root))
		flags |= GCK_FLF_ROOT;
	e->root = gclock_fl_given(root) ? root : -1;
	e->op = op;
	e->flags = flags;
	/* last: the stores above cannot move past it (release), and a process
	 * dies between instructions, so a marked record has them all */
	__atomic_store_n(&e->pad, GCK_PAD_FL, __ATOMIC_RELEASE);
	return e;
#else
	(void)op, (void)coll, (void)cs, (void)root, (void)peer, (void)tag, (void)peer2, (void)tag2, (void)count, (void)ra,
		(void)t0;
	return NULL;
#endif
}

/* gclock_fl_leave ends a point-to-point call's mark after its rule wrote
 * its records (nrec: how many the rule made): the first of them took the
 * marked record over (gclock_put); a call that made none clears it. */
static GCK_INLINE void gclock_fl_leave(int nrec)
{
#ifndef GCK_NO_INFLIGHT
	if (GCK_UNLIKELY(nrec == 0))
		gclock_fl_clear();
#else
	(void)nrec;
#endif
}

/* gclock_fl_clear unmarks the thread's next record if it is marked in
 * flight: a call that wrote no record, or a writer about to overwrite it.
 * Off the common path. */
void gclock_fl_clear(void)
{
	gclock_tbuf *b = gclock_tl_buf;
	if (b == NULL)
		return;
	gclock_event *e = &b->ev[b->n];
	if (__atomic_load_n(&e->pad, __ATOMIC_RELAXED) == GCK_PAD_FL)
		__atomic_store_n(&e->pad, 0u, __ATOMIC_RELAXED);
	/* the writer's next stores into the record stay after it */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* gclock_fl_polls writes a pending run of polls before a collective's mark,
 * unless selective tracing skips the collective (then its record would
 * not have ended the run either). */
void gclock_fl_polls(gclock_tbuf *b, uint16_t op)
{
	if (!gclock_skip(op))
		gclock_polls_flush(b);
}

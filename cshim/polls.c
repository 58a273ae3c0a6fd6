/*
 * polls.c: a run of unsuccessful MPI_Test* / MPI_Iprobe calls on a thread
 * becomes one gclock_polls event (gclock_poll_miss in requests.c counts
 * them). Compiled in the unity build cshim/libgclock.c.
 */
#include "gclock.h"
#include "requests.h"

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
	/* the record may be the current call's, marked in flight (gclock.h
	 * GCK_PAD_FL): unmarked before anything of the polls goes in */
	__atomic_store_n(&e->pad, 0u, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
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

/*
 * flush.c: the recorder's own pause made visible. When a thread buffer is
 * full, gclock_tbuf_full (buffers.c) writes it (cwrite.c, or through Go) inside the application's
 * MPI call; the time that takes is recorded as one gclock_flush event
 * (trace.OpFlush) at the start of the emptied buffer, so a trace shows the
 * pause instead of letting it pass for application imbalance.
 *
 *   enter_ns/exit_ns  timer before / after the hand-off
 *   comm              0xffffffff (trace.FlushComm: no communicator)
 *   seq               this thread's flush count (0, 1, ...)
 *   root              -1
 *   sent              bytes of events handed over
 *   callsite          0
 *
 * Compiled in the unity build pmpi/cshim.c after buffers.c.
 */
#include <string.h>
#include "gclock.h"

static GCK_TLS uint32_t flush_count;

void gclock_flush_mark(gclock_tbuf *b, uint32_t handed, int64_t t0, int64_t t1)
{
	if (b->n >= b->cap)
		return;
	gclock_event *e = &b->ev[b->n++];
	memset(e, 0, sizeof *e); /* fields added later stay 0 */
	e->enter_ns = t0;
	e->exit_ns = t1;
	e->sent = (uint64_t)handed * sizeof(gclock_event);
	e->comm = 0xffffffffu;
	e->seq = flush_count++;
	e->root = -1;
	e->op = GCK_OP_GCLOCK_FLUSH;
	__atomic_store_n(&e->pad, b->gen, __ATOMIC_RELEASE);
}

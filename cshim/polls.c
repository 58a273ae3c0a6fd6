/*
 * polls.c: a run of unsuccessful MPI_Test* / MPI_Iprobe calls on a thread
 * becomes one gclock_polls event (gclock_poll_miss in requests.h counts
 * them). Compiled in the unity build pmpi/cshim.c.
 */
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

/* gclock_requests_lost is how many requests were recorded without their
 * completion (no memory for another request table); said once at the end
 * (lifecycle.c). gclock_requests_nomem makes another table impossible
 * (GCLOCK_TEST_FAULT=reqtable). Here because this file sees reqtable.h. */
uint64_t gclock_requests_lost(void) { return __atomic_load_n(&gclock_req_lost, __ATOMIC_RELAXED); }
void gclock_requests_nomem(void) { gclock_req_nomem = 1; }

/* gclock_requests_peers_each calls f on the member list of every live
 * entry of every request table (comms.c frees retired member lists no
 * request refers to; the threads' FIFOs: gclock_shared_peers_each). Keys
 * are read with acquire loads (gclock_take's release store ends an entry
 * after its last read of the list); a slot being filled (GCK_REQ_BUSY)
 * counts, whatever it holds yet (a new request's list is a live
 * communicator's, never retired). */
void gclock_requests_peers_each(void (*f)(const int32_t *))
{
	for (uint32_t i = 0; i < GCK_REQ_SLOTS; i++) {
		uintptr_t k = __atomic_load_n(&gclock_reqs[i].key, __ATOMIC_ACQUIRE);
		if (k != GCK_KEY_EMPTY && k != GCK_KEY_TOMB)
			f(gclock_reqs[i].peers);
	}
	for (gclock_req_table *t = __atomic_load_n(&gclock_req_more, __ATOMIC_ACQUIRE); t != NULL;
	     t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < GCK_REQ_SLOTS; i++) {
			uintptr_t k = __atomic_load_n(&t->s[i].key, __ATOMIC_ACQUIRE);
			if (k != GCK_KEY_EMPTY && k != GCK_KEY_TOMB)
				f(t->s[i].peers);
		}
	}
}

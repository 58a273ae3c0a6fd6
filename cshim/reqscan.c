/*
 * reqscan.c: the request table (reqtable.c) as the rest of the library
 * sees it, off the hot path: the requests recorded without their
 * completion, the no-memory fault of the tests, and a walk over the live
 * entries for comms.c's sweep of retired member lists.
 */
#include "gclock.h"
#include "reqtable.h"

/* gclock_requests_lost is how many requests were recorded without their
 * completion (no memory for another request table); said once at the end
 * (lifecycle.c). gclock_requests_nomem makes another table impossible
 * (GCLOCK_TEST_FAULT=reqtable). */
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

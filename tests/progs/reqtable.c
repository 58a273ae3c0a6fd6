/* reqtable: unit test of the recorder's request table (cshim/reqtable.c,
 * used through cshim/requests.c).
 *
 * Compiled with those files and the few definitions they need from
 * cshim/shim.c and buffers.c; no MPI library is initialised and the handles are
 * synthetic, chosen so that their hashes collide where a case needs it.
 * Every case runs below MPI_THREAD_MULTIPLE (one walk per start, lookups
 * that stop at the first match while handles are unique) and with it
 * (CAS claims, whole-chain lookups). A completion must always take the
 * oldest request of its handle, whichever of the table or the thread's
 * FIFO of shared handles holds it.
 *
 * usage: reqtable   prints one line per failed check and "reqtable: N
 * checks, F failed"; exit status 1 when any failed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cshim/reqtable.c"
#include "../../cshim/requests.c"
#include "../../cshim/polls.c"

/* What those files use from cshim/shim.c and buffers.c. */
int gclock_active, gclock_mt, gclock_paused, gclock_timer_kind, gclock_fake_on, gclock_tsc_fast,
	gclock_fake_nl;
uint8_t gclock_op_off[GCK_OP_COUNT];
GCK_TLS int gclock_tl_guard;
GCK_TLS gclock_tbuf *gclock_tl_buf;
gclock_comm_slot gclock_comms[GCK_COMM_SLOTS];
int64_t gclock_fake_off, gclock_tsc_ns0;
double gclock_fake_k;
uint64_t gclock_tsc0, gclock_tsc_mult;
gclock_tbuf *gclock_tbuf_new(void) { return NULL; }
void gclock_tbuf_full(gclock_tbuf *b) { (void)b; }

static int checks, failed;
static const char *mode;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		checks++;                                                    \
		if (!(cond)) {                                               \
			failed++;                                            \
			printf("FAIL %s line %d: ", mode, __LINE__);         \
			printf(__VA_ARGS__);                                 \
			printf("\n");                                        \
		}                                                            \
	} while (0)

static gclock_tbuf buf;
static gclock_comm_slot comm;
static gclock_p2p cx;

/* reset empties the table, the FIFO and the flags; mt selects the mode. */
static void reset(int mt)
{
	memset(gclock_reqs, 0, sizeof gclock_reqs);
	while (gclock_req_more != NULL) {
		gclock_req_table *t = gclock_req_more;
		gclock_req_more = t->next;
		free(t);
	}
	gclock_req_dups = 0;
	gclock_req_lost = 0;
	gclock_req_ids = 0;
	gclock_mt = mt;
	mode = mt ? "thread-multiple" : "serialized";
	free(buf.shq);
	memset(&buf, 0, sizeof buf);
	buf.shq = calloc(GCK_SHARED_CAP, sizeof *buf.shq);
	if (buf.shq == NULL)
		exit(2);
	gclock_tl_buf = &buf;
	memset(&comm, 0, sizeof comm);
	comm.local = 3;
	gclock_p2p_begin(&cx);
	cx.cs = &comm;
}

static uint32_t start(uintptr_t k, int persistent)
{
	return gclock_track(&cx, (MPI_Request)k, GCK_REQ_SEND, (uint16_t)persistent, 1, 7, 8);
}

/* take returns the id gclock_take hands out for k, 0 when none. */
static uint32_t take(uintptr_t k)
{
	gclock_shared_req r;
	int32_t src;
	return gclock_take(k, 0, NULL, &r, &src) ? r.id : 0;
}

/* live counts table slots holding k. */
static int live(uintptr_t k)
{
	int n = 0;
	for (uint32_t i = 0; i < GCK_REQ_SLOTS; i++)
		n += gclock_reqs[i].key == k;
	return n;
}

/* collide returns a handle other than k (and not in avoid) whose chain
 * starts where k's does. */
static uintptr_t collide(uintptr_t k, uintptr_t avoid)
{
	for (uintptr_t c = k + 16;; c += 16)
		if (c != avoid && gclock_req_hash(c) == gclock_req_hash(k))
			return c;
}

/* One request per handle: started, found, gone after its completion. */
static void case_single(void)
{
	uint32_t id = start(0x1000, 0);
	CHECK(id != 0, "no id");
	CHECK(live(0x1000) == 1, "%d table entries of the handle, want 1", live(0x1000));
	CHECK(take(0x1000) == id, "take did not return the started request");
	CHECK(take(0x1000) == 0, "the handle is still tracked after its completion");
	CHECK(live(0x1000) == 0, "a slot still holds the completed handle");
}

/* A shared handle (Open MPI's ompi_request_empty): later starts go to the
 * FIFO, completions come out oldest first. */
static void case_shared(void)
{
	uint32_t ids[5];
	for (int i = 0; i < 5; i++)
		ids[i] = start(0x2000, 0);
	CHECK(live(0x2000) == 1, "%d table entries of the shared handle, want 1", live(0x2000));
	CHECK(buf.shq_tail - buf.shq_head == 4, "FIFO holds %u, want 4", buf.shq_tail - buf.shq_head);
	for (int i = 0; i < 5; i++) {
		uint32_t got = take(0x2000);
		CHECK(got == ids[i], "completion %d took request %u, want %u", i, got, ids[i]);
	}
	CHECK(gclock_req_dups == 0, "handles were unique throughout, but the table says not");
}

/* More starts of one shared handle than the FIFO holds: the extra ones go
 * into the table beside the first. The second entry lands in front of the
 * first (a tombstone earlier in the chain), so a lookup that stopped at
 * its first match would take the newest request first. */
static void case_fifo_full(void)
{
	const uintptr_t a = 0x3000, j = collide(a, 0);
	uint32_t jid = start(j, 0); /* j in the chain's first slot */
	uint32_t first = start(a, 0);
	CHECK(take(j) == jid, "the colliding handle was not found");
	uint32_t ids[GCK_SHARED_CAP + 2];
	ids[0] = first;
	for (int i = 1; i < GCK_SHARED_CAP + 2; i++)
		ids[i] = start(a, 0);
	CHECK(live(a) == 2, "%d table entries of the handle, want 2 (FIFO full)", live(a));
	CHECK(gclock_req_unique() == 0, "two entries of one handle, but lookups still stop at the first");
	for (int i = 0; i < GCK_SHARED_CAP + 2; i++) {
		uint32_t got = take(a);
		CHECK(got == ids[i], "completion %d took request %u, want %u", i, got, ids[i]);
		if (got != ids[i])
			break;
	}
	CHECK(take(a) == 0, "the handle is still tracked after all its completions");
	CHECK(live(a) == 0, "%d slots still hold the handle", live(a));
}

/* A persistent request enters the table even when its handle is live: its
 * completion must not be taken for the older request. */
static void case_persistent(void)
{
	const uintptr_t a = 0x4000, j = collide(a, 0);
	uint32_t jid = start(j, 0);
	uint32_t old = start(a, 0);
	CHECK(take(j) == jid, "the colliding handle was not found");
	uint32_t pers = start(a, 1); /* into j's tombstone, in front of old */
	CHECK(live(a) == 2, "%d table entries, want 2", live(a));
	CHECK(take(a) == old, "the older request was not taken first");
	CHECK(take(a) == pers, "the persistent request was not found");
	CHECK(take(a) == pers, "a persistent request left the table at its completion");
}

/* A chain with no free slot: the start goes to a second table (before,
 * it was counted as lost and its completion never found); once the first
 * table has room again, a later start of a new handle goes there. */
static void case_chain_full(void)
{
	uintptr_t k = 0x5000; /* every handle below shares its chain */
	uintptr_t first = k;
	uint32_t first_id = 0;
	for (int i = 0; i < GCK_REQ_PROBES; i++) {
		uint32_t id = start(k, 0);
		if (i == 0)
			first_id = id;
		k = collide(k, 0);
	}
	CHECK(gclock_req_more == NULL, "a second table before the first was full");
	uintptr_t late = k;
	uint32_t id = start(late, 0);
	CHECK(id != 0, "no id for a start that found no slot");
	CHECK(gclock_req_more != NULL, "no second table for a start whose chain is full");
	CHECK(gclock_req_lost == 0, "lost %llu, want 0", (unsigned long long)gclock_req_lost);
	CHECK(take(late) == id, "the request in the second table was not found");
	CHECK(take(first) == first_id, "a request in the first table was not found");
	CHECK(take(late) == 0, "a completed request was found again");
	uintptr_t fresh = collide(late, 0);
	uint32_t fid = start(fresh, 0); /* into first's tombstone */
	CHECK(gclock_reqs[gclock_req_hash(0x5000)].key == fresh, "the first table's free slot was not reused");
	CHECK(take(fresh) == fid, "the request in the reused slot was not found");
}

int main(void)
{
	static void (*const cases[])(void) = {case_single, case_shared, case_fifo_full,
					     case_persistent, case_chain_full};
	for (int mt = 0; mt <= 1; mt++)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			reset(mt);
			cases[i]();
		}
	printf("reqtable: %d checks, %d failed\n", checks, failed);
	return failed != 0;
}

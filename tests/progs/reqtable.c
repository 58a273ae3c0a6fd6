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

/* Every slot a walk, claim or lookup reads (cshim/reqtable.h). */
static unsigned long probes;
#define GCK_REQ_PROBE() (probes++)
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
	gclock_req_tombs = 0;
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

/* used counts the slots of the first table that are not empty (live
 * entries and tombstones). */
static int used(void)
{
	int n = 0;
	for (uint32_t i = 0; i < GCK_REQ_SLOTS; i++)
		n += gclock_reqs[i].key != GCK_KEY_EMPTY;
	return n;
}

/* rnd is a seeded LCG (the same run every time). */
static uint64_t rnd_state = 42;
static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((rnd_state >> 33) % n);
}

/* Lookups after deletions: 48 handles whose home slots lie in the 16
 * slots around the table's end (so their chains collide and wrap), started
 * and completed in random order, at most 40 live at once; after every
 * step every live handle must be found with its own request and a
 * completed one not at all. Below MPI_THREAD_MULTIPLE a completion moves
 * later entries of the cluster back (backward shift), which is where a
 * wrong move would lose an entry. At the end the table must be empty
 * again (no tombstones below MPI_THREAD_MULTIPLE). */
static void case_lookup_after_deletions(void)
{
	enum { NH = 48, MAXLIVE = 40, STEPS = 20000 };
	uintptr_t h[NH];
	uint32_t id[NH] = {0};
	int nh = 0, nlive = 0;
	for (uintptr_t c = 0x60000; nh < NH; c += 16) {
		uint32_t home = gclock_req_hash(c);
		if (home >= GCK_REQ_SLOTS - 8 || home < 8)
			h[nh++] = c;
	}
	int bad = 0;
	for (int step = 0; step < STEPS && !bad; step++) {
		int i = (int)rnd(NH);
		if (id[i] == 0 && nlive < MAXLIVE) {
			id[i] = start(h[i], 0);
			nlive++;
		} else if (id[i] != 0) {
			uint32_t got = take(h[i]);
			CHECK(got == id[i], "step %d: completion of handle %d took request %u, want %u", step, i,
			      got, id[i]);
			id[i] = 0;
			nlive--;
		}
		for (int j = 0; j < NH; j++) {
			gclock_req_slot *sl = gclock_req_find(h[j]);
			uint32_t found = sl != NULL ? sl->id : 0;
			if (found != id[j]) {
				CHECK(0, "step %d: lookup of handle %d found request %u, want %u", step, j, found,
				      id[j]);
				bad = 1;
			}
		}
	}
	CHECK(!bad, "lookups after deletions");
	for (int i = 0; i < NH; i++)
		if (id[i] != 0)
			CHECK(take(h[i]) == id[i], "final completion of handle %d", i);
	CHECK(gclock_req_more == NULL, "a second table for at most %d live requests", MAXLIVE);
	if (!gclock_mt)
		CHECK(used() == 0, "%d slots not empty after every request completed, want 0", used());
}

/* steady runs `rounds` iterations of a halo-like step (4 requests on
 * handles never seen before, then their completions) and returns the
 * slots read per start and per completion. */
static double steady(uintptr_t *next, int rounds)
{
	unsigned long p0 = probes;
	for (int r = 0; r < rounds; r++) {
		uintptr_t k[4];
		uint32_t ids[4];
		for (int i = 0; i < 4; i++) {
			k[i] = *next;
			*next += 16;
			ids[i] = start(k[i], 0);
		}
		for (int i = 0; i < 4; i++)
			CHECK(take(k[i]) == ids[i], "steady round %d: request %d not found", r, i);
	}
	return (double)(probes - p0) / (8.0 * rounds);
}

/* Probes after many completions (below MPI_THREAD_MULTIPLE, where a start
 * walks its chain to the end): a halo-like step of 4 requests on fresh
 * handles costs the same number of slot reads before and after 60,000
 * requests on other handles came and went, 600 live at a time. With
 * tombstones the completed requests' slots stayed marked, and a start's
 * walk grew towards the window's 64 slots. */
static void case_probes_after_completions(void)
{
	if (gclock_mt)
		return; /* tombstones under MPI_THREAD_MULTIPLE: reqtable.h */
	uintptr_t next = 0x1000000;
	double before = steady(&next, 1000);
	for (int r = 0; r < 100; r++) {
		uintptr_t k0 = next;
		uint32_t ids[600];
		for (int i = 0; i < 600; i++, next += 16)
			ids[i] = start(next, 0);
		for (int i = 0; i < 600; i++)
			CHECK(take(k0 + 16 * (uintptr_t)i) == ids[i], "churn round %d: request %d not found", r, i);
	}
	double after = steady(&next, 1000);
	printf("reqtable: slots read per start and per completion: %.2f before, %.2f after 60000 completions\n",
	       before, after);
	CHECK(before <= 1.5, "%.2f slots read per operation on an empty table, want <= 1.5", before);
	CHECK(after <= before + 0.25, "%.2f slots read per operation after 60000 completions, %.2f before", after,
	      before);
	CHECK(used() == 0, "%d slots not empty after every request completed, want 0", used());
}

/* A first table with no empty slot left and no memory for another
 * (GCLOCK_TEST_FAULT=reqtable): the starts that find no slot are counted
 * lost, and completions still find every other request (a backward shift
 * with no empty slot to end at once looped for ever). */
static void case_table_full(void)
{
	enum { N = GCK_REQ_SLOTS + 64 };
	static uint32_t ids[N];
	gclock_req_nomem = 1;
	for (int i = 0; i < N; i++)
		ids[i] = start(0x7000000 + 16 * (uintptr_t)i, 0);
	CHECK(gclock_req_more == NULL, "a second table without memory for it");
	CHECK(gclock_req_lost >= 64, "%llu starts lost, want at least 64 (more than the table holds)",
	      (unsigned long long)gclock_req_lost);
	int found = 0, wrong = 0;
	for (int i = 0; i < N; i++) {
		uint32_t got = take(0x7000000 + 16 * (uintptr_t)i);
		found += got != 0;
		wrong += got != 0 && got != ids[i];
	}
	CHECK(wrong == 0, "%d completions took another request", wrong);
	CHECK((uint64_t)found + gclock_req_lost == N, "%d found + %llu lost, want %d", found,
	      (unsigned long long)gclock_req_lost, N);
	CHECK(used() == 0 || gclock_mt, "%d slots not empty after every request completed, want 0", used());
	gclock_req_nomem = 0;
}

int main(void)
{
	static void (*const cases[])(void) = {case_single, case_shared, case_fifo_full,
					     case_persistent, case_chain_full, case_lookup_after_deletions,
					     case_probes_after_completions, case_table_full};
	for (int mt = 0; mt <= 1; mt++)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			reset(mt);
			cases[i]();
		}
	printf("reqtable: %d checks, %d failed\n", checks, failed);
	return failed != 0;
}

/*
 * comms.c: the communicator table (its hot-path lookup gclock_comm_get is in hotpath.c),
 * the wrappers that create and free communicators, and the resync points
 * (issue 10, pmpi/resync.go).
 *
 * Part of the C shim; compiled in the unity build pmpi/cshim.c after buffers.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclock.h"
#include "hotpath.h"
#include "comms.h"
#include "pingpong.h"
#include "shim.h"


/* ---- communicator table --------------------------------------------------- */

static uint32_t comm_hash(uintptr_t k)
{
	return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - GCK_COMM_BITS));
}

/* The tables after gclock_comms, each GCK_COMM_SLOTS slots, linked in the
 * order allocated; published with a release store and never freed, so the
 * lock-free readers may walk them. */
typedef struct comm_table {
	struct comm_table *next;
	gclock_comm_slot s[GCK_COMM_SLOTS];
} comm_table;
static comm_table *comm_more;
static int comm_full_warned;

/* comm_window looks for k in the probe window of one table: its slot, or
 * NULL with *stop set when an empty slot ends the search (k was never
 * placed past a window with room). */
static gclock_comm_slot *comm_window(gclock_comm_slot *t, uintptr_t k, int *stop)
{
	uint32_t i = comm_hash(k);
	for (uint32_t p = 0; p < GCK_COMM_PROBES; p++) {
		gclock_comm_slot *s = &t[(i + p) & (GCK_COMM_SLOTS - 1)];
		uintptr_t sk = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (sk == k)
			return s;
		if (sk == GCK_KEY_EMPTY) {
			*stop = 1;
			return NULL;
		}
	}
	return NULL;
}

/* gclock_slot_find_more continues gclock_slot_find in the later tables. */
gclock_comm_slot *gclock_slot_find_more(uintptr_t k)
{
	int stop = 0;
	for (comm_table *t = __atomic_load_n(&comm_more, __ATOMIC_ACQUIRE); t != NULL && !stop;
	     t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE)) {
		gclock_comm_slot *s = comm_window(t->s, k, &stop);
		if (s != NULL)
			return s;
	}
	return NULL;
}

/* comm_find returns the live slot of k or NULL; caller holds comm_mu. */
static gclock_comm_slot *comm_find(uintptr_t k)
{
	int stop = 0;
	gclock_comm_slot *s = comm_window(gclock_comms, k, &stop);
	if (s != NULL || stop)
		return s;
	return gclock_slot_find_more(k);
}

/* comm_room returns the first free or tombstone slot in k's window of
 * table t, or NULL. */
static gclock_comm_slot *comm_room(gclock_comm_slot *t, uintptr_t k)
{
	uint32_t i = comm_hash(k);
	for (uint32_t p = 0; p < GCK_COMM_PROBES; p++) {
		gclock_comm_slot *s = &t[(i + p) & (GCK_COMM_SLOTS - 1)];
		if (s->key == GCK_KEY_EMPTY || s->key == GCK_KEY_TOMB)
			return s;
	}
	return NULL;
}

/* comm_insert publishes a slot for k in the first table with room in its
 * window (a new table when none has); caller holds comm_mu. The key is
 * stored last (release) so lock-free readers see a complete slot. NULL
 * only when memory for a new table is gone (one warning). */
static gclock_comm_slot *comm_insert(uintptr_t k, const gclock_comm_slot *v)
{
	gclock_comm_slot *s = comm_room(gclock_comms, k);
	comm_table **tail = &comm_more;
	for (comm_table *t = comm_more; s == NULL && t != NULL; t = t->next) {
		s = comm_room(t->s, k);
		tail = &t->next;
	}
	if (s == NULL) {
		comm_table *t = calloc(1, sizeof *t); /* keys GCK_KEY_EMPTY */
		if (t == NULL) {
			if (!comm_full_warned++)
				fprintf(stderr, "gclock: rank %d: no memory to track more communicators and windows; "
						"calls on new ones are not recorded (the application continues)\n",
					world_rank);
			return NULL;
		}
		s = comm_room(t->s, k);
		__atomic_store_n(tail, t, __ATOMIC_RELEASE);
	}
	s->id = v->id;
	s->local = v->local;
	s->seq = 0;
	s->children = 0;
	s->rank = v->rank;
	s->size = v->size;
	s->inter = v->inter;
	s->indeg = v->indeg;
	s->outdeg = v->outdeg;
	s->peers = v->peers;
	s->npeers = v->npeers;
	s->resync_at = v->resync_at;
	__atomic_store_n(&s->key, k, __ATOMIC_RELEASE);
	return s;
}

/* comm_each calls f on every slot of every table. */
static void comm_each(void (*f)(gclock_comm_slot *, void *), void *arg)
{
	for (uint32_t i = 0; i < GCK_COMM_SLOTS; i++)
		f(&gclock_comms[i], arg);
	for (comm_table *t = __atomic_load_n(&comm_more, __ATOMIC_ACQUIRE); t != NULL;
	     t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE))
		for (uint32_t i = 0; i < GCK_COMM_SLOTS; i++)
			f(&t->s[i], arg);
}

/* ---- resync points (issue 10, pmpi/resync.go) ------------------------------
 *
 * A sync epoch between MPI_Init and MPI_Finalize needs every rank at once.
 * Blocking collectives on a communicator of all ranks are such moments: all
 * members call them in the same order. Go arms one (communicator,
 * instance); the first resync-eligible collective at or after it calls
 * into Go on every rank. Eligible: MPI_Barrier, and MPI_Allreduce,
 * MPI_Allgather, MPI_Alltoall, MPI_Reduce_scatter_block with data (the
 * same decision on every rank: their counts agree); these cannot return on
 * one rank before every rank entered, so the epoch's own traffic never
 * waits for a rank that waits for the application (no deadlock).
 * Rooted, vector and scan collectives may return early on some ranks and
 * are never used. */
static int resync_probe; /* arm world-sized communicators at instance 0 */
static uint32_t resync_events;

/* Which slots can be armed. While the probe is on, every communicator of
 * all ranks registered since is (at instance 0), so the first meeting
 * walks the whole table once (resync_walk) to disarm them; from then on
 * the probe is off and only a meeting arms a slot, its own, which the
 * next meeting disarms through resync_last: O(1) instead of a walk of
 * 4,096 slots per meeting (before 2026-11-29 every meeting walked the
 * table, and a second walk to arm a slot by id was compiled but never
 * called). Slots are never freed, so resync_last stays a valid pointer;
 * if its communicator was freed and the slot reused, the new occupant is
 * not armed (the probe is off) and storing UINT32_MAX there changes
 * nothing. Written by the meeting's thread only (with
 * MPI_THREAD_MULTIPLE only MPI_COMM_WORLD is probed, comm_register). */
static int resync_walk;
static gclock_comm_slot *resync_last;

void gclock_resync_arm_world(int on)
{
	resync_probe = on;
	if (on)
		resync_walk = 1;
}

static void disarm(gclock_comm_slot *s, void *arg)
{
	(void)arg;
	s->resync_at = UINT32_MAX;
}

/* resync_disarm_all disarms every armed slot (the meeting's first step:
 * the meeting re-arms its own slot when Go has planned the next one). */
static void resync_disarm_all(void)
{
	if (resync_walk) {
		resync_walk = 0;
		comm_each(disarm, NULL);
	} else if (resync_last != NULL) {
		resync_last->resync_at = UINT32_MAX;
	}
	resync_last = NULL;
}

void gclock_resync_point(gclock_comm_slot *cs, uint16_t op, uint64_t sent, uint64_t recv)
{
	int eligible = op == GCK_OP_MPI_BARRIER ||
		       ((op == GCK_OP_MPI_ALLREDUCE || op == GCK_OP_MPI_ALLGATHER || op == GCK_OP_MPI_ALLTOALL ||
			 op == GCK_OP_MPI_REDUCE_SCATTER_BLOCK) && sent > 0 && recv > 0);
	if (!eligible || cs->inter || !gclock_active)
		return;
	resync_probe = 0;
	resync_disarm_all(); /* this slot is re-armed below, at Go's plan */
	int64_t t0 = gclock_now();
	/* a rank stuck in the recorder's own sync epoch (another rank died)
	 * shows it as its call in flight (docs/guide/crash-hang.md) */
	gclock_fl_enter(GCK_OP_GCLOCK_RESYNC, 0, NULL, GCK_FL_NONE, GCK_FL_NONE, GCK_FL_NONE, GCK_FL_NONE, GCK_FL_NONE, 0,
			NULL, t0);
	/* the decision's two broadcasts poll before they sleep where every
	 * rank has a core (pingpong.c meet_poll_ok) */
	gclock_meeting_waits(2);
	uint64_t r = gclock_go.resync(cs->id, cs->seq - 1);
	gclock_meeting_waits(0);
	gclock_fl_clear(); /* before the epoch's record goes over it */
	int64_t t1 = gclock_now();
	cs->resync_at = (uint32_t)r;
	resync_last = cs;
	/* An epoch's time, like a flush pause (trace.OpResync); a meeting
	 * that only planned the next one (a broadcast) is not recorded. */
	gclock_tbuf *b = gclock_tl_buf;
	if ((r >> 32) != 0 && b != NULL && b->n + 1 < b->cap) {
		gclock_event *e = &b->ev[b->n++];
		memset(e, 0, sizeof *e);
		e->enter_ns = t0;
		e->exit_ns = t1;
		e->comm = 0xffffffffu;
		e->seq = resync_events++;
		e->root = -1;
		e->op = GCK_OP_GCLOCK_RESYNC;
		__atomic_store_n(&e->pad, b->gen, __ATOMIC_RELEASE);
	}
}

/* comm_register describes comm to Go (which derives the agreed id and
 * writes the Comm frame) and publishes its slot. parent == NULL means an
 * unknown origin (a communicator created by a function we do not wrap). */
/* comm_degrees finds the neighbourhood collectives' block counts of an
 * intracommunicator (gclock_comm_slot indeg/outdeg). */
static void comm_degrees(MPI_Comm comm, int rank, int32_t *in, int32_t *out)
{
	int topo = MPI_UNDEFINED, a = 0, b = 0, w = 0;
	*in = *out = 0;
	if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
		return;
	if (topo == MPI_CART && PMPI_Cartdim_get(comm, &a) == MPI_SUCCESS) {
		*in = *out = 2 * a;
	} else if (topo == MPI_GRAPH && PMPI_Graph_neighbors_count(comm, rank, &a) == MPI_SUCCESS) {
		*in = *out = a;
	} else if (topo == MPI_DIST_GRAPH && PMPI_Dist_graph_neighbors_count(comm, &a, &b, &w) == MPI_SUCCESS) {
		*in = a;
		*out = b;
	}
}

/* ---- interned member lists ----------------------------------------------------
 *
 * A slot's peers (comm rank -> world rank) are shared by every communicator
 * and window with the same list, so a program that duplicates and frees a
 * communicator per step does not grow by a list each time (at 1,024 ranks
 * 4 KB per step), and counted: refs is the number of live slots holding
 * the list. A list that no slot holds any more may still be read by a live
 * request (a request may outlive MPI_Comm_free, and the request table and
 * the threads' FIFOs keep the pointer), so it is retired, not freed; once
 * the retired lists pass GCK_PEERS_SWEEP bytes, peers_sweep frees those no
 * request refers to (before 2026-11-27 evening every list was kept for
 * the life of the process, and a program splitting into new member sets
 * every step grew by 4 bytes per member per step). Under
 * MPI_THREAD_MULTIPLE too: a completing thread reads the list it needs
 * (gclock_take: the status's source) before it ends the request's entry
 * with a release store, and the sweep reads the entries' keys with
 * acquire loads, so a list whose last entry the sweep sees ended is no
 * longer read by that thread; a new request names a live communicator's
 * list, which is never retired. */
typedef struct peers_node {
	struct peers_node *next;
	uint64_t hash;
	int32_t n;
	uint32_t refs; /* live communicator and window slots holding the list */
	uint32_t mark; /* peers_sweep: retired and not yet seen in a request */
	int32_t a[];
} peers_node;

#define GCK_PEERS_BUCKETS 1024
/* Retired bytes between sweeps: a sweep reads the request tables (≈ 1 MiB
 * for the first) and the FIFOs, so it runs at most once per 256 KiB freed. */
#define GCK_PEERS_SWEEP ((size_t)256 << 10)
static peers_node *peers_tab[GCK_PEERS_BUCKETS];
static pthread_mutex_t peers_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t peers_retired;                    /* bytes of lists with refs 0, under peers_mu */
static size_t peers_sweep_at = GCK_PEERS_SWEEP; /* sweep when peers_retired reaches it */
static size_t peers_sweep_step = GCK_PEERS_SWEEP;

/* gclock_peers_sweep_always makes every retirement sweep
 * (GCLOCK_TEST_FAULT=peers-sweep: tests/permsplit_test.go). */
void gclock_peers_sweep_always(void)
{
	pthread_mutex_lock(&peers_mu);
	peers_sweep_step = 0;
	peers_sweep_at = peers_retired;
	pthread_mutex_unlock(&peers_mu);
}

static size_t peers_bytes(int32_t n) { return sizeof(peers_node) + sizeof(int32_t) * (size_t)n; }

static peers_node *peers_node_of(const int32_t *p)
{
	return (peers_node *)(void *)((char *)(uintptr_t)p - offsetof(peers_node, a));
}

/* peers_intern returns the shared copy of the n-element list a (the
 * caller keeps a), held once more: an earlier equal one or a new copy.
 * NULL if a is NULL or there is no memory for the copy (peers unknown:
 * the comm ranks are recorded as given). */
static const int32_t *peers_intern(const int32_t *a, int32_t n)
{
	if (a == NULL || n < 0)
		return NULL;
	uint64_t h = 14695981039346656037ull;
	for (int32_t i = 0; i < n; i++)
		h = (h ^ (uint32_t)a[i]) * 1099511628211ull;
	pthread_mutex_lock(&peers_mu);
	peers_node **b = &peers_tab[h & (GCK_PEERS_BUCKETS - 1)];
	for (peers_node *p = *b; p != NULL; p = p->next) {
		if (p->hash == h && p->n == n && memcmp(p->a, a, sizeof(int32_t) * (size_t)n) == 0) {
			if (p->refs++ == 0)
				peers_retired -= peers_bytes(n);
			pthread_mutex_unlock(&peers_mu);
			return p->a;
		}
	}
	peers_node *p = malloc(peers_bytes(n));
	if (p != NULL) {
		*p = (peers_node){.next = *b, .hash = h, .n = n, .refs = 1};
		memcpy(p->a, a, sizeof(int32_t) * (size_t)n);
		*b = p;
	}
	pthread_mutex_unlock(&peers_mu);
	return p != NULL ? p->a : NULL;
}

/* peers_hold holds an interned list once more (a window sharing its
 * communicator's). */
static void peers_hold(const int32_t *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&peers_mu);
	peers_node *p = peers_node_of(a);
	if (p->refs++ == 0)
		peers_retired -= peers_bytes(p->n);
	pthread_mutex_unlock(&peers_mu);
}

/* The sweep's candidates (retired lists), sorted by address: a pointer
 * read from a request entry is looked up here, never followed, as one
 * read while another thread refills the entry may be stale (a list freed
 * by an earlier sweep). Under peers_mu. */
static uintptr_t *peers_cand;
static size_t peers_ncand;

static int peers_addr_cmp(const void *x, const void *y)
{
	uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
	return a < b ? -1 : a > b;
}

static void peers_unmark(const int32_t *a)
{
	uintptr_t k = (uintptr_t)a;
	if (a == NULL || peers_ncand == 0)
		return;
	uintptr_t *c = bsearch(&k, peers_cand, peers_ncand, sizeof *peers_cand, peers_addr_cmp);
	if (c != NULL)
		peers_node_of(a)->mark = 0;
}

/* peers_sweep frees the retired lists no live request refers to. Caller
 * holds peers_mu. Without memory for the candidates' index it frees
 * nothing this time. */
static void peers_sweep(void)
{
	size_t nc = 0;
	for (int i = 0; i < GCK_PEERS_BUCKETS; i++)
		for (peers_node *p = peers_tab[i]; p != NULL; p = p->next)
			nc += p->refs == 0;
	peers_cand = malloc(sizeof *peers_cand * (nc > 0 ? nc : 1));
	if (peers_cand == NULL) {
		peers_sweep_at = peers_retired + GCK_PEERS_SWEEP;
		return;
	}
	peers_ncand = 0;
	for (int i = 0; i < GCK_PEERS_BUCKETS; i++) {
		for (peers_node *p = peers_tab[i]; p != NULL; p = p->next) {
			p->mark = p->refs == 0;
			if (p->mark)
				peers_cand[peers_ncand++] = (uintptr_t)p->a;
		}
	}
	qsort(peers_cand, peers_ncand, sizeof *peers_cand, peers_addr_cmp);
	gclock_requests_peers_each(peers_unmark);
	gclock_shared_peers_each(peers_unmark);
	free(peers_cand);
	peers_cand = NULL;
	peers_ncand = 0;
	size_t kept = 0;
	for (int i = 0; i < GCK_PEERS_BUCKETS; i++) {
		for (peers_node **pp = &peers_tab[i]; *pp != NULL;) {
			peers_node *p = *pp;
			if (p->mark) {
				*pp = p->next;
				free(p);
				continue;
			}
			if (p->refs == 0)
				kept += peers_bytes(p->n);
			pp = &p->next;
		}
	}
	peers_retired = kept;
	peers_sweep_at = kept + peers_sweep_step;
}

/* peers_release drops a slot's hold on its list (MPI_Comm_free,
 * MPI_Win_free); the list is retired when no slot holds it. */
static void peers_release(const int32_t *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&peers_mu);
	peers_node *p = peers_node_of(a);
	if (p->refs > 0 && --p->refs == 0) {
		peers_retired += peers_bytes(p->n);
		if (peers_retired >= peers_sweep_at)
			peers_sweep();
	}
	pthread_mutex_unlock(&peers_mu);
}

/* gclock_peers_kept is the bytes of member lists the shim keeps
 * (GCLOCK_TEST_FAULT=peers and peers-sweep print it at MPI_Finalize:
 * tests/permsplit_test.go). */
size_t gclock_peers_kept(void)
{
	size_t n = 0;
	pthread_mutex_lock(&peers_mu);
	for (int i = 0; i < GCK_PEERS_BUCKETS; i++)
		for (peers_node *p = peers_tab[i]; p != NULL; p = p->next)
			n += peers_bytes(p->n);
	pthread_mutex_unlock(&peers_mu);
	return n;
}

static gclock_comm_slot *comm_register(MPI_Comm comm, gclock_comm_slot *parent,
				       uint32_t counter, const char *kind,
				       uint64_t fixed_id)
{
	int64_t now = gclock_now();
	gclock_comm_slot v;
	memset(&v, 0, sizeof v);
	int inter = 0;
	PMPI_Comm_test_inter(comm, &inter);
	PMPI_Comm_rank(comm, &v.rank);
	PMPI_Comm_size(comm, &v.size);
	v.inter = inter;
	if (!inter)
		comm_degrees(comm, v.rank, &v.indeg, &v.outdeg);
	int32_t *members = malloc(sizeof(int32_t) * (size_t)(v.size > 0 ? v.size : 1));
	int *ranks = malloc(sizeof(int) * (size_t)(v.size > 0 ? v.size : 1));
	int *out = malloc(sizeof(int) * (size_t)(v.size > 0 ? v.size : 1));
	int n = 0;
	if (members != NULL && ranks != NULL && out != NULL) {
		MPI_Group g;
		if (PMPI_Comm_group(comm, &g) == MPI_SUCCESS) {
			for (int i = 0; i < v.size; i++)
				ranks[i] = i;
			if (PMPI_Group_translate_ranks(g, v.size, ranks, world_group, out) == MPI_SUCCESS) {
				for (int i = 0; i < v.size; i++)
					members[i] = out[i];
				n = v.size;
			}
			PMPI_Group_free(&g);
		}
	}
	pthread_mutex_lock(&comm_mu);
	v.local = next_local++;
	pthread_mutex_unlock(&comm_mu);
	/* A communicator of all world ranks made by a wrapped (collective)
	 * constructor joins the resync probe: every rank arms it alike. With
	 * MPI_THREAD_MULTIPLE only MPI_COMM_WORLD does: collectives on one
	 * communicator come in one order on every rank, but threads calling
	 * them on different communicators meet in no common order, so two
	 * threads of a rank (each on its own duplicate of MPI_COMM_WORLD)
	 * would open meetings at once and the recorder's own collectives
	 * would cross (MPI_ERR_TRUNCATE in a broadcast of the threads test). */
	v.resync_at = UINT32_MAX;
	if (resync_probe && !inter && v.size == world_size && strcmp(kind, "unknown") != 0 &&
	    (!gclock_mt || strcmp(kind, "world") == 0))
		v.resync_at = 0;
	char kbuf[32];
	snprintf(kbuf, sizeof kbuf, "%s", kind);
	v.id = gclock_go.comm(fixed_id, parent ? parent->id : 0, counter, v.local, kbuf,
			    members, (int32_t)n, now);
	/* Point-to-point peers as world ranks: the members of an
	 * intracommunicator, the remote group of an intercommunicator; an
	 * interned copy, held by the slot (peers_intern above). */
	if (!inter && n == v.size && members != NULL) {
		v.peers = peers_intern(members, n);
		v.npeers = v.peers != NULL ? n : 0;
	} else if (inter) {
		int rs = 0;
		MPI_Group rg;
		if (PMPI_Comm_remote_size(comm, &rs) == MPI_SUCCESS && rs > 0 &&
		    PMPI_Comm_remote_group(comm, &rg) == MPI_SUCCESS) {
			int32_t *pp = malloc(sizeof(int32_t) * (size_t)rs);
			int *rr = malloc(sizeof(int) * (size_t)rs);
			int *ro = malloc(sizeof(int) * (size_t)rs);
			if (pp != NULL && rr != NULL && ro != NULL) {
				for (int i = 0; i < rs; i++)
					rr[i] = i;
				if (PMPI_Group_translate_ranks(rg, rs, rr, world_group, ro) == MPI_SUCCESS) {
					for (int i = 0; i < rs; i++)
						pp[i] = ro[i];
					v.peers = peers_intern(pp, rs);
					v.npeers = v.peers != NULL ? rs : 0;
				}
			}
			free(pp);
			free(rr);
			free(ro);
			PMPI_Group_free(&rg);
		}
	}
	free(members);
	free(ranks);
	free(out);
	pthread_mutex_lock(&comm_mu);
	gclock_comm_slot *s = comm_insert((uintptr_t)comm, &v);
	pthread_mutex_unlock(&comm_mu);
	if (s == NULL)
		peers_release(v.peers);
	return s;
}

static gclock_comm_slot *idup_take(uintptr_t k, uint32_t *counter);

gclock_comm_slot *gclock_comm_unknown(MPI_Comm comm)
{
	if (comm == h_null || !gclock_active)
		return NULL;
	pthread_mutex_lock(&comm_mu);
	gclock_comm_slot *s = comm_find((uintptr_t)comm);
	uint32_t counter = 0;
	gclock_comm_slot *parent = s == NULL ? idup_take((uintptr_t)comm, &counter) : NULL;
	pthread_mutex_unlock(&comm_mu);
	if (s != NULL)
		return s;
	if (parent != NULL) /* MPI_Comm_idup's, now usable */
		return comm_register(comm, parent, counter, "idup", 0);
	return comm_register(comm, NULL, 0, "unknown", 0);
}

/* comm_child bumps parent's creation counter and returns its old value. */
static uint32_t comm_child(gclock_comm_slot *parent)
{
	pthread_mutex_lock(&comm_mu);
	uint32_t c = parent->children++;
	pthread_mutex_unlock(&comm_mu);
	return c;
}

/* comm_created: common tail of the comm-creating wrappers. */
static void comm_created(int rc, gclock_comm_slot *parent, uint32_t counter,
			 MPI_Comm newcomm, const char *kind)
{
	if (rc != MPI_SUCCESS || parent == NULL || newcomm == h_null)
		return;
	comm_register(newcomm, parent, counter, kind, 0);
}

/* gclock_comm_new_begin / _end: the communicator-creating wrappers of the
 * Fortran bindings (fortran.c) share the C ones' bookkeeping. begin returns
 * the parent's slot (NULL: not recorded) and its creation counter. */
gclock_comm_slot *gclock_comm_new_begin(MPI_Comm parentcomm, uint32_t *counter)
{
	gclock_comm_slot *parent = gclock_comm_get(parentcomm);
	*counter = parent ? comm_child(parent) : 0;
	return parent;
}

void gclock_comm_new_end(int rc, gclock_comm_slot *parent, uint32_t counter, MPI_Comm newcomm,
			 const char *kind)
{
	comm_created(rc, parent, counter, newcomm, kind);
}

#define GCK_COMM_WRAP(kind, parentcomm, newcomm, call)                   \
	do {                                                                  \
		if (!gclock_active || gclock_tl_guard)                        \
			return call;                                          \
		gclock_tl_guard++;                                            \
		gclock_comm_slot *parent = gclock_comm_get(parentcomm);      \
		uint32_t counter = parent ? comm_child(parent) : 0;          \
		int rc = call;                                                \
		if (rc == MPI_SUCCESS && (newcomm) != NULL)                   \
			comm_created(rc, parent, counter, *(newcomm), kind);  \
		gclock_tl_guard--;                                            \
		return rc;                                                    \
	} while (0)

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	GCK_COMM_WRAP("dup", comm, newcomm, PMPI_Comm_dup(comm, newcomm));
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	GCK_COMM_WRAP("split", comm, newcomm, PMPI_Comm_split(comm, color, key, newcomm));
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
			MPI_Comm *newcomm)
{
	GCK_COMM_WRAP("split_type", comm, newcomm,
			 PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	GCK_COMM_WRAP("create", comm, newcomm, PMPI_Comm_create(comm, group, newcomm));
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	GCK_COMM_WRAP("dup", comm, newcomm, PMPI_Comm_dup_with_info(comm, info, newcomm));
}

/* Topologies: collective over the old communicator like MPI_Comm_split
 * (ranks left out get MPI_COMM_NULL, which comm_created skips). */
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
		    MPI_Comm *comm_cart)
{
	GCK_COMM_WRAP("cart", comm_old, comm_cart,
		      PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart));
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	GCK_COMM_WRAP("cart_sub", comm, newcomm, PMPI_Cart_sub(comm, remain_dims, newcomm));
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
		     MPI_Comm *comm_graph)
{
	GCK_COMM_WRAP("graph", comm_old, comm_graph,
		      PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph));
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
			  const int destinations[], const int weights[], MPI_Info info, int reorder,
			  MPI_Comm *comm_dist_graph)
{
	GCK_COMM_WRAP("dist_graph", comm_old, comm_dist_graph,
		      PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
					     reorder, comm_dist_graph));
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
				   const int sourceweights[], int outdegree, const int destinations[],
				   const int destweights[], MPI_Info info, int reorder,
				   MPI_Comm *comm_dist_graph)
{
	GCK_COMM_WRAP("dist_graph", comm_old, comm_dist_graph,
		      PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
						      destinations, destweights, info, reorder,
						      comm_dist_graph));
}

/* MPI_Intercomm_create is collective over each side's local_comm: the new
 * intercommunicator is local_comm's child, its id agreed within the local
 * group (intercommunicator traffic is matched per local group, see
 * merge/waits.go). */
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
			 int tag, MPI_Comm *newintercomm)
{
	GCK_COMM_WRAP("intercomm", local_comm, newintercomm,
		      PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
					    newintercomm));
}

/* comm_by_members registers a communicator whose creators share no parent
 * counter (MPI_Comm_create_group: only the group calls it; MPI_Intercomm_
 * merge: the two groups hold different intercommunicator ids): its id is
 * agreed from its member set (pmpi: kinds "create_group" and "merge"). */
void gclock_comm_by_members(int rc, MPI_Comm newcomm, const char *kind)
{
	if (rc == MPI_SUCCESS && newcomm != h_null && gclock_active)
		comm_register(newcomm, NULL, 0, kind, 0);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
	if (!gclock_active || gclock_tl_guard || newintracomm == NULL)
		return PMPI_Intercomm_merge(intercomm, high, newintracomm);
	gclock_tl_guard++;
	int rc = PMPI_Intercomm_merge(intercomm, high, newintracomm);
	gclock_comm_by_members(rc, *newintracomm, "merge");
	gclock_tl_guard--;
	return rc;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	if (!gclock_active || gclock_tl_guard || newcomm == NULL)
		return PMPI_Comm_create_group(comm, group, tag, newcomm);
	gclock_tl_guard++;
	int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
	gclock_comm_by_members(rc, *newcomm, "create_group");
	gclock_tl_guard--;
	return rc;
}

/* MPI_Comm_idup: the new handle may not be used before the request
 * completes, so it is not inspected here. The parent's counter is taken
 * now (every member calls idup in the same order as the other
 * constructors) and kept with the handle; the first recorded use of the
 * communicator, after completion, registers it with that parent and
 * counter (gclock_comm_unknown). */
#define GCK_IDUP_PENDING 64
static struct {
	uintptr_t key;
	gclock_comm_slot *parent;
	uint32_t counter;
} idup_pending[GCK_IDUP_PENDING];

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	if (!gclock_active || gclock_tl_guard || newcomm == NULL)
		return PMPI_Comm_idup(comm, newcomm, request);
	gclock_tl_guard++;
	gclock_comm_slot *parent = gclock_comm_get(comm);
	uint32_t counter = parent ? comm_child(parent) : 0;
	int rc = PMPI_Comm_idup(comm, newcomm, request);
	gclock_idup_note(rc, parent, counter, *newcomm);
	gclock_tl_guard--;
	return rc;
}

/* gclock_idup_note keeps a new MPI_Comm_idup handle with its parent and
 * counter until its first use (C and Fortran wrappers). */
void gclock_idup_note(int rc, gclock_comm_slot *parent, uint32_t counter, MPI_Comm newcomm)
{
	if (rc != MPI_SUCCESS || parent == NULL || newcomm == h_null)
		return;
	pthread_mutex_lock(&comm_mu);
	for (int i = 0; i < GCK_IDUP_PENDING; i++) {
		if (idup_pending[i].key == 0) {
			idup_pending[i].key = (uintptr_t)newcomm;
			idup_pending[i].parent = parent;
			idup_pending[i].counter = counter;
			break;
		}
	}
	pthread_mutex_unlock(&comm_mu);
}

/* idup_take removes and returns the pending idup entry of k (parent NULL:
 * none). Caller holds comm_mu. */
static gclock_comm_slot *idup_take(uintptr_t k, uint32_t *counter)
{
	for (int i = 0; i < GCK_IDUP_PENDING; i++) {
		if (idup_pending[i].key == k) {
			gclock_comm_slot *p = idup_pending[i].parent;
			*counter = idup_pending[i].counter;
			idup_pending[i].key = 0;
			return p;
		}
	}
	return NULL;
}

/* gclock_win_new_end registers a new window (rma.h) as an entry of the
 * communicator table keyed by its handle: members, rank and size are its
 * parent communicator's (a window's group is its communicator's), the id
 * is agreed from the parent's id and creation counter like a
 * communicator's. */
void gclock_win_new_end(int rc, gclock_comm_slot *parent, uint32_t counter, MPI_Win win,
			const char *kind)
{
	if (rc != MPI_SUCCESS || parent == NULL || parent->inter)
		return;
	int64_t now = gclock_now();
	gclock_comm_slot v;
	memset(&v, 0, sizeof v);
	v.rank = parent->rank;
	v.size = parent->size;
	v.peers = parent->peers;
	v.npeers = parent->npeers;
	peers_hold(v.peers);
	v.resync_at = UINT32_MAX;
	pthread_mutex_lock(&comm_mu);
	v.local = next_local++;
	pthread_mutex_unlock(&comm_mu);
	char kbuf[32];
	snprintf(kbuf, sizeof kbuf, "%s", kind);
	v.id = gclock_go.comm(0, parent->id, counter, v.local, kbuf, (int32_t *)v.peers,
			    v.peers != NULL ? v.npeers : 0, now);
	pthread_mutex_lock(&comm_mu);
	gclock_comm_slot *s = comm_insert((uintptr_t)win, &v);
	pthread_mutex_unlock(&comm_mu);
	if (s == NULL)
		peers_release(v.peers);
}

/* gclock_world_group is MPI_COMM_WORLD's group (rma.h: post/start groups
 * to world ranks). */
MPI_Group gclock_world_group(void) { return world_group; }

/* gclock_comm_free_done: common tail of the MPI_Comm_free wrappers (C and
 * Fortran); k is the freed handle. */
void gclock_comm_free_done(int rc, uintptr_t k)
{
	if (rc != MPI_SUCCESS)
		return;
	int64_t now = gclock_now();
	pthread_mutex_lock(&comm_mu);
	gclock_comm_slot *s = comm_find(k);
	uint32_t local = 0;
	const int32_t *peers = NULL;
	if (s != NULL) {
		local = s->local;
		peers = s->peers;
		/* The handle may be reused by a later communicator: the
		 * tombstone lets it get a fresh slot and local index. */
		__atomic_store_n(&s->key, GCK_KEY_TOMB, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&comm_mu);
	if (s != NULL) {
		peers_release(peers);
		gclock_go.comm_freed(local, now);
	}
}

int MPI_Comm_free(MPI_Comm *comm)
{
	if (!gclock_active || gclock_tl_guard || comm == NULL)
		return PMPI_Comm_free(comm);
	gclock_tl_guard++;
	uintptr_t k = (uintptr_t)*comm;
	int rc = PMPI_Comm_free(comm);
	gclock_comm_free_done(rc, k);
	gclock_tl_guard--;
	return rc;
}

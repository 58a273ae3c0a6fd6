/*
 * gclock C shim: lifecycle wrappers (MPI_Init/_thread, MPI_Finalize),
 * communicator tracking wrappers, timers, thread buffers, and the PMPI
 * helpers the Go side (pmpi/) calls for its own traffic. The collective
 * wrappers are generated into wrappers_gen.c from collectives.tbl.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <math.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "gclock.h"

#include <fcntl.h>
#include <sys/mman.h>

/* ---- state ---------------------------------------------------------------- */

int gclock_active;
int gclock_mt = 1; /* until MPI_Init says otherwise */
GCK_TLS int gclock_tl_guard;
GCK_TLS gclock_tbuf *gclock_tl_buf;
GCK_TLS gclock_msg_slot gclock_msgs[GCK_MSG_SLOTS]; /* p2p_rules.h: matched probes */
GCK_TLS uint32_t gclock_msg_next;
gclock_comm_slot gclock_comms[GCK_COMM_SLOTS];
int gclock_timer_kind = GCK_TIMER_MONOTONIC;
int gclock_fake_on;
int gclock_tsc_fast;
int64_t gclock_fake_off;
double gclock_fake_k;
uint64_t gclock_tsc0;
int64_t gclock_tsc_ns0;
uint64_t gclock_tsc_mult;

static int started;  /* Go start ran: epoch 1 and finish are owed */
static int finished; /* finish ran */
static int world_rank = -1, world_size;
static MPI_Group world_group;
static pthread_mutex_t comm_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_local;
static pthread_mutex_t buf_mu = PTHREAD_MUTEX_INITIALIZER;
static gclock_tbuf *all_bufs;
static int buffer_events = 32768;
static uint64_t dropped;

#define GCK_MAX_TCOMM 64
static MPI_Comm tcomm[GCK_MAX_TCOMM];
static int ntcomm;

/* ---- predefined handles ----------------------------------------------------
 *
 * Open MPI's predefined handles are addresses of objects in libmpi, reached
 * like every PMPI_* function through pointers (pmpi_gen.h) that are found
 * wherever libmpi is loaded (resolve.c), also when it was dlopen()ed after
 * this library (Python's mpi4py, Julia, R, ...). MPICH's are constants. */

static MPI_Comm h_world, h_self, h_null;
static MPI_Datatype h_double, h_byte, h_int, h_int64;
static MPI_Info h_info_null;

/* handles_resolve looks up every PMPI pointer still unresolved and fills
 * the h_* handles; 0 if a predefined object cannot be found. */
static int handles_resolve(void)
{
	(void)gclock_pmpi_resolve_all();
#ifdef OPEN_MPI
	if (gck_p_ompi_mpi_comm_world == 0 || gck_p_ompi_mpi_comm_self == 0 || gck_p_ompi_mpi_comm_null == 0 ||
	    gck_p_ompi_mpi_double == 0 || gck_p_ompi_mpi_byte == 0 || gck_p_ompi_mpi_int == 0 ||
	    gck_p_ompi_mpi_int64_t == 0 || gck_p_ompi_mpi_info_null == 0)
		return 0;
#endif
	h_world = MPI_COMM_WORLD;
	h_self = MPI_COMM_SELF;
	h_null = MPI_COMM_NULL;
	h_double = MPI_DOUBLE;
	h_byte = MPI_BYTE;
	h_int = MPI_INT;
	h_int64 = MPI_INT64_T;
	h_info_null = MPI_INFO_NULL;
	return 1;
}

MPI_Datatype gclock_byte_type(void) { return h_byte; }

/* ---- guard --------------------------------------------------------------- */

void gclock_guard_enter(void) { gclock_tl_guard++; }
void gclock_guard_leave(void) { gclock_tl_guard--; }

/* ---- timers -------------------------------------------------------------- */

int64_t gclock_timer_raw(void) { return gclock_timer_raw_inline(); }

static int tsc_usable(void)
{
#if defined(__x86_64__)
	uint32_t a, b, c, d;
	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u));
	if (a < 0x80000007u)
		return 0;
	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u));
	return (d >> 8) & 1; /* invariant TSC */
#else
	return 0;
#endif
}

/* kernel_uses_tsc: the kernel's clocksource is the TSC, i.e. it found the
 * TSC stable and synchronised across CPUs (GCLOCK_TIMER=auto needs it). */
static int kernel_uses_tsc(void)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f == NULL)
		return 0;
	char buf[32] = {0};
	int ok = fgets(buf, sizeof buf, f) != NULL && strncmp(buf, "tsc", 3) == 0 &&
		 (buf[3] == '\n' || buf[3] == 0);
	fclose(f);
	return ok;
}

/* tsc_calibrate measures the TSC against CLOCK_MONOTONIC over 20 ms and
 * fills v = {ok, tsc0, ns0, mult, hz bits}: the TSC nanoseconds are
 * anchored to CLOCK_MONOTONIC at tsc0 so they start near it. */
static void tsc_calibrate(int64_t v[5])
{
	memset(v, 0, 5 * sizeof v[0]);
	if (!tsc_usable())
		return;
	int64_t m0 = gclock_clock(CLOCK_MONOTONIC);
	uint64_t c0 = gclock_rdtsc();
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	int64_t m1 = gclock_clock(CLOCK_MONOTONIC);
	uint64_t c1 = gclock_rdtsc();
	double hz = (double)(c1 - c0) / ((double)(m1 - m0) * 1e-9);
	if (!(hz > 1e6))
		return;
	uint64_t mult = (uint64_t)(1e9 / hz * 4294967296.0);
	v[0] = 1;
	memcpy(&v[1], &c1, sizeof c1);
	v[2] = m1;
	memcpy(&v[3], &mult, sizeof mult);
	memcpy(&v[4], &hz, sizeof hz);
}

/* timer_fast_update sets gclock_tsc_fast after the timer or the injection
 * changed (before recording starts, or in the tests' single thread). */
static void timer_fast_update(void)
{
	gclock_tsc_fast = gclock_timer_kind == GCK_TIMER_TSC && !gclock_fake_on;
}

int64_t gclock_now_slow(void) { return gclock_now_any(); }

/* gclock_timer_setup selects the timer; collective over all ranks (pmpi
 * calls it at the same point of start on every rank, with the same kind:
 * GCLOCK_TIMER=auto asks every rank for the TSC with need_kernel_tsc set,
 * so the machines' leaders decide). For the TSC, the lowest rank of each
 * machine calibrates once and every rank there uses the same conversion:
 * ranks on one machine then read one clock, which ClockPropSync assumes
 * (per-rank calibrations differed by about 0.5 ppm here, 0.5 µs per
 * second between ranks of one node that no sync epoch measures). */
int gclock_timer_setup(int kind, int need_kernel_tsc, uint64_t machine_key, double *tsc_hz)
{
	*tsc_hz = 0;
	if (kind == GCK_TIMER_TSC) {
		int64_t v[5];
		MPI_Comm local = h_null;
		int lrank = 0, rc = MPI_ERR_OTHER;
		/* One group per machine: by machine key (the kernel's boot id,
		 * which network and UTS namespaces share, so emulated hosts on one
		 * machine read one TSC conversion), else by shared memory. */
		if (ntcomm > 0 && machine_key != 0)
			rc = PMPI_Comm_split(tcomm[0], (int)(machine_key & 0x7fffffff), world_rank, &local);
		else if (ntcomm > 0)
			rc = PMPI_Comm_split_type(tcomm[0], MPI_COMM_TYPE_SHARED, world_rank, h_info_null, &local);
		if (rc == MPI_SUCCESS && local != h_null)
			PMPI_Comm_rank(local, &lrank);
		if (lrank == 0) {
			memset(v, 0, sizeof v);
			if (!need_kernel_tsc || kernel_uses_tsc())
				tsc_calibrate(v);
		}
		if (local != h_null) {
			if (PMPI_Bcast(v, 5, h_int64, 0, local) != MPI_SUCCESS)
				v[0] = 0;
			PMPI_Comm_free(&local);
		}
		if (!v[0] || !tsc_usable())
			return -1;
		uint64_t c1, mult;
		double hz;
		memcpy(&c1, &v[1], sizeof c1);
		memcpy(&mult, &v[3], sizeof mult);
		memcpy(&hz, &v[4], sizeof hz);
		gclock_tsc_mult = mult;
		gclock_tsc0 = c1;
		gclock_tsc_ns0 = v[2];
		*tsc_hz = hz;
	}
	if (kind < GCK_TIMER_MONOTONIC || kind > GCK_TIMER_MPI_WTIME)
		return -1;
	gclock_timer_kind = kind;
	timer_fast_update();
	return 0;
}

/* Non-linear injected terms (test mode only: the timer calls
 * gclock_fake_extra only when GCLOCK_FAKE_CLOCK has terms). The same
 * formulas as trace.FakeTerm.extra, which computes the truth. */
#define GCK_MAX_FAKE_TERMS 8
typedef struct {
	int kind;
	double a, b, c;
	double *off, *freq;
	int n;
} fake_term;
static fake_term fake_terms[GCK_MAX_FAKE_TERMS];
int gclock_fake_nl;
static int64_t fake_anchor;

void gclock_timer_fake_term(int kind, double a, double b, double c, const double *off, const double *freq, int n)
{
	if (gclock_fake_nl >= GCK_MAX_FAKE_TERMS)
		return;
	fake_term t = {kind, a, b, c, NULL, NULL, 0};
	if (kind == 3 && n > 0) {
		t.off = malloc((size_t)n * sizeof(double));
		t.freq = malloc((size_t)n * sizeof(double));
		if (t.off == NULL || t.freq == NULL)
			return;
		memcpy(t.off, off, (size_t)n * sizeof(double));
		memcpy(t.freq, freq, (size_t)n * sizeof(double));
		t.n = n;
	}
	fake_terms[gclock_fake_nl] = t;
	__atomic_store_n(&gclock_fake_nl, gclock_fake_nl + 1, __ATOMIC_RELEASE);
	gclock_fake_on = 1;
	timer_fast_update();
}

void gclock_timer_fake_anchor(int64_t anchor) { fake_anchor = anchor; }

double gclock_fake_extra(int64_t raw)
{
	double d = (double)(raw - fake_anchor), v = 0;
	for (int i = 0; i < gclock_fake_nl; i++) {
		const fake_term *t = &fake_terms[i];
		switch (t->kind) {
		case 1:
			if (d > t->a)
				v += t->b * 1e-6 * (d - t->a);
			break;
		case 2:
			v += t->a * sin(2 * M_PI / t->b * d + t->c);
			break;
		case 3:
			if (d > 0 && t->n > 0) {
				int k = (int)(d / t->a);
				if (k > t->n - 1)
					k = t->n - 1;
				v += t->off[k] + t->freq[k] * 1e-6 * (d - (double)k * t->a);
			}
			break;
		}
	}
	return v;
}

void gclock_timer_fake(double offset_ns, double drift_ppm)
{
	gclock_fake_off = (int64_t)offset_ns;
	gclock_fake_k = drift_ppm * 1e-6;
	gclock_fake_on = offset_ns != 0 || drift_ppm != 0;
	timer_fast_update();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* gclock_timer_cost_ns: median over 21 batches of the mean cost of one
 * timer read (batches of 1000). */
double gclock_timer_cost_ns(void)
{
	double v[21];
	for (int i = 0; i < 21; i++) {
		int64_t a = gclock_clock(CLOCK_MONOTONIC);
		volatile int64_t sink = 0;
		for (int j = 0; j < 1000; j++)
			sink += gclock_now();
		(void)sink;
		v[i] = (double)(gclock_clock(CLOCK_MONOTONIC) - a) / 1000.0;
	}
	qsort(v, 21, sizeof v[0], cmp_double);
	return v[10];
}

/* ---- thread buffers ------------------------------------------------------- */

int gclock_buffer_events(void) { return buffer_events; }
void gclock_set_buffer_events(int n)
{
	if (n >= 16)
		buffer_events = n;
}
uint64_t gclock_dropped(void) { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }

/* ---- file-backed thread buffers (docs/recorder.md, "Durability") ---------
 * Every thread buffer lives in a MAP_SHARED mapping of the rank's sidecar
 * file (<rank file>.live, opened by pmpi at start): whatever a thread
 * stored is in the page cache the moment it is stored, so a killed process
 * (SIGKILL, OOM killer, MPI_Abort elsewhere, a segfault) leaves its
 * unwritten events behind for tracemerge. The file starts with one page
 * of header; each buffer appends a page-aligned region. Without the file
 * (not opened, or mmap failing) buffers are malloc'ed as before. */
#define GCK_LIVE_PAGE 4096
static int live_fd = -1;
static off_t live_end = GCK_LIVE_PAGE;
static uint32_t live_threads;

int gclock_live_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	char hdr[GCK_LIVE_PAGE];
	memset(hdr, 0, sizeof hdr);
	memcpy(hdr, "GCKLIVE1", 8);
	uint32_t v[2] = {1, (uint32_t)sizeof(gclock_event)}; /* version, record size */
	memcpy(hdr + 8, v, sizeof v);
	if (pwrite(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr) {
		close(fd);
		return -1;
	}
	live_fd = fd;
	return 0;
}

/* live_region maps a new region of the sidecar for cap events per half;
 * NULL when there is no sidecar or it cannot grow. Caller holds buf_mu. */
static gclock_live_region *live_region(uint32_t cap)
{
	if (live_fd < 0)
		return NULL;
	size_t size = sizeof(gclock_live_region) + 2 * (size_t)cap * sizeof(gclock_event);
	size = (size + GCK_LIVE_PAGE - 1) / GCK_LIVE_PAGE * GCK_LIVE_PAGE;
	if (ftruncate(live_fd, live_end + (off_t)size) != 0)
		return NULL;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, live_fd, live_end);
	if (p == MAP_FAILED)
		return NULL;
	live_end += (off_t)size;
	gclock_live_region *r = p;
	r->cap = cap;
	r->thread = live_threads++;
	memcpy(r->magic, "GCKTHRD1", 8); /* last: the region is described */
	return r;
}

gclock_tbuf *gclock_tbuf_new(void)
{
	gclock_tbuf *b = calloc(1, sizeof *b);
	if (b == NULL) {
		__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	uint32_t cap = (uint32_t)buffer_events;
	pthread_mutex_lock(&buf_mu);
	b->live = live_region(cap);
	pthread_mutex_unlock(&buf_mu);
	if (b->live == NULL) {
		/* not durable: the same layout in ordinary memory */
		b->live = calloc(1, sizeof(gclock_live_region) + 2 * (size_t)cap * sizeof(gclock_event));
		if (b->live == NULL) {
			free(b);
			__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		b->live->cap = cap;
	}
	gclock_event *evs = (gclock_event *)(b->live + 1);
	b->halves[0] = evs;
	b->halves[1] = evs + cap;
	b->cap = cap;
	b->cur = 0;
	b->gen = 1;
	b->ev = b->halves[0];
	b->live->half[0].gen = 1;
	__atomic_store_n(&b->live->half[0].state, GCK_LIVE_FILLING, __ATOMIC_RELEASE);
	/* Scratch for the completion wrappers (p2p_rules.h); without it they
	 * record from the posted values only. */
	b->sc_req = malloc(GCK_SCRATCH * sizeof(MPI_Request));
	b->sc_st = malloc(GCK_SCRATCH * sizeof(MPI_Status));
	if (b->sc_req == NULL || b->sc_st == NULL) {
		free(b->sc_req);
		free(b->sc_st);
		b->sc_req = NULL;
		b->sc_st = NULL;
	}
	b->shq = calloc(GCK_SHARED_CAP, sizeof *b->shq); /* NULL: table only */
	pthread_mutex_lock(&buf_mu);
	b->next = all_bufs;
	all_bufs = b;
	pthread_mutex_unlock(&buf_mu);
	gclock_tl_buf = b;
	return b;
}

/* gclock_tbuf_full hands a full buffer to Go in one cgo call and records
 * the pause as a gclock_flush event (flush.c). */
void gclock_flush_mark(gclock_tbuf *b, uint32_t handed, int64_t t0, int64_t t1);

/* tbuf_swap hands the filled half to Go (which sets its state to
 * written once the rank file holds it) and starts filling the other one,
 * first waiting for Go to have written it if it is still queued. */
static void tbuf_swap(gclock_tbuf *b)
{
	int h = b->cur, o = 1 - h;
	__atomic_store_n(&b->live->half[h].state, GCK_LIVE_HANDED, __ATOMIC_RELEASE);
	gclockGoFlush(b->ev, (int64_t)b->n, &b->live->half[h].state);
	if (__atomic_load_n(&b->live->half[o].state, __ATOMIC_ACQUIRE) == GCK_LIVE_HANDED)
		gclockGoFlushWait(&b->live->half[o].state);
	b->gen++;
	if (b->gen == 0)
		b->gen = 1;
	b->cur = o;
	b->ev = b->halves[o];
	b->n = 0;
	b->live->half[o].gen = b->gen;
	__atomic_store_n(&b->live->half[o].state, GCK_LIVE_FILLING, __ATOMIC_RELEASE);
}

void gclock_tbuf_full(gclock_tbuf *b)
{
	gclock_tl_guard++;
	uint32_t handed = b->n;
	int64_t t0 = gclock_now();
	tbuf_swap(b);
	gclock_flush_mark(b, handed, t0, gclock_now());
	gclock_tl_guard--;
}

void gclock_flush_all(void)
{
	gclock_tl_guard++;
	pthread_mutex_lock(&buf_mu);
	for (gclock_tbuf *b = all_bufs; b != NULL; b = b->next) {
		if (b->poll_n != 0)
			gclock_polls_flush(b);
		if (b->n > 0)
			tbuf_swap(b);
	}
	pthread_mutex_unlock(&buf_mu);
	gclock_tl_guard--;
}

/* ---- communicator table --------------------------------------------------- */

static uint32_t comm_hash(uintptr_t k)
{
	return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - GCK_COMM_BITS));
}

/* comm_find returns the live slot of k or NULL; caller holds comm_mu. */
static gclock_comm_slot *comm_find(uintptr_t k)
{
	uint32_t i = comm_hash(k);
	for (uint32_t p = 0; p < GCK_COMM_SLOTS; p++) {
		gclock_comm_slot *s = &gclock_comms[(i + p) & (GCK_COMM_SLOTS - 1)];
		if (s->key == k)
			return s;
		if (s->key == GCK_KEY_EMPTY)
			return NULL;
	}
	return NULL;
}

/* comm_insert publishes a slot for k; caller holds comm_mu. The key is
 * stored last (release) so lock-free readers see a complete slot. */
static gclock_comm_slot *comm_insert(uintptr_t k, const gclock_comm_slot *v)
{
	uint32_t i = comm_hash(k);
	for (uint32_t p = 0; p < GCK_COMM_SLOTS; p++) {
		gclock_comm_slot *s = &gclock_comms[(i + p) & (GCK_COMM_SLOTS - 1)];
		if (s->key == GCK_KEY_EMPTY || s->key == GCK_KEY_TOMB) {
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
	}
	return NULL;
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

void gclock_resync_arm_world(int on) { resync_probe = on; }

static void resync_disarm_all(void)
{
	for (uint32_t i = 0; i < GCK_COMM_SLOTS; i++)
		gclock_comms[i].resync_at = UINT32_MAX;
}

void gclock_resync_arm(uint64_t comm_id, uint32_t seq)
{
	for (uint32_t i = 0; i < GCK_COMM_SLOTS; i++) {
		gclock_comm_slot *s = &gclock_comms[i];
		uintptr_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (k != GCK_KEY_EMPTY && k != GCK_KEY_TOMB && s->id == comm_id)
			s->resync_at = seq;
	}
}

void gclock_resync_point(gclock_comm_slot *cs, uint16_t op, uint64_t sent, uint64_t recv)
{
	int eligible = op == GCK_OP_MPI_BARRIER ||
		       ((op == GCK_OP_MPI_ALLREDUCE || op == GCK_OP_MPI_ALLGATHER || op == GCK_OP_MPI_ALLTOALL ||
			 op == GCK_OP_MPI_REDUCE_SCATTER_BLOCK) && sent > 0 && recv > 0);
	if (!eligible || cs->inter || !gclock_active)
		return;
	resync_probe = 0;
	resync_disarm_all(); /* Go arms the next point */
	int64_t t0 = gclock_now();
	uint64_t r = gclockGoResync(cs->id, cs->seq - 1);
	int64_t t1 = gclock_now();
	cs->resync_at = (uint32_t)r;
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
	v.id = gclockGoComm(fixed_id, parent ? parent->id : 0, counter, v.local, kbuf,
			    members, (int32_t)n, now);
	/* Point-to-point peers as world ranks: the members of an
	 * intracommunicator, the remote group of an intercommunicator. The
	 * array is kept for the life of the process (requests may outlive
	 * MPI_Comm_free). */
	if (!inter && n == v.size && members != NULL) {
		v.peers = members;
		v.npeers = n;
		members = NULL;
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
					v.peers = pp;
					v.npeers = rs;
					pp = NULL;
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
	v.resync_at = UINT32_MAX;
	pthread_mutex_lock(&comm_mu);
	v.local = next_local++;
	pthread_mutex_unlock(&comm_mu);
	char kbuf[32];
	snprintf(kbuf, sizeof kbuf, "%s", kind);
	v.id = gclockGoComm(0, parent->id, counter, v.local, kbuf, (int32_t *)v.peers,
			    v.peers != NULL ? v.npeers : 0, now);
	pthread_mutex_lock(&comm_mu);
	comm_insert((uintptr_t)win, &v);
	pthread_mutex_unlock(&comm_mu);
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
	if (s != NULL) {
		local = s->local;
		/* The handle may be reused by a later communicator: the
		 * tombstone lets it get a fresh slot and local index. */
		__atomic_store_n(&s->key, GCK_KEY_TOMB, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&comm_mu);
	if (s != NULL)
		gclockGoCommFreed(local, now);
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

/* ---- lifecycle ------------------------------------------------------------ */

static int env_true(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && *v != '\0' && strcmp(v, "0") != 0 && strcmp(v, "false") != 0;
}

static void gclock_atexit(void)
{
	if (!started || finished)
		return;
	finished = 1;
	gclock_active = 0;
	gclock_flush_all();
	gclock_tl_guard++;
	gclockGoFinish(GCK_FINISH_EXIT);
	gclock_tl_guard--;
}

/* ---- crash signals: keep Open MPI's backtrace ------------------------------
 *
 * The Go runtime installs handlers for SIGSEGV, SIGBUS, SIGFPE (and sees
 * SIGABRT) when the library loads, and Open MPI installs its own
 * backtrace-printing handler in MPI_Init only where none is installed, so
 * under the preload an application crash would lose Open MPI's "*** Process
 * received signal ***" report. Around PMPI_Init the shim resets those
 * signals to SIG_DFL, lets the MPI library install its handlers, and then
 * installs a dispatcher that hands a fault to the Go runtime's handler when
 * the faulting instruction is in this library (Go code turns those into
 * panics) and to the MPI library's handler otherwise. */

static const int crash_sigs[] = {SIGABRT, SIGBUS, SIGFPE, SIGSEGV};
#define NCRASH (int)(sizeof crash_sigs / sizeof crash_sigs[0])
static struct sigaction go_act[NCRASH], mpi_act[NCRASH];
static uintptr_t self_lo, self_hi;

static int self_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t base = (uintptr_t)data;
	if (info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
			if (self_lo == 0 || lo < self_lo)
				self_lo = lo;
			if (hi > self_hi)
				self_hi = hi;
		}
	}
	return 1;
}

static void call_action(const struct sigaction *a, int sig, siginfo_t *si, void *uc)
{
	if (a->sa_flags & SA_SIGINFO) {
		a->sa_sigaction(sig, si, uc);
	} else if (a->sa_handler == SIG_DFL) {
		signal(sig, SIG_DFL);
		raise(sig);
	} else if (a->sa_handler != SIG_IGN) {
		a->sa_handler(sig);
	}
}

static void crash_dispatch(int sig, siginfo_t *si, void *ucv)
{
	int i = 0;
	while (i < NCRASH && crash_sigs[i] != sig)
		i++;
	if (i == NCRASH)
		return;
	uintptr_t pc = 0;
#if defined(__x86_64__)
	pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#endif
	if (pc >= self_lo && pc < self_hi)
		call_action(&go_act[i], sig, si, ucv);
	else
		call_action(&mpi_act[i], sig, si, ucv);
}

static int crash_reset(void)
{
#if defined(__x86_64__)
	Dl_info di;
	if (!dladdr((void *)&crash_dispatch, &di) || di.dli_fbase == NULL)
		return 0;
	dl_iterate_phdr(self_cb, di.dli_fbase);
	if (self_hi == 0)
		return 0;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int i = 0; i < NCRASH; i++)
		sigaction(crash_sigs[i], &dfl, &go_act[i]);
	return 1;
#else
	return 0;
#endif
}

static void crash_install(void)
{
	for (int i = 0; i < NCRASH; i++) {
		sigaction(crash_sigs[i], NULL, &mpi_act[i]);
		if (!(mpi_act[i].sa_flags & SA_SIGINFO) && mpi_act[i].sa_handler == SIG_DFL) {
			/* The MPI library installed nothing here: Go's as before. */
			sigaction(crash_sigs[i], &go_act[i], NULL);
			continue;
		}
		struct sigaction d;
		memset(&d, 0, sizeof d);
		d.sa_sigaction = crash_dispatch;
		d.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigfillset(&d.sa_mask);
		sigaction(crash_sigs[i], &d, NULL);
	}
}

/* after_init runs right after a successful PMPI_Init(_thread). */
static void after_init(void)
{
	if (env_true("GCLOCK_DISABLE") || started)
		return;
	if (!handles_resolve()) {
		fprintf(stderr, "gclock: cannot find the MPI library's predefined handles "
				"(MPI_COMM_WORLD, ...); not recording (the application continues)\n");
		return;
	}
	if (PMPI_Comm_dup(h_world, &tcomm[0]) != MPI_SUCCESS)
		return;
	ntcomm = 1;
	PMPI_Comm_rank(h_world, &world_rank);
	PMPI_Comm_size(h_world, &world_size);
	PMPI_Comm_group(h_world, &world_group);
	int level = MPI_THREAD_MULTIPLE;
	if (PMPI_Query_thread(&level) != MPI_SUCCESS)
		level = MPI_THREAD_MULTIPLE;
	gclock_mt = level == MPI_THREAD_MULTIPLE;
	started = 1;
	atexit(gclock_atexit);
	if (!gclockGoStart())
		return; /* inert, but epoch 1 and finish still run collectively */
	gclock_active = 1;
	gclock_comm_slot *w = comm_register(h_world, NULL, 0, "world", 1);
	gclock_comm_slot *s = comm_register(h_self, NULL, 0, "self", 2);
	if (w == NULL || s == NULL)
		gclock_active = 0;
	/* The initialising thread's event buffer is made here, not at its
	 * first recorded call, so no application MPI call on it ever
	 * allocates; other threads get theirs at their first event (once). */
	if (gclock_active && gclock_tl_buf == NULL)
		(void)gclock_tbuf_new();
}

extern int gclock_init_seen; /* resolve.c */

/* gclock_init_begin and gclock_init_end bracket the real MPI_Init(_thread)
 * of every binding (C here, Fortran in fortran.c): the guard keeps an inner
 * MPI_Init (MPICH's Fortran layer calls the C one) from starting twice. */
int gclock_init_begin(void)
{
	gclock_init_seen = 1;
	gclock_tl_guard++;
	return crash_reset();
}

void gclock_init_end(int swapped, int rc)
{
	if (swapped)
		crash_install();
	if (rc == MPI_SUCCESS)
		after_init();
	gclock_tl_guard--;
}

int MPI_Init(int *argc, char ***argv)
{
	if (gclock_tl_guard) {
		gclock_init_seen = 1;
		return PMPI_Init(argc, argv);
	}
	int swapped = gclock_init_begin();
	int rc = PMPI_Init(argc, argv);
	gclock_init_end(swapped, rc);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	if (gclock_tl_guard) {
		gclock_init_seen = 1;
		return PMPI_Init_thread(argc, argv, required, provided);
	}
	int swapped = gclock_init_begin();
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	gclock_init_end(swapped, rc);
	return rc;
}

/* gclock_finalize_begin runs before the real MPI_Finalize of every
 * binding: final sync epoch and flush. Returns 1 if gclock_finalize_end
 * must follow the real call. */
int gclock_finalize_begin(void)
{
	if (gclock_tl_guard || !started || finished)
		return 0;
	gclock_tl_guard++;
	finished = 1;
	gclock_active = 0;
	gclock_flush_all();
	gclockGoFinish(GCK_FINISH_FINALIZE);
	for (int i = ntcomm - 1; i >= 0; i--)
		if (tcomm[i] != h_null)
			PMPI_Comm_free(&tcomm[i]);
	ntcomm = 0;
	PMPI_Group_free(&world_group);
	return 1;
}

void gclock_finalize_end(void) { gclock_tl_guard--; }

int MPI_Finalize(void)
{
	int own = gclock_finalize_begin();
	int rc = PMPI_Finalize();
	if (own)
		gclock_finalize_end();
	return rc;
}

/* gclock_abort_begin writes the calling rank's buffered events (footer
 * reason "abort", no sync epoch) before the real MPI_Abort of any binding. */
void gclock_abort_begin(void)
{
	if (started && !finished && !gclock_tl_guard) {
		gclock_tl_guard++;
		finished = 1;
		gclock_active = 0;
		gclock_flush_all();
		gclockGoFinish(GCK_FINISH_ABORT);
		gclock_tl_guard--;
	}
}

/* MPI_Abort: the calling rank's buffered events are written (footer reason
 * "abort", no sync epoch) before the MPI library kills the job; the other
 * ranks keep what they flushed before. */
int MPI_Abort(MPI_Comm comm, int errorcode)
{
	gclock_abort_begin();
	return PMPI_Abort(comm, errorcode);
}

/* ---- selective tracing ------------------------------------------------------ */

uint8_t gclock_op_off[GCK_OP_COUNT];
int gclock_paused;
static uint32_t pcontrol_count;

/* gclock_set_op_off is GCLOCK_OPS's effect (pmpi/selective.go), set in
 * MPI_Init before recording starts. */
void gclock_set_op_off(int op, int off)
{
	if (op >= 0 && op < GCK_OP_COUNT)
		gclock_op_off[op] = off != 0;
}

/* gclock_pcontrol records MPI_Pcontrol(level) and applies it: level 0
 * pauses recording on this process after its event, any other level
 * resumes it before its event, so a paused interval lies between two
 * MPI_Pcontrol events (Root = level). Instance counts, requests and resync
 * meetings go on while paused (gclock_skip). */
void gclock_pcontrol(int level, int64_t t0, int64_t t1, void *ra)
{
	if (!gclock_active)
		return;
	if (level != 0)
		gclock_paused = 0;
	gclock_tbuf *b = gclock_tl_buf;
	if (b == NULL)
		b = gclock_tbuf_new();
	if (!gclock_skip(GCK_OP_MPI_PCONTROL) && b != NULL) {
		if (b->poll_n != 0)
			gclock_polls_flush(b);
		gclock_event *e = &b->ev[b->n];
		memset(e, 0, sizeof *e);
		e->enter_ns = t0;
		e->exit_ns = t1;
		e->callsite = (uint64_t)(uintptr_t)ra;
		e->comm = 0xffffffffu;
		e->seq = pcontrol_count;
		e->root = level;
		e->op = GCK_OP_MPI_PCONTROL;
		__atomic_store_n(&e->pad, b->gen, __ATOMIC_RELEASE);
		if (++b->n == b->cap)
			gclock_tbuf_full(b);
	}
	pcontrol_count++;
	if (level == 0)
		gclock_paused = 1;
}

/* MPI_Pcontrol: the MPI library's own does nothing; it gets the level only
 * (extra arguments are for the profiling library, i.e. us, and unused). */
int MPI_Pcontrol(const int level, ...)
{
	if (!gclock_active || gclock_tl_guard)
		return PMPI_Pcontrol(level);
	gclock_tl_guard++;
	int64_t t0 = gclock_now();
	int rc = PMPI_Pcontrol(level);
	int64_t t1 = gclock_now();
	gclock_pcontrol(level, t0, t1, __builtin_return_address(0));
	gclock_tl_guard--;
	return rc;
}

/* ---- PMPI helpers for Go's own traffic ------------------------------------ */

#define GCK_TAG 0x6c6b /* "lk" */

static MPI_Comm tc_get(int tc)
{
	if (tc < 0 || tc >= ntcomm)
		return h_null;
	return tcomm[tc];
}

int gclock_world_rank(void) { return world_rank; }
int gclock_world_size(void) { return world_size; }

int gclock_t_rank(int tc)
{
	int r = -1;
	PMPI_Comm_rank(tc_get(tc), &r);
	return r;
}

int gclock_t_size(int tc)
{
	int n = 0;
	PMPI_Comm_size(tc_get(tc), &n);
	return n;
}

int gclock_t_send(int tc, const double *v, int n, int dst, int sync)
{
	if (sync)
		return PMPI_Ssend(v, n, h_double, dst, GCK_TAG, tc_get(tc));
	return PMPI_Send(v, n, h_double, dst, GCK_TAG, tc_get(tc));
}

int gclock_t_recv(int tc, double *v, int n, int src)
{
	return PMPI_Recv(v, n, h_double, src, GCK_TAG, tc_get(tc), MPI_STATUS_IGNORE);
}

int gclock_t_bcast(int tc, void *buf, int64_t n, int root)
{
	if (n < 0 || n > 0x7fffffff)
		return MPI_ERR_COUNT;
	return PMPI_Bcast(buf, (int)n, h_byte, root, tc_get(tc));
}

int gclock_t_bcast_i64(int tc, int64_t *v, int root)
{
	return PMPI_Bcast(v, 1, h_int64, root, tc_get(tc));
}

int gclock_t_split(int tc, int color, int key, int *newtc)
{
	*newtc = -1;
	MPI_Comm nc;
	int rc = PMPI_Comm_split(tc_get(tc), color < 0 ? MPI_UNDEFINED : color, key, &nc);
	if (rc != MPI_SUCCESS || nc == h_null)
		return rc;
	if (ntcomm >= GCK_MAX_TCOMM) {
		PMPI_Comm_free(&nc);
		return MPI_ERR_NO_MEM;
	}
	tcomm[ntcomm] = nc;
	*newtc = ntcomm++;
	return MPI_SUCCESS;
}

int gclock_t_barrier(int tc) { return PMPI_Barrier(tc_get(tc)); }

/* gclock_node_shared: node index = order of the shared-memory leaders (the
 * lowest world rank of each MPI_COMM_TYPE_SHARED group). machine_key names
 * the physical machine (a hash of the kernel's boot id, which network and UTS
 * namespaces share; 0 = unknown); *machine_ranks counts the world ranks with
 * this rank's key, or is the node size when the key is unknown. */
int gclock_node_shared(int *node_id, int *node_size, uint64_t machine_key,
		       int *machine_ranks)
{
	MPI_Comm local;
	*node_id = 0;
	*node_size = 1;
	*machine_ranks = 1;
	int rc = PMPI_Comm_split_type(tcomm[0], MPI_COMM_TYPE_SHARED, world_rank,
				      h_info_null, &local);
	if (rc != MPI_SUCCESS)
		return rc;
	int lrank = 0, lsize = 1, leader = world_rank;
	PMPI_Comm_rank(local, &lrank);
	PMPI_Comm_size(local, &lsize);
	PMPI_Bcast(&leader, 1, h_int, 0, local);
	PMPI_Comm_free(&local);
	int *all = malloc(sizeof(int) * 3 * (size_t)world_size);
	if (all == NULL)
		return MPI_ERR_NO_MEM;
	int mine[3] = {lrank, (int)(uint32_t)(machine_key >> 32), (int)(uint32_t)machine_key};
	rc = PMPI_Allgather(mine, 3, h_int, all, 3, h_int, tcomm[0]);
	if (rc == MPI_SUCCESS) {
		int id = 0, same = 0;
		for (int r = 0; r < leader && r < world_size; r++)
			if (all[3 * r] == 0)
				id++;
		for (int r = 0; r < world_size; r++)
			if (all[3 * r + 1] == mine[1] && all[3 * r + 2] == mine[2])
				same++;
		*node_id = id;
		*node_size = lsize;
		*machine_ranks = machine_key != 0 ? same : lsize;
	}
	free(all);
	return rc;
}

void gclock_mpi_library_version(char *buf, int len)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	buf[0] = '\0';
	if (PMPI_Get_library_version(v, &n) != MPI_SUCCESS)
		return;
	v[n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
	size_t line = strcspn(v, "\n");
	if ((int)line >= len)
		line = (size_t)len - 1;
	memcpy(buf, v, line);
	buf[line] = '\0';
}

/* ---- loaded objects -------------------------------------------------------- */

struct objs_ctx {
	gclock_object *out;
	int max, n;
};

static void build_id(const struct dl_phdr_info *info, const ElfW(Phdr) *ph,
		     gclock_object *o)
{
	const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
	const char *end = p + ph->p_memsz;
	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
		size_t nsz = (nh->n_namesz + 3) & ~(size_t)3;
		size_t dsz = (nh->n_descsz + 3) & ~(size_t)3;
		const char *name = p + sizeof *nh;
		const char *desc = name + nsz;
		if (desc + dsz > end)
			return;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= sizeof o->build_id) {
			memcpy(o->build_id, desc, nh->n_descsz);
			o->build_id_len = (int)nh->n_descsz;
			return;
		}
		p = desc + dsz;
	}
}

static int objs_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct objs_ctx *c = data;
	if (c->n >= c->max)
		return 1;
	gclock_object *o = &c->out[c->n];
	memset(o, 0, sizeof *o);
	const char *name = info->dlpi_name;
	if (name == NULL || name[0] == '\0') {
		if (c->n == 0) {
			ssize_t k = readlink("/proc/self/exe", o->path, sizeof o->path - 1);
			if (k > 0)
				o->path[k] = '\0';
		}
	} else {
		snprintf(o->path, sizeof o->path, "%s", name);
	}
	o->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uint64_t lo = info->dlpi_addr + ph->p_vaddr;
			uint64_t hi = lo + ph->p_memsz;
			if (o->lo == 0 || lo < o->lo)
				o->lo = lo;
			if (hi > o->hi)
				o->hi = hi;
		} else if (ph->p_type == PT_NOTE && o->build_id_len == 0) {
			build_id(info, ph, o);
		}
	}
	if (o->path[0] == '\0' || o->hi == 0)
		return 0; /* vdso without a path, or nothing executable */
	c->n++;
	return 0;
}

int gclock_objects(gclock_object *out, int max)
{
	struct objs_ctx c = {out, max, 0};
	dl_iterate_phdr(objs_cb, &c);
	return c.n;
}

/*
 * buffers.c: thread buffers: two halves of events per thread, in a region of
 * the rank file's sidecar (<rank file>.live) mapped shared, so that what a
 * thread stored survives its process (docs/explanation/recorder.md, "Durability");
 * gclock_tbuf_full writes a full half to the rank file (cwrite.c, or Go).
 *
 * Part of the C shim; compiled in the unity build pmpi/cshim.c after timer.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gclock.h"
#include "hotpath.h"
#include "shim.h"

/* ---- thread buffers ------------------------------------------------------- */

int gclock_buffer_events(void) { return buffer_events; }
void gclock_set_buffer_events(int n)
{
	if (n >= 16)
		buffer_events = n;
}
uint64_t gclock_dropped(void) { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }

/* ---- file-backed thread buffers (docs/explanation/recorder.md, "Durability") ---------
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
static char live_path[4096];
static int live_warned;
static dev_t live_dev; /* the sidecar's identity, checked before each use */
static gclock_live_end *end_rec; /* how the process ended (below) */
static ino_t live_ino;

/* fsize_allows says whether the process's file size limit (RLIMIT_FSIZE,
 * "ulimit -f") lets a file grow to end bytes: growing past it (write,
 * ftruncate, posix_fallocate) would send SIGXFSZ, which kills the
 * application unless it handles the signal. Read each time: the
 * application may change it. */
static int fsize_allows(off_t end)
{
	struct rlimit rl;
	return getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	       (rlim_t)end <= rl.rlim_cur;
}

int gclock_live_open(const char *path)
{
	if (!fsize_allows(2 * GCK_LIVE_PAGE)) {
		errno = EFBIG;
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	snprintf(live_path, sizeof live_path, "%s", path);
	char hdr[GCK_LIVE_PAGE];
	memset(hdr, 0, sizeof hdr);
	memcpy(hdr, "GCKLIVE1", 8);
	/* version 2: 128-byte region headers with the call in flight, the end
	 * record at byte 64 (docs/guide/crash-hang.md); version 3: the call in
	 * flight is the thread's next record, marked (gclock.h GCK_PAD_FL) */
	uint32_t v[2] = {3, (uint32_t)sizeof(gclock_event)}; /* version, record size */
	memcpy(hdr + 8, v, sizeof v);
	struct stat st;
	if (pwrite(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr || fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	live_dev = st.st_dev;
	live_ino = st.st_ino;
	live_fd = fd;
	/* The first page mapped too: a dying process's end is a few stores
	 * (gclock_end_record, also from a signal handler). */
	void *p = mmap(NULL, GCK_LIVE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED)
		__atomic_store_n(&end_rec, (gclock_live_end *)((char *)p + 64), __ATOMIC_RELEASE);
	return 0;
}

/* ---- how the process ended (docs/guide/crash-hang.md) ---------------------------
 * end_rec points into the sidecar's first page once it is mapped, else at
 * end_mem (what the footer then still gets). */
static gclock_live_end end_mem;

int gclock_end_record(uint32_t kind, int32_t code, int32_t si_code, uint64_t addr, uint64_t callsite,
		      int32_t pid)
{
	gclock_live_end *e = __atomic_load_n(&end_rec, __ATOMIC_ACQUIRE);
	if (e == NULL)
		e = &end_mem;
	if (__atomic_exchange_n(&e->state, 1u, __ATOMIC_ACQ_REL) != 0)
		return 0; /* an earlier end (or another thread's) stands */
	gclock_tbuf *b = gclock_tl_buf;
	e->kind = kind;
	e->t = gclock_now();
	e->code = code;
	e->si_code = si_code;
	e->addr = addr;
	e->callsite = callsite;
	e->pid = pid;
	e->tid = (int32_t)syscall(SYS_gettid);
	e->thread = b != NULL && b->live != NULL ? b->live->thread : UINT32_MAX;
	__atomic_store_n(&e->state, 2u, __ATOMIC_RELEASE); /* last: complete */
	return 1;
}

int gclock_end_get(gclock_live_end *out)
{
	gclock_live_end *e = __atomic_load_n(&end_rec, __ATOMIC_ACQUIRE);
	if (e == NULL)
		e = &end_mem;
	if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != 2)
		return 0;
	*out = *e;
	return 1;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels: EINVAL, then stores */
#endif

/* Bytes of a region prefault makes present at most: a GCLOCK_BUFFER of
 * millions of events would otherwise fill the page cache (and lengthen
 * MPI_Init by ≈ 3.5 µs per page) for halves a run may never fill. */
#define GCK_PREFAULT_MAX ((size_t)64 << 20)

/* prefault makes p..p+len (at most GCK_PREFAULT_MAX bytes) present and
 * writable now, while the buffer is made (in MPI_Init for the main thread):
 * the first store to a page of the sidecar otherwise takes a page fault
 * with the file system's page_mkwrite, ≈ 3.5 µs each on the Intel VM's ext4
 * (2026-11-27), 289 per thread buffer, about 1 ms landing between the first
 * 16384 recorded calls. Rewriting a byte with its own value changes
 * nothing: nobody else sees the region yet, and its blocks are allocated
 * (live_region), so the stores cannot fault for want of space. */
static void prefault(void *p, size_t len)
{
	len = len < GCK_PREFAULT_MAX ? len : GCK_PREFAULT_MAX;
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
		return;
	volatile char *c = p;
	for (size_t i = 0; i < len; i += GCK_LIVE_PAGE)
		c[i] = c[i];
}

/* live_same says whether fd refers to the sidecar. */
static int live_same(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == live_dev && st.st_ino == live_ino;
}

/* live_owned makes sure live_fd still refers to the sidecar. The
 * application may close descriptors it does not own and open files of its
 * own, which get the same numbers (posix_fallocate would then grow the
 * application's file, and its pages would become a thread buffer): the
 * taken descriptor is never used again nor closed, and the sidecar is
 * reopened by its path; if that is not the same file, no new buffer is
 * durable (one warning). Caller holds buf_mu. */
static int live_owned(void)
{
	if (live_same(live_fd))
		return 1;
	int fd = open(live_path, O_RDWR | O_CLOEXEC);
	if (fd >= 0 && live_same(fd)) {
		live_fd = fd;
		return 1;
	}
	if (fd >= 0)
		close(fd);
	fprintf(stderr,
		"gclock: rank %d: the descriptor of %s was closed by someone else (the application?) and the file "
		"cannot be reopened: new threads' event buffers are ordinary memory and are lost if the process dies\n",
		gclock_world_rank(), live_path);
	live_fd = -1;
	return 0;
}

/* live_region maps a new region of the sidecar for cap events per half;
 * NULL when there is no sidecar or it cannot grow. Caller holds buf_mu. */
static gclock_live_region *live_region(uint32_t cap)
{
	if (live_fd < 0)
		return NULL;
	if (!live_owned())
		return NULL;
	size_t size = sizeof(gclock_live_region) + 2 * (size_t)cap * sizeof(gclock_event);
	size = (size + GCK_LIVE_PAGE - 1) / GCK_LIVE_PAGE * GCK_LIVE_PAGE;
	/* The region's blocks are allocated now, not at the first store to each
	 * page: a store to a page of a file mapping that the file system cannot
	 * back (full disk, quota, a small tmpfs) is a SIGBUS in the application.
	 * posix_fallocate grows the file; where the file system has no
	 * fallocate, glibc writes the blocks instead. */
	int e = fsize_allows(live_end + (off_t)size) ? posix_fallocate(live_fd, live_end, (off_t)size) : -1;
	if (e != 0) {
		int rc = ftruncate(live_fd, live_end); /* drop a partial tail */
		(void)rc;
		if (!__atomic_exchange_n(&live_warned, 1, __ATOMIC_RELAXED))
			fprintf(stderr,
				"gclock: rank %d: cannot reserve %zu bytes in %s for a thread's event buffer (%s): "
				"its events stay in memory until written, and are lost if the process dies\n",
				gclock_world_rank(), size, live_path,
				e < 0 ? "the file size limit, ulimit -f, is too small" : strerror(e));
		return NULL;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, live_fd, live_end);
	if (p == MAP_FAILED)
		return NULL;
	live_end += (off_t)size;
	prefault(p, size);
	gclock_live_region *r = p;
	r->cap = cap;
	r->thread = live_threads++;
	memcpy(r->magic, "GCKTHRD1", 8); /* last: the region is described */
	return r;
}

/* ---- buffers of exited threads -------------------------------------------
 * A thread's buffer outlives the thread: its events (in the sidecar) are
 * written when its half fills or at the final flush. When the thread
 * exits, its buffer goes to an idle list, and the next thread that needs a
 * buffer takes it over instead of mapping a new region. Before 2026-11-27
 * every thread that ever made an MPI call kept its buffer: a program that
 * runs 200 short-lived threads one after the other held 244 MB of sidecar
 * pages per rank (RssFile, which a memory cgroup charges) against 10.8 MB
 * untraced. The take-over keeps the events and the request-id block; it
 * drops the exited thread's ring of shared handles, which no other thread
 * looks in (requests it started and never completed stay uncompleted, as
 * they did). */
static pthread_key_t tbuf_key;
static pthread_once_t tbuf_key_once = PTHREAD_ONCE_INIT;
static int tbuf_key_ok;
static gclock_tbuf *idle_bufs; /* under buf_mu, linked by idle_next */
static int idle_unwritten;     /* an idle buffer holds events (flush_idle) */

static void tbuf_swap(gclock_tbuf *b);

/* tbuf_drain writes what b holds: its run of polls as an event, then
 * its half (the caller holds the guard). */
static void tbuf_drain(gclock_tbuf *b)
{
	if (b->poll_n != 0)
		gclock_polls_flush(b);
	if (b->n > 0)
		tbuf_swap(b);
}

/* tbuf_exit is the key's destructor: the exiting thread's buffer becomes
 * idle. No Go call, no flush: the thread may be anywhere in its exit. */
static void tbuf_exit(void *p)
{
	gclock_tbuf *b = p;
	if (gclock_tl_buf == b)
		gclock_tl_buf = NULL;
	b->live->tid = 0;
	pthread_mutex_lock(&buf_mu);
	b->idle_next = idle_bufs;
	idle_bufs = b;
	if (b->n > 0 || b->poll_n != 0)
		__atomic_store_n(&idle_unwritten, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&buf_mu);
}

/* flush_idle writes the events left in idle buffers, each as a chunk of its
 * own: run by a thread that starts and by one whose half is full (both
 * call Go anyway), so an exited thread's events are written within one
 * buffer half of any other thread's, which keeps a rank's chunks in
 * tracemerge's reorder window (a buffer that stayed idle until the final
 * flush came after everything else: "events come after later ones"). */
static void flush_idle(void)
{
	if (!__atomic_load_n(&idle_unwritten, __ATOMIC_RELAXED))
		return;
	gclock_tl_guard++;
	pthread_mutex_lock(&buf_mu);
	__atomic_store_n(&idle_unwritten, 0, __ATOMIC_RELAXED);
	for (gclock_tbuf *b = idle_bufs; b != NULL; b = b->idle_next)
		tbuf_drain(b);
	pthread_mutex_unlock(&buf_mu);
	gclock_tl_guard--;
}

static void tbuf_key_make(void) { tbuf_key_ok = pthread_key_create(&tbuf_key, tbuf_exit) == 0; }

/* tbuf_adopt makes b the calling thread's buffer. */
static gclock_tbuf *tbuf_adopt(gclock_tbuf *b)
{
	b->live->tid = (int32_t)syscall(SYS_gettid);
	gclock_tl_buf = b;
	if (tbuf_key_ok)
		pthread_setspecific(tbuf_key, b);
	return b;
}

gclock_tbuf *gclock_tbuf_new(void)
{
	pthread_once(&tbuf_key_once, tbuf_key_make);
	pthread_mutex_lock(&buf_mu);
	gclock_tbuf *idle = idle_bufs;
	if (idle != NULL) {
		idle_bufs = idle->idle_next;
		idle->idle_next = NULL;
		idle->shq_head = idle->shq_tail = 0;
	}
	pthread_mutex_unlock(&buf_mu);
	if (idle != NULL) {
		/* The exited thread's events become one chunk of their own now
		 * (its run of polls first), and so do the other idle buffers'. */
		gclock_tl_guard++;
		tbuf_drain(idle);
		gclock_tl_guard--;
		flush_idle();
		return tbuf_adopt(idle);
	}
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
	b->sc_cap = GCK_SCRATCH;
	if (b->sc_req == NULL || b->sc_st == NULL) {
		free(b->sc_req);
		free(b->sc_st);
		b->sc_req = NULL;
		b->sc_st = NULL;
		b->sc_cap = 0;
	}
	b->shq = calloc(GCK_SHARED_CAP, sizeof *b->shq); /* NULL: table only */
	pthread_mutex_lock(&buf_mu);
	b->next = all_bufs;
	all_bufs = b;
	pthread_mutex_unlock(&buf_mu);
	return tbuf_adopt(b);
}

/* gclock_shared_peers_each calls f on the member list of every request
 * in every thread's FIFO of shared handles (comms.c's sweep of retired
 * member lists; the request tables: gclock_requests_peers_each). Each
 * ring is read whole, not between its head and tail: under
 * MPI_THREAD_MULTIPLE its owner may move them meanwhile. A consumed entry
 * has key 0 (stored with release after its last read of the list). */
void gclock_shared_peers_each(void (*f)(const int32_t *))
{
	pthread_mutex_lock(&buf_mu);
	for (gclock_tbuf *b = all_bufs; b != NULL; b = b->next) {
		if (b->shq == NULL)
			continue;
		for (uint32_t i = 0; i < GCK_SHARED_CAP; i++) {
			const gclock_shared_req *q = &b->shq[i];
			if (__atomic_load_n(&q->key, __ATOMIC_ACQUIRE) != 0)
				f(q->peers);
		}
	}
	pthread_mutex_unlock(&buf_mu);
}

/* gclock_scratch_grow makes b's scratch hold count requests (the next
 * power of two, at most GCK_SCRATCH_MAX); 0 when it cannot, the scratch
 * then as it was. Its contents are per call, so nothing is copied. Before
 * 2026-11-27 the scratch stayed at 1024 and a call with more requests
 * recorded the completions of its first 1024 only: a Waitall of 1000
 * receives and 1000 sends left 976 sends never completed in the trace. */
int gclock_scratch_grow(gclock_tbuf *b, int count)
{
	if (b->sc_req == NULL || count > GCK_SCRATCH_MAX)
		return 0;
	int cap = b->sc_cap > 0 ? b->sc_cap : GCK_SCRATCH;
	while (cap < count)
		cap *= 2;
	MPI_Request *r = malloc((size_t)cap * sizeof *r);
	MPI_Status *st = malloc((size_t)cap * sizeof *st);
	if (r == NULL || st == NULL) {
		free(r);
		free(st);
		return 0;
	}
	free(b->sc_req);
	free(b->sc_st);
	b->sc_req = r;
	b->sc_st = st;
	b->sc_cap = cap;
	return 1;
}

/* gclock_tbuf_full writes a full buffer (in C, cwrite.c, or through Go) and records
 * the pause as a gclock_flush event (flush.c). */
void gclock_flush_mark(gclock_tbuf *b, uint32_t handed, int64_t t0, int64_t t1);

/* tbuf_swap writes the filled half in C or hands it to Go (either sets
 * its state to written once the rank file holds it) and starts filling the other one,
 * first waiting for Go to have written it if it is still queued. */
static void tbuf_swap(gclock_tbuf *b)
{
	int h = b->cur, o = 1 - h;
	__atomic_store_n(&b->live->half[h].state, GCK_LIVE_HANDED, __ATOMIC_RELEASE);
	gclock_cw_flush(b->ev, (int64_t)b->n, &b->live->half[h].state); /* in C, or to Go */
	if (__atomic_load_n(&b->live->half[o].state, __ATOMIC_ACQUIRE) == GCK_LIVE_HANDED)
		gclock_go.flush_wait(&b->live->half[o].state);
	/* below 2^31: the top bit of a record's pad marks a call in flight
	 * (gclock.h GCK_PAD_FL) */
	b->gen = (b->gen + 1) & 0x7fffffffu;
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
	flush_idle();
	gclock_flush_mark(b, handed, t0, gclock_now());
	gclock_tl_guard--;
}

void gclock_flush_all(void)
{
	gclock_tl_guard++;
	pthread_mutex_lock(&buf_mu);
	for (gclock_tbuf *b = all_bufs; b != NULL; b = b->next)
		tbuf_drain(b);
	pthread_mutex_unlock(&buf_mu);
	gclock_tl_guard--;
}

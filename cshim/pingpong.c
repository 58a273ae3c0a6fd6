/*
 * pingpong.c: the timed ping-pong loop of SKaMPI-Offset (Algorithm 7 of the
 * H2HCA paper) in C over PMPI, behind clocksync.PingPongTransport.
 *
 * In Go every message of the loop would cost a Go->C transition (50-75 ns
 * here, with a variable part) between the timestamp and the send or after
 * the receive; that time lands inside the measured one-way delays and, since
 * it differs between the send and the receive side, biases the midpoint.
 * Here the timestamps are taken right next to PMPI_Send / PMPI_Recv, with
 * the global clock being measured applied in C as the flattened model
 *
 *     x      = (gclock_now() - base0_ns) * 1e-9       (pmpi's localClock)
 *     global = x - (slope * x + intercept)            (clocksync.LinearModel)
 *
 * evaluated in the same order as Go's, so both paths give identical values.
 *
 * Compiled in the unity build pmpi/cshim.c after shim.c and goside.c,
 * whose private communicator table (tc_get), MPI_DOUBLE handle (h_double)
 * and tag (GCK_TAG) it uses.
 */
#include "hotpath.h"
#include "pingpong.h"
#include "goside.h"
#include "shim.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

/* ---- waiting without a busy core ------------------------------------------
 * Open MPI's blocking calls busy-poll. With more ranks than cores (8 ranks on
 * 2 vCPUs here) the ranks that only wait for their turn take the cores away
 * from the pair that is timing a ping-pong, and a one-way delay then holds a
 * context switch. So every wait that is not itself timed polls with
 * PMPI_Test and sleeps between polls: GCK_IDLE_NS at first, doubling up to
 * GCK_IDLE_MAX_NS. A fixed 20 us woke every waiting rank every 20 us (plus
 * the kernel's timer slack) for the whole of a long wait (a node's other ranks while its
 * leader syncs over TCP), preempting the timed pair: with the back-off, on
 * 2 vCPUs over TCP, offsets over 1 us off the truth fell from 8 of 228 to
 * 0 of 225 (2 hosts x 2) and from 5 of 600 to 2 of 450 (4 hosts x 1), and
 * the init sync took 0.22-0.30 s instead of 0.36-0.67 s (2 x 2) and
 * 0.62-0.85 s instead of 0.91-1.46 s (4 x 1); 2026-11-25. */
#define GCK_IDLE_NS 20000
#define GCK_IDLE_MAX_NS 320000

/* ---- a resync meeting's broadcasts: polled first -------------------------
 * A resync meeting (comms.c gclock_resync_point, pmpi/resync.go) runs in
 * an application collective that every rank has just left, so its
 * decision broadcast (two: the length, then the values) finds the ranks
 * within microseconds of each other. Slept through as above, each cost a
 * waiting rank at least one sleep: 20 us plus the kernel's timer slack
 * (50 us for a normal thread), 0.2-0.25 ms per meeting on MPICH's
 * non-root rank, for a halo program (bench/c/halo.c, 2 ranks) 12 meetings
 * in its first 8,192 steps, while the other rank waited for it in its next
 * call. Those waits poll without sleeping for up to GCK_MEET_POLL_NS
 * first; a rank still waiting then sleeps as before. Only the first
 * meet_polls waits of a meeting (gclock_meeting_waits): a sync epoch the
 * meeting runs next keeps the sleeping waits the oversubscribed timing
 * needs (and see meet_poll_ok below). */
#define GCK_MEET_POLL_NS 200000
static int meet_polls;

/* ---- ... only where every rank has a core ---------------------------------
 * With more ranks on the machine than CPUs, a rank polling for the
 * meeting's second broadcast kept a core from the first ping-pong pair of
 * the sync epoch the meeting started: TestNetns_AccuracyOverTCP (4 ranks
 * on 2 cores over TCP) failed 3 of 6 runs with every knot of that epoch
 * 0.3-0.9 us off on the ranks behind TCP, 0 of 8 with sleeping waits. So
 * pmpi allows the polling (gclock_meeting_poll(1)) only when the machine
 * runs no more ranks than it has CPUs online, the test the ping-pong token
 * makes the other way round (pmpi/recorder.go pingPongToken); otherwise
 * gclock_meeting_waits does nothing. Off until pmpi says. */
static int meet_poll_ok;

void gclock_meeting_poll(int on) { __atomic_store_n(&meet_poll_ok, on != 0, __ATOMIC_RELAXED); }

void gclock_meeting_waits(int n)
{
	if (n > 0 && !__atomic_load_n(&meet_poll_ok, __ATOMIC_RELAXED))
		n = 0;
	__atomic_store_n(&meet_polls, n, __ATOMIC_RELAXED);
}

/* poll_until tests req without sleeping until it completes or
 * GCK_MEET_POLL_NS have passed; *done says which. */
static int poll_until(MPI_Request *req, int *done)
{
	int64_t end = gclock_now() + GCK_MEET_POLL_NS;
	do {
		int rc = PMPI_Test(req, done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || *done)
			return rc;
	} while (gclock_now() < end);
	return MPI_SUCCESS;
}

static int wait_idle(MPI_Request *req)
{
	long ns = GCK_IDLE_NS;
	int left = __atomic_load_n(&meet_polls, __ATOMIC_RELAXED);
	if (left > 0) {
		__atomic_store_n(&meet_polls, left - 1, __ATOMIC_RELAXED);
		int done = 0;
		int rc = poll_until(req, &done);
		if (rc != MPI_SUCCESS || done)
			return rc;
	}
	for (;;) {
		int done = 0;
		int rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || done)
			return rc;
		struct timespec ts = {0, ns};
		nanosleep(&ts, NULL);
		if (ns < GCK_IDLE_MAX_NS)
			ns *= 2;
	}
}

/* gclock_t_recv_idle is gclock_t_recv for untimed messages: it receives n
 * doubles from src while sleeping between polls. */
int gclock_t_recv_idle(int tc, double *v, int n, int src)
{
	MPI_Request req;
	int rc = PMPI_Irecv(v, n, h_double, src, GCK_TAG, tc_get(tc), &req);
	if (rc != MPI_SUCCESS)
		return rc;
	return wait_idle(&req);
}

/* gclock_t_barrier_idle is a barrier whose waiting ranks sleep. */
int gclock_t_barrier_idle(int tc)
{
	MPI_Request req;
	int rc = PMPI_Ibarrier(tc_get(tc), &req);
	if (rc != MPI_SUCCESS)
		return rc;
	return wait_idle(&req);
}

/* gclock_t_allgather_int_idle gathers one int from every rank while the
 * waiting ranks sleep: the resync's agreement follows its tree, and a pair
 * that finished early must not busy-poll beside the pairs still timing
 * (over TCP their offsets then missed by 4-5 us). */
int gclock_t_allgather_int_idle(int tc, int v, int *all)
{
	MPI_Request req;
	int rc = PMPI_Iallgather(&v, 1, h_int, all, 1, h_int, tc_get(tc), &req);
	if (rc != MPI_SUCCESS)
		return rc;
	return wait_idle(&req);
}

/* gclock_t_bcast_idle is gclock_t_bcast with the non-roots sleeping while
 * they wait. */
int gclock_t_bcast_idle(int tc, void *buf, int64_t n, int root)
{
	if (n < 0 || n > 0x7fffffff)
		return MPI_ERR_COUNT;
	MPI_Request req;
	int rc = PMPI_Ibcast(buf, (int)n, h_byte, root, tc_get(tc), &req);
	if (rc != MPI_SUCCESS)
		return rc;
	return wait_idle(&req);
}

/* ---- one timing loop at a time on an oversubscribed machine ---------------
 * With more ranks on a machine than CPUs (8 ranks on 2 vCPUs, or 8 emulated
 * nodes on one host), HCA3's later rounds run several ping-pong pairs at
 * once and no pair is reliably co-scheduled: every one-way delay then holds
 * a context switch, and the SKaMPI midpoint is biased by µs. With the token
 * on, a client holds an exclusive flock on a machine-wide lock file for its
 * timed loop, and the reference waits for the first ping while sleeping, so
 * only the pair holding the token is busy. Off (fd < 0) unless pmpi turns
 * it on. */
static int pp_token_fd = -1;

int gclock_pp_token(int on)
{
	if (!on) {
		if (pp_token_fd >= 0)
			close(pp_token_fd);
		pp_token_fd = -1;
		return 0;
	}
	if (pp_token_fd >= 0)
		return 0;
	char path[64];
	snprintf(path, sizeof path, "/dev/shm/gclock-pingpong-%ld.lock", (long)getuid());
	pp_token_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	return pp_token_fd >= 0 ? 0 : -1;
}

static void token_take(void)
{
	if (pp_token_fd >= 0)
		while (flock(pp_token_fd, LOCK_EX) != 0 && errno == EINTR)
			;
}

static void token_give(void)
{
	if (pp_token_fd >= 0)
		flock(pp_token_fd, LOCK_UN);
}

/* ---- fault injection: a client stalled inside its ping-pongs ----------------
 * GCLOCK_TEST_FAULT=pingpong-stall (pmpi turns it on around the resync
 * epochs of world rank 1 only): the client sleeps pp_stall_ns between its
 * send and its receive in every ping-pong, as a rank descheduled in the
 * middle of a resync would (tests/resync_deadline_test.go). */
static int64_t pp_stall_ns;

void gclock_pp_stall(int64_t ns) { pp_stall_ns = ns; }

static void pp_stall(void)
{
	struct timespec ts = {(time_t)(pp_stall_ns / 1000000000), (long)(pp_stall_ns % 1000000000)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* pp_global_at is the global time of timer reading now. */
static inline double pp_global_at(int64_t now, int64_t base0, double slope, double intercept)
{
	double x = (double)(now - base0) * 1e-9;
	return x - (slope * x + intercept);
}

static inline double pp_global(int64_t base0, double slope, double intercept)
{
	return pp_global_at(gclock_now(), base0, slope, intercept);
}

/* Reference side of n ping-pongs with client: receive one double, reply
 * with the reference's global time. A NaN from the client ends the loop
 * early (the Go loop's early-exit protocol). */
int gclock_pp_serve(int tc, int client, int n, int64_t base0, double slope, double intercept)
{
	MPI_Comm c = tc_get(tc);
	double buf = 0;
	/* untimed "ready": the client sleeps until the reference gets to it */
	int rc = PMPI_Send(&buf, 1, h_double, client, GCK_TAG, c);
	if (rc != MPI_SUCCESS)
		return rc;
	for (int i = 0; i < n; i++) {
		if (i == 0 && pp_token_fd >= 0) /* the client may wait for the token */
			rc = gclock_t_recv_idle(tc, &buf, 1, client);
		else
			rc = PMPI_Recv(&buf, 1, h_double, client, GCK_TAG, c, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return rc;
		if (buf != buf)
			break;
		buf = pp_global(base0, slope, intercept);
		rc = PMPI_Send(&buf, 1, h_double, client, GCK_TAG, c);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* Client side: for each i, s_last[i] before the send, t_last[i] the
 * reference's reply, s_now[i] after the receive (all global times).
 *
 * deadline_ns (timer ns; 0: none) cuts the loop short (issue 38,
 * decisions.md D89): once a ping-pong returns at or after it, the loop
 * stops at the first ping-pong whose round trip is at most twice the
 * shortest of those before it, or after GCK_PP_GRACE more, sends the NaN
 * that ends the reference's loop and leaves. So a pair slowed to
 * milliseconds a ping-pong cannot hold a resync epoch for hundreds of
 * them, and a pair whose one ping-pong straddled the deadline (a rank
 * descheduled in it, 0.4 s seen under load) makes one more, prompt, and
 * keeps an offset from it instead of a bound as wide as the stall. At
 * least two ping-pongs are made when n allows (one in flight cannot be
 * abandoned: its reply would meet the next receive). *done is the number
 * made (n when not cut). The deadline is compared with the receive's own
 * timestamp: no timer read is added. */
#define GCK_PP_GRACE 3
int gclock_pp_client(int tc, int ref, int n, int64_t base0, double slope, double intercept,
		     double *s_last, double *t_last, double *s_now, int64_t deadline_ns, int *done)
{
	MPI_Comm c = tc_get(tc);
	double buf;
	*done = 0;
	int rc = gclock_t_recv_idle(tc, &buf, 1, ref); /* the reference's "ready" */
	if (rc != MPI_SUCCESS)
		return rc;
	token_take();
	int64_t min_rtt = INT64_MAX;
	int late = 0; /* ping-pongs returned past the deadline */
	for (int i = 0; i < n; i++) {
		int64_t ts = gclock_now();
		s_last[i] = buf = pp_global_at(ts, base0, slope, intercept);
		rc = PMPI_Send(&buf, 1, h_double, ref, GCK_TAG, c);
		if (rc != MPI_SUCCESS)
			break;
		if (GCK_UNLIKELY(pp_stall_ns > 0)) /* GCLOCK_TEST_FAULT=pingpong-stall */
			pp_stall();
		rc = PMPI_Recv(&buf, 1, h_double, ref, GCK_TAG, c, MPI_STATUS_IGNORE);
		int64_t tr = gclock_now();
		s_now[i] = pp_global_at(tr, base0, slope, intercept);
		if (rc != MPI_SUCCESS)
			break;
		t_last[i] = buf;
		*done = i + 1;
		int64_t rtt = tr - ts;
		if (deadline_ns > 0 && tr >= deadline_ns && i + 1 < n &&
		    (late++ >= GCK_PP_GRACE || (i > 0 && rtt <= 2 * min_rtt))) {
			buf = __builtin_nan("");
			rc = PMPI_Send(&buf, 1, h_double, ref, GCK_TAG, c);
			break;
		}
		if (rtt < min_rtt)
			min_rtt = rtt;
	}
	token_give();
	return rc;
}

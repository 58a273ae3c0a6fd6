/* meetwait: unit test of the recorder's untimed waits (cshim/pingpong.c):
 * a resync meeting's decision broadcasts poll before they sleep, every
 * other wait sleeps between polls as before.
 *
 * Compiled with cshim/pingpong.c and stand-ins for what it uses: PMPI_Ibcast
 * and PMPI_Test (a request that completes at its n-th test), nanosleep
 * (counted, returns at once) and the recorder's timer (a clock that moves
 * 1 us per read, so the polling's 0.2 ms bound is 200 reads). No MPI
 * library is initialised.
 *
 * Polling is allowed only after gclock_meeting_poll(1) (pmpi: no more
 * ranks on the machine than CPUs).
 *
 * usage: meetwait   prints one line per failed check and "meetwait: N
 * checks, F failed"; exit status 1 when any failed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>

/* hotpath.h declares the timer's helpers, which only the shim defines */
#pragma GCC diagnostic ignored "-Wunused-function"

/* The waits' sleeps, counted (pingpong.c calls nanosleep). */
static int sleeps;
int meetwait_nanosleep(const struct timespec *req, struct timespec *rem);
#define nanosleep meetwait_nanosleep
#define GCK_TAG 1 /* goside.c's, in the unity build */
#include "../../cshim/pingpong.c"
#undef nanosleep

int meetwait_nanosleep(const struct timespec *req, struct timespec *rem)
{
	(void)req, (void)rem;
	sleeps++;
	return 0;
}

/* The timer: 1 us per read. */
static int64_t clock_ns;
static inline int64_t gclock_now(void) { return clock_ns += 1000; }

/* The request: complete at its done_at-th test. */
static int tests, done_at;

static int stub_test(MPI_Request *req, int *flag, MPI_Status *st)
{
	(void)req, (void)st;
	*flag = ++tests >= done_at;
	return MPI_SUCCESS;
}

static int stub_ibcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *req)
{
	(void)buf, (void)n, (void)t, (void)root, (void)c, (void)req;
	return MPI_SUCCESS;
}

/* What pingpong.c takes from the rest of the shim. */
__typeof__(PMPI_Test) *gck_p_PMPI_Test = stub_test;
__typeof__(PMPI_Ibcast) *gck_p_PMPI_Ibcast = stub_ibcast;
__typeof__(PMPI_Iallgather) *gck_p_PMPI_Iallgather;
__typeof__(PMPI_Ibarrier) *gck_p_PMPI_Ibarrier;
__typeof__(PMPI_Irecv) *gck_p_PMPI_Irecv;
__typeof__(PMPI_Recv) *gck_p_PMPI_Recv;
__typeof__(PMPI_Send) *gck_p_PMPI_Send;
void *gclock_pmpi_resolve(void **slot, const char *name, int data)
{
	(void)name, (void)data;
	return *slot;
}
MPI_Datatype h_double, h_byte, h_int;
static MPI_Comm no_comm; /* never used: the stand-ins ignore it */
static MPI_Comm tc_get(int tc)
{
	(void)tc;
	return no_comm;
}

static int checks, failed;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		checks++;                                                    \
		if (!(cond)) {                                               \
			failed++;                                            \
			printf("FAIL line %d: ", __LINE__);                  \
			printf(__VA_ARGS__);                                 \
			printf("\n");                                        \
		}                                                            \
	} while (0)

/* bcast runs one gclock_t_bcast_idle whose request completes at its
 * n-th test and returns the sleeps it took. */
static int bcast(int n)
{
	int64_t v = 0;
	tests = 0;
	done_at = n;
	sleeps = 0;
	int rc = gclock_t_bcast_idle(0, &v, 8, 0);
	CHECK(rc == MPI_SUCCESS, "rc %d", rc);
	CHECK(tests == n, "the wait ended after %d tests, the request completed at test %d", tests, n);
	return sleeps;
}

/* meeting runs a meeting's two broadcasts, complete at tests n1 and n2,
 * and stores the sleeps each took; the meeting stays open (a third wait
 * may follow) until gclock_meeting_waits(0). */
static void meeting(int n1, int n2, int *s1, int *s2)
{
	gclock_meeting_waits(2);
	*s1 = bcast(n1);
	*s2 = bcast(n2);
}

int main(void)
{
	int s1, s2;
	/* outside a meeting: a wait that does not find its request complete
	 * at the first test sleeps before the next (as before) */
	int s = bcast(1);
	CHECK(s == 0, "a request complete at the first test: %d sleeps", s);
	s = bcast(50);
	CHECK(s == 49, "outside a meeting, a request complete at test 50: %d sleeps, want 49", s);

	/* off until pmpi allows it (no more ranks on the machine than
	 * CPUs): a meeting's broadcasts sleep as outside one */
	meeting(50, 50, &s1, &s2);
	CHECK(s1 == 49 && s2 == 49, "polling not allowed (the default), a meeting's broadcasts complete at test 50: %d and %d sleeps, want 49", s1, s2);
	gclock_meeting_waits(0);

	/* a meeting's two broadcasts poll: no sleep while the request
	 * completes within 0.2 ms */
	gclock_meeting_poll(1);
	meeting(50, 150, &s1, &s2);
	CHECK(s1 == 0, "the meeting's first broadcast, complete at test 50: %d sleeps, want 0", s1);
	CHECK(s2 == 0, "the meeting's second broadcast, complete at test 150: %d sleeps, want 0", s2);
	/* the third wait (a sync epoch the meeting runs) sleeps again */
	s = bcast(50);
	CHECK(s == 49, "a third wait in the meeting, complete at test 50: %d sleeps, want 49", s);
	gclock_meeting_waits(0);

	/* a rank still waiting after 0.2 ms of polling sleeps as before */
	gclock_meeting_waits(2);
	s = bcast(1000);
	CHECK(s > 0 && s < 1000 - 150, "a meeting's broadcast complete at test 1000: %d sleeps, want some after the polling", s);
	/* the meeting's end ends the polling */
	gclock_meeting_waits(0);
	s = bcast(50);
	CHECK(s == 49, "after the meeting, complete at test 50: %d sleeps, want 49", s);

	/* more ranks than CPUs (pmpi turns the polling off): the meeting's
	 * broadcasts sleep, so they leave the cores to the sync epoch's
	 * timed pairs */
	gclock_meeting_poll(0);
	meeting(50, 50, &s1, &s2);
	CHECK(s1 == 49 && s2 == 49, "polling turned off, a meeting's broadcasts complete at test 50: %d and %d sleeps, want 49", s1, s2);
	gclock_meeting_waits(0);

	printf("meetwait: %d checks, %d failed\n", checks, failed);
	return failed != 0;
}

/* ppdeadline: unit test of the client's ping-pong loop under a deadline
 * (cshim/pingpong.c gclock_pp_client, issue 38): past the deadline the
 * loop stops at the first ping-pong whose round trip is at most twice the
 * shortest before it (so a ping-pong that straddled the deadline is
 * followed by one prompt one), or after 3 more; it tells the reference
 * with a NaN (which ends the reference's loop) exactly when it stopped
 * early, and says how many ping-pongs it made; without a deadline it
 * makes all n; and the test fault GCLOCK_TEST_FAULT=pingpong-stall sleeps
 * inside every ping-pong.
 *
 * Compiled with cshim/pingpong.c and stand-ins for what it uses: PMPI_Send
 * (recorded), PMPI_Recv (returns at once with the reference's reply),
 * PMPI_Irecv and PMPI_Test (the untimed "ready"), nanosleep (recorded,
 * returns at once) and the recorder's timer (a clock that moves 1 us per
 * read). No MPI library is initialised.
 *
 * usage: ppdeadline   prints one line per failed check and "ppdeadline: N
 * checks, F failed"; exit status 1 when any failed. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* hotpath.h declares the timer's helpers, which only the shim defines */
#pragma GCC diagnostic ignored "-Wunused-function"

static int sleeps;
static long long slept_ns;

/* The timer: 1 us per read. */
static int64_t clock_ns;
static inline int64_t gclock_now(void) { return clock_ns += 1000; }
int ppd_nanosleep(const struct timespec *req, struct timespec *rem);
#define nanosleep ppd_nanosleep
#define GCK_TAG 1 /* goside.c's, in the unity build */
#include "../../cshim/pingpong.c"
#undef nanosleep

int ppd_nanosleep(const struct timespec *req, struct timespec *rem)
{
	(void)rem;
	sleeps++;
	slept_ns += (long long)req->tv_sec * 1000000000LL + req->tv_nsec;
	return 0;
}


/* What the client sent: how many messages, how many NaNs, the last one. */
static int sends, nans;
static double last_sent;
static int recvs;

static int stub_send(const void *buf, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c)
{
	(void)n, (void)t, (void)dst, (void)tag, (void)c;
	last_sent = *(const double *)buf;
	sends++;
	nans += isnan(last_sent);
	return MPI_SUCCESS;
}

/* delay_us[i]: how long the i-th reply takes (the fake clock moves on). */
static long delay_us[64];

static int stub_recv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *st)
{
	(void)n, (void)t, (void)src, (void)tag, (void)c, (void)st;
	if (recvs < 64)
		clock_ns += delay_us[recvs] * 1000;
	*(double *)buf = 1.0 + recvs++; /* the reference's "time" */
	return MPI_SUCCESS;
}

static int stub_irecv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *req)
{
	(void)n, (void)t, (void)src, (void)tag, (void)c, (void)req;
	*(double *)buf = 0;
	return MPI_SUCCESS;
}

static int stub_test(MPI_Request *req, int *flag, MPI_Status *st)
{
	(void)req, (void)st;
	*flag = 1;
	return MPI_SUCCESS;
}

/* What pingpong.c takes from the rest of the shim. */
__typeof__(PMPI_Test) *gck_p_PMPI_Test = stub_test;
__typeof__(PMPI_Ibcast) *gck_p_PMPI_Ibcast;
__typeof__(PMPI_Iallgather) *gck_p_PMPI_Iallgather;
__typeof__(PMPI_Ibarrier) *gck_p_PMPI_Ibarrier;
__typeof__(PMPI_Irecv) *gck_p_PMPI_Irecv = stub_irecv;
__typeof__(PMPI_Recv) *gck_p_PMPI_Recv = stub_recv;
__typeof__(PMPI_Send) *gck_p_PMPI_Send = stub_send;
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

#define N 16

/* loop runs one client loop of n ping-pongs whose deadline lies ahead_us
 * after the loop's start (ahead_us < 0: none), and returns how many it
 * made; the sends and NaNs it made are in sends, nans. */
static int loop(int n, long ahead_us)
{
	double s_last[N], t_last[N], s_now[N];
	sends = nans = recvs = 0;
	int64_t deadline = ahead_us < 0 ? 0 : clock_ns + ahead_us * 1000;
	int done = -1;
	int rc = gclock_pp_client(0, 0, n, 0, 0, 0, s_last, t_last, s_now, deadline, &done);
	CHECK(rc == MPI_SUCCESS, "rc %d", rc);
	for (int i = 0; i < done; i++)
		CHECK(t_last[i] == 1.0 + i && s_last[i] < s_now[i],
		      "ping-pong %d of %d: t_last %g (want %g), s_last %g, s_now %g", i, done, t_last[i], 1.0 + i,
		      s_last[i], s_now[i]);
	return done;
}

int main(void)
{
	/* no deadline: all n, no NaN */
	int done = loop(N, -1);
	CHECK(done == N, "no deadline: %d ping-pongs, want %d", done, N);
	CHECK(sends == N && nans == 0, "no deadline: %d sends, %d NaNs; want %d and 0", sends, nans, N);

	/* a deadline 20 us ahead (each ping-pong reads the 1 us timer three
	 * times): cut short, the reference told with one NaN, sent last */
	done = loop(N, 20);
	CHECK(done >= 1 && done < N, "deadline 20 us ahead: %d ping-pongs, want fewer than %d", done, N);
	CHECK(sends == done + 1 && nans == 1 && isnan(last_sent),
	      "deadline 20 us ahead: %d ping-pongs, %d sends, %d NaNs (last sent %g); want %d sends ending in one NaN", done,
	      sends, nans, last_sent, done + 1);

	/* a deadline long ahead: as without one */
	done = loop(N, 1000000);
	CHECK(done == N && nans == 0, "deadline 1 s ahead: %d ping-pongs, %d NaNs; want %d and 0", done, nans, N);

	/* a deadline already past: two ping-pongs (the second as prompt as
	 * the first), then the NaN */
	done = loop(N, 0);
	CHECK(done == 2 && sends == 3 && nans == 1, "deadline past: %d ping-pongs, %d sends, %d NaNs; want 2, 3, 1", done,
	      sends, nans);

	/* round trips past the deadline, in microseconds (1 us of timer
	 * reads besides), and where the loop stops */
	struct {
		const char *name;
		long d[8];
		int want;
	} stalls[] = {
	    /* a rank descheduled in the first ping-pong: one prompt one after it */
	    {"first ping-pong stalled 1 ms", {1000}, 2},
	    /* slow throughout: the second is no slower than twice the first */
	    {"every ping-pong 1 ms", {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, 2},
	    /* each slower than twice the best: at most 3 after the first late one */
	    {"ever slower", {1000, 3000, 7000, 15000, 31000, 63000, 0, 0}, 4},
	    /* slower, then prompt: stops at the prompt one */
	    {"slower, then prompt", {1000, 3000, 0, 0}, 3},
	};
	for (size_t k = 0; k < sizeof stalls / sizeof stalls[0]; k++) {
		for (int i = 0; i < 64; i++)
			delay_us[i] = i < 8 ? stalls[k].d[i] : 0;
		done = loop(N, 20);
		CHECK(done == stalls[k].want && nans == 1, "%s, deadline 20 us ahead: %d ping-pongs, %d NaNs; want %d, 1",
		      stalls[k].name, done, nans, stalls[k].want);
	}
	for (int i = 0; i < 64; i++)
		delay_us[i] = 0;

	/* n ping-pongs all made by the deadline: the reference's loop ends by
	 * itself, no NaN (it would be read by the next measurement) */
	done = loop(1, 0);
	CHECK(done == 1 && sends == 1 && nans == 0, "one ping-pong asked, deadline past: %d done, %d sends, %d NaNs; want 1, 1, 0",
	      done, sends, nans);

	/* whatever the deadline, a NaN is sent exactly when the loop was cut */
	for (long ahead = 0; ahead < 60; ahead++) {
		done = loop(N, ahead);
		CHECK(done >= 2 && done <= N && nans == (done < N) && sends == done + (done < N),
		      "deadline %ld us ahead: %d ping-pongs, %d sends, %d NaNs", ahead, done, sends, nans);
	}

	/* the test fault: a sleep of the given length inside every
	 * ping-pong, none when off */
	sleeps = 0;
	slept_ns = 0;
	gclock_pp_stall(5000000);
	done = loop(4, -1);
	gclock_pp_stall(0);
	CHECK(done == 4 && sleeps == 4 && slept_ns == 4 * 5000000LL, "stall 5 ms: %d ping-pongs, %d sleeps of %lld ns in all; want 4, 4, 2e7",
	      done, sleeps, slept_ns);
	sleeps = 0;
	loop(4, -1);
	CHECK(sleeps == 0, "stall off: %d sleeps", sleeps);

	printf("ppdeadline: %d checks, %d failed\n", checks, failed);
	return failed != 0;
}

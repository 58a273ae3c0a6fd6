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
 * Compiled in the unity build pmpi/cshim.c right after shim.c, whose private
 * communicator table (tc_get), MPI_DOUBLE handle (h_double) and tag
 * (GCLOCK_TAG) it uses, so shim.c needs no change.
 */
#include "pingpong.h"

#pragma weak PMPI_Irecv
#pragma weak PMPI_Ibcast
#pragma weak PMPI_Ibarrier
#pragma weak PMPI_Test

/* ---- waiting without a busy core ------------------------------------------
 * Open MPI's blocking calls busy-poll. With more ranks than cores (8 ranks on
 * 2 vCPUs here) the ranks that only wait for their turn take the cores away
 * from the pair that is timing a ping-pong, and a one-way delay then holds a
 * context switch. So every wait that is not itself timed polls with
 * PMPI_Test and sleeps GCLOCK_IDLE_NS between polls. */
#define GCLOCK_IDLE_NS 20000

static int wait_idle(MPI_Request *req)
{
	for (;;) {
		int done = 0;
		int rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || done)
			return rc;
		struct timespec ts = {0, GCLOCK_IDLE_NS};
		nanosleep(&ts, NULL);
	}
}

/* gclock_t_recv_idle is gclock_t_recv for untimed messages: it receives n
 * doubles from src while sleeping between polls. */
int gclock_t_recv_idle(int tc, double *v, int n, int src)
{
	MPI_Request req;
	int rc = PMPI_Irecv(v, n, h_double, src, GCLOCK_TAG, tc_get(tc), &req);
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

static inline double pp_global(int64_t base0, double slope, double intercept)
{
	double x = (double)(gclock_now() - base0) * 1e-9;
	return x - (slope * x + intercept);
}

/* Reference side of n ping-pongs with client: receive one double, reply
 * with the reference's global time. A NaN from the client ends the loop
 * early (the Go loop's early-exit protocol). */
int gclock_pp_serve(int tc, int client, int n, int64_t base0, double slope, double intercept)
{
	MPI_Comm c = tc_get(tc);
	double buf = 0;
	/* untimed "ready": the client sleeps until the reference gets to it */
	int rc = PMPI_Send(&buf, 1, h_double, client, GCLOCK_TAG, c);
	if (rc != MPI_SUCCESS)
		return rc;
	for (int i = 0; i < n; i++) {
		rc = PMPI_Recv(&buf, 1, h_double, client, GCLOCK_TAG, c, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return rc;
		if (buf != buf)
			break;
		buf = pp_global(base0, slope, intercept);
		rc = PMPI_Send(&buf, 1, h_double, client, GCLOCK_TAG, c);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* Client side: for each i, s_last[i] before the send, t_last[i] the
 * reference's reply, s_now[i] after the receive (all global times). */
int gclock_pp_client(int tc, int ref, int n, int64_t base0, double slope, double intercept,
		     double *s_last, double *t_last, double *s_now)
{
	MPI_Comm c = tc_get(tc);
	double buf;
	int rc = gclock_t_recv_idle(tc, &buf, 1, ref); /* the reference's "ready" */
	if (rc != MPI_SUCCESS)
		return rc;
	for (int i = 0; i < n; i++) {
		s_last[i] = buf = pp_global(base0, slope, intercept);
		rc = PMPI_Send(&buf, 1, h_double, ref, GCLOCK_TAG, c);
		if (rc != MPI_SUCCESS)
			return rc;
		rc = PMPI_Recv(&buf, 1, h_double, ref, GCLOCK_TAG, c, MPI_STATUS_IGNORE);
		s_now[i] = pp_global(base0, slope, intercept);
		if (rc != MPI_SUCCESS)
			return rc;
		t_last[i] = buf;
	}
	return MPI_SUCCESS;
}

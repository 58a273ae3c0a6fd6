/* pingpong.h: the C ping-pong loop behind clocksync.PingPongTransport
 * (pingpong.c). Times are global times of the flattened model
 * global(x) = x - (slope*x + intercept), x = (timer_ns - base0)*1e-9.
 * Both return an MPI error code. */
#ifndef GCK_PINGPONG_H
#define GCK_PINGPONG_H
#include "gclock.h"

GCK_EXPORT int gclock_pp_serve(int tc, int client, int n, int64_t base0, double slope, double intercept);
GCK_EXPORT int gclock_pp_client(int tc, int ref, int n, int64_t base0, double slope, double intercept,
		     double *s_last, double *t_last, double *s_now, int64_t deadline_ns, int *done);
/* gclock_pp_stall(ns): the client sleeps ns inside each ping-pong (test
 * fault injection, pingpong.c); 0 turns it off. */
GCK_EXPORT void gclock_pp_stall(int64_t ns);

/* Untimed waits that sleep between polls instead of busy-polling. */
int gclock_t_recv_idle(int tc, double *v, int n, int src);
GCK_EXPORT int gclock_t_bcast_idle(int tc, void *buf, int64_t n, int root);
GCK_EXPORT int gclock_t_barrier_idle(int tc);
GCK_EXPORT int gclock_t_allgather_int_idle(int tc, int v, int *all);
/* gclock_meeting_waits(n): the next n of those waits poll for up to
 * 0.2 ms before they sleep (a resync meeting's decision broadcast,
 * comms.c); 0 ends it. Only while gclock_meeting_poll(1) allows it (pmpi:
 * no more ranks on the machine than CPUs); off by default. */
GCK_EXPORT void gclock_meeting_poll(int on);
#pragma GCC visibility push(hidden)
void gclock_meeting_waits(int n);
#pragma GCC visibility pop

/* gclock_pp_token(1) serialises timed loops machine-wide (pingpong.c);
 * 0 turns it off. Returns 0, or -1 if the lock file cannot be opened. */
GCK_EXPORT int gclock_pp_token(int on);

#endif

/* barrier_self: per-call cost of MPI_Barrier(MPI_COMM_SELF), which costs a
 * few ns in Open MPI and so isolates what a wrapper adds per event.
 *
 * The loop runs in batches of BATCH calls, each batch timed on its own. A
 * tracer that flushes a full buffer does so in few batches (one in 8 at
 * gclock's default 8192-event buffer), so the median batch is the hot path
 * alone while the whole loop is the cost amortised over flushes.
 *
 * usage: barrier_self [calls=1000000]   (1 rank)
 * prints: loop_ns, loop_calls, loop_ns_per_call (whole loop / calls),
 * batch_median_ns_per_call,
 * batch_min_ns_per_call, finalize_ns (time spent in MPI_Finalize, where a
 * tracer flushes what is still buffered), calls (events the program made). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>

#include "common.h"

#define WARMUP 1000
#define BATCH 1000

int main(int argc, char **argv)
{
    long calls = bench_arg_long(argc, argv, 1, 1000000);
    long batches = (calls + BATCH - 1) / BATCH;
    calls = batches * BATCH;
    double *per = malloc((size_t)batches * sizeof *per);
    if (!per)
        return 1;
    MPI_Init(&argc, &argv);
    for (int i = 0; i < WARMUP; i++)
        MPI_Barrier(MPI_COMM_SELF);
    int64_t t0 = bench_now_ns();
    for (long b = 0; b < batches; b++) {
        int64_t b0 = bench_now_ns();
        for (int i = 0; i < BATCH; i++)
            MPI_Barrier(MPI_COMM_SELF);
        per[b] = (double)(bench_now_ns() - b0) / BATCH;
    }
    int64_t t1 = bench_now_ns();
    printf("loop_ns %lld\n", (long long)(t1 - t0));
    printf("loop_calls %ld\n", calls);
    printf("loop_ns_per_call %.3f\n", (double)(t1 - t0) / (double)calls);
    double med = bench_median_dbl(per, (size_t)batches); /* sorts per */
    printf("batch_median_ns_per_call %.3f\n", med);
    printf("batch_min_ns_per_call %.3f\n", per[0]);
    printf("calls %ld\n", calls + WARMUP);
    fflush(stdout);
    free(per);
    int64_t f0 = bench_now_ns();
    MPI_Finalize();
    int64_t f1 = bench_now_ns();
    printf("finalize_ns %lld\n", (long long)(f1 - f0));
    return 0;
}

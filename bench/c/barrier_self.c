/* barrier_self: per-call cost of MPI_Barrier(MPI_COMM_SELF), which costs a
 * few ns in Open MPI and so isolates what a wrapper adds per event.
 *
 * usage: barrier_self [calls=1000000]   (1 rank)
 * prints: loop_ns_per_call, finalize_ns (time spent in MPI_Finalize, where a
 * tracer flushes what is still buffered), calls (events the program made). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>

#include "common.h"

#define WARMUP 1000

int main(int argc, char **argv)
{
    long calls = bench_arg_long(argc, argv, 1, 1000000);
    MPI_Init(&argc, &argv);
    for (int i = 0; i < WARMUP; i++)
        MPI_Barrier(MPI_COMM_SELF);
    int64_t t0 = bench_now_ns();
    for (long i = 0; i < calls; i++)
        MPI_Barrier(MPI_COMM_SELF);
    int64_t t1 = bench_now_ns();
    printf("loop_ns_per_call %.3f\n", (double)(t1 - t0) / (double)calls);
    printf("calls %ld\n", calls + WARMUP);
    fflush(stdout);
    int64_t f0 = bench_now_ns();
    MPI_Finalize();
    int64_t f1 = bench_now_ns();
    printf("finalize_ns %lld\n", (long long)(f1 - f0));
    return 0;
}

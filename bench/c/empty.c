/* empty: an MPI program that does nothing but MPI_Init and MPI_Finalize
 * (optionally sleeping in between), timing both calls, so the harness sees
 * what the library adds at start and end (clock sync epochs, file setup,
 * final flush).
 *
 * usage: empty [sleep_ms=0]
 * every rank prints: rank <r> init_ns <ns> finalize_ns <ns>              */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>

#include "common.h"

int main(int argc, char **argv)
{
    long sleep_ms = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    int64_t i0 = bench_now_ns();
    MPI_Init(&argc, &argv);
    int64_t i1 = bench_now_ns();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (sleep_ms > 0) {
        struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    int64_t f0 = bench_now_ns();
    MPI_Finalize();
    int64_t f1 = bench_now_ns();
    printf("rank %d init_ns %lld finalize_ns %lld\n", rank,
           (long long)(i1 - i0), (long long)(f1 - f0));
    return 0;
}

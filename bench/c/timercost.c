/* timercost: cost of one read of every timer gclock can record with
 * (clock_gettime per clock id, rdtsc, rdtscp, MPI_Wtime). Each figure is the
 * median over `batches` batches of `reads` back-to-back reads (throughput of
 * dependent-free reads, which is what a wrapper's entry+exit pair pays).
 *
 * usage: timercost [reads=200000] [batches=15]   (1 rank, no preload)
 * prints: timer_ns <name> <ns per read>                                  */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <x86intrin.h>

#include "common.h"

static volatile uint64_t sink;

#define MEASURE(NAME, READ_EXPR)                                              \
    do {                                                                      \
        for (long b = 0; b < batches; b++) {                                  \
            uint64_t acc = 0;                                                 \
            int64_t t0 = bench_now_ns();                                      \
            for (long i = 0; i < reads; i++) {                                \
                READ_EXPR;                                                    \
            }                                                                 \
            int64_t t1 = bench_now_ns();                                      \
            sink += acc;                                                      \
            per[b] = (double)(t1 - t0) / (double)reads;                       \
        }                                                                     \
        printf("timer_ns %s %.3f\n", NAME, bench_median_dbl(per, batches));   \
    } while (0)

static inline uint64_t gettime(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long reads = bench_arg_long(argc, argv, 1, 200000);
    long batches = bench_arg_long(argc, argv, 2, 15);
    MPI_Init(&argc, &argv);
    double *per = calloc((size_t)batches, sizeof *per);
    if (!per)
        return 1;
    unsigned aux;
    MEASURE("monotonic", acc += gettime(CLOCK_MONOTONIC));
    MEASURE("monotonic_raw", acc += gettime(CLOCK_MONOTONIC_RAW));
    MEASURE("realtime", acc += gettime(CLOCK_REALTIME));
    MEASURE("rdtsc", acc += __rdtsc());
    MEASURE("rdtscp", acc += __rdtscp(&aux));
    MEASURE("mpi_wtime", acc += (uint64_t)(MPI_Wtime() * 1e9));
    free(per);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

/* timercost: cost of one read of every timer gclock can record with
 * (clock_gettime per clock id, rdtsc, rdtscp, MPI_Wtime). Each figure is the
 * median over `batches` batches of `reads` back-to-back reads (throughput of
 * independent reads, which is what a wrapper's entry+exit pair pays). The
 * timers take turns batch by batch, so a noisy neighbour hits them alike.
 *
 * Batches are short (≈ 50 µs) so that on a loaded machine most of them run
 * without being preempted and the median is the read cost itself.
 *
 * usage: timercost [reads=2000] [batches=1001]   (1 rank, no preload)
 * prints: timer_ns <name> <ns per read>                                  */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <x86intrin.h>

#include "common.h"

enum { T_MONO, T_RAW, T_REAL, T_RDTSC, T_RDTSCP, T_WTIME, NTIMERS };
static const char *names[NTIMERS] = {"monotonic", "monotonic_raw", "realtime",
                                     "rdtsc", "rdtscp", "mpi_wtime"};
static volatile uint64_t sink;

#define MEASURE(T, READ_EXPR)                                                 \
    do {                                                                      \
        uint64_t acc = 0;                                                     \
        int64_t t0 = bench_now_ns();                                          \
        for (long i = 0; i < reads; i++) {                                    \
            READ_EXPR;                                                        \
        }                                                                     \
        int64_t t1 = bench_now_ns();                                          \
        sink += acc;                                                          \
        per[T][b] = (double)(t1 - t0) / (double)reads;                        \
    } while (0)

static inline uint64_t gettime(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long reads = bench_arg_long(argc, argv, 1, 2000);
    long batches = bench_arg_long(argc, argv, 2, 1001);
    MPI_Init(&argc, &argv);
    double *per[NTIMERS];
    for (int t = 0; t < NTIMERS; t++) {
        per[t] = calloc((size_t)batches, sizeof *per[t]);
        if (!per[t])
            return 1;
    }
    unsigned aux;
    for (long b = 0; b < batches; b++) {
        MEASURE(T_MONO, acc += gettime(CLOCK_MONOTONIC));
        MEASURE(T_RAW, acc += gettime(CLOCK_MONOTONIC_RAW));
        MEASURE(T_REAL, acc += gettime(CLOCK_REALTIME));
        MEASURE(T_RDTSC, acc += __rdtsc());
        MEASURE(T_RDTSCP, acc += __rdtscp(&aux));
        MEASURE(T_WTIME, acc += (uint64_t)(MPI_Wtime() * 1e9));
    }
    for (int t = 0; t < NTIMERS; t++) {
        printf("timer_ns %s %.3f\n", names[t], bench_median_dbl(per[t], (size_t)batches));
        free(per[t]);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

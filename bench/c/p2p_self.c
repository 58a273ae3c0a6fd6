/* p2p_self: what a wrapper adds per point-to-point event, on the path real
 * halo exchanges take: MPI_Irecv, MPI_Isend and MPI_Waitall of the two
 * requests, to and from the calling rank on MPI_COMM_SELF (Open MPI
 * completes such a pair in a few hundred ns, so the wrappers' share shows).
 *
 * Every call is timed on its own (two clock reads around it, the same with
 * and without a tracer, so they cancel in the difference); the medians per
 * call kind are the hot path. The whole loop plus MPI_Finalize per
 * iteration is the cost amortised over buffer flushes.
 *
 * usage: p2p_self [iterations=200000]   (1 rank)
 * prints: irecv_median_ns, isend_median_ns, waitall_median_ns, loop_ns,
 * iterations (of each loop), iterations_made (both loops and warm-up),
 * finalize_ns, total_ns_per_iter, and "result ok" when every
 * message arrived intact. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define WARMUP 1000
#define BYTES 64

int main(int argc, char **argv)
{
    long iters = bench_arg_long(argc, argv, 1, 200000);
    int64_t *trecv = malloc((size_t)iters * sizeof *trecv);
    int64_t *tsend = malloc((size_t)iters * sizeof *tsend);
    int64_t *twait = malloc((size_t)iters * sizeof *twait);
    if (!trecv || !tsend || !twait)
        return 1;
    char sb[BYTES], rb[BYTES];
    int ok = 1;
    MPI_Init(&argc, &argv);
    MPI_Request r[2];
    for (long i = -WARMUP; i < iters; i++) {
        memset(sb, (int)(i & 0x7f), sizeof sb);
        int64_t t0 = bench_now_ns();
        MPI_Irecv(rb, BYTES, MPI_BYTE, 0, 7, MPI_COMM_SELF, &r[0]);
        int64_t t1 = bench_now_ns();
        MPI_Isend(sb, BYTES, MPI_BYTE, 0, 7, MPI_COMM_SELF, &r[1]);
        int64_t t2 = bench_now_ns();
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        int64_t t3 = bench_now_ns();
        if (memcmp(sb, rb, BYTES) != 0)
            ok = 0;
        if (i >= 0) {
            trecv[i] = t1 - t0;
            tsend[i] = t2 - t1;
            twait[i] = t3 - t2;
        }
    }
    /* the loop again untimed per call, for the amortised figure */
    int64_t l0 = bench_now_ns();
    for (long i = 0; i < iters; i++) {
        MPI_Irecv(rb, BYTES, MPI_BYTE, 0, 7, MPI_COMM_SELF, &r[0]);
        MPI_Isend(sb, BYTES, MPI_BYTE, 0, 7, MPI_COMM_SELF, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    int64_t l1 = bench_now_ns();
    printf("irecv_median_ns %.3f\n", bench_median_i64(trecv, (size_t)iters));
    printf("isend_median_ns %.3f\n", bench_median_i64(tsend, (size_t)iters));
    printf("waitall_median_ns %.3f\n", bench_median_i64(twait, (size_t)iters));
    printf("loop_ns %lld\n", (long long)(l1 - l0));
    printf("iterations %ld\n", iters);
    printf("iterations_made %ld\n", 2 * iters + WARMUP); /* both loops and the warm-up */
    fflush(stdout);
    int64_t f0 = bench_now_ns();
    MPI_Finalize();
    int64_t f1 = bench_now_ns();
    printf("finalize_ns %lld\n", (long long)(f1 - f0));
    printf("total_ns_per_iter %.3f\n", (double)(l1 - l0 + f1 - f0) / (double)iters);
    if (ok)
        printf("result ok\n");
    free(trecv);
    free(tsend);
    free(twait);
    return 0;
}

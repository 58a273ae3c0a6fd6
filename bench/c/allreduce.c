/* allreduce: what an application sees: latency of an 8-byte MPI_Allreduce
 * (one int64, MPI_SUM), each call timed on its own.
 *
 * usage: allreduce [calls=100000]   (2 or more ranks)
 * rank 0 prints: median_ns, mean_ns (whole loop / calls), calls, and
 * result ok|wrong (the sums are checked, so tracing must not change them). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>

#include "common.h"

#define WARMUP 1000

int main(int argc, char **argv)
{
    long calls = bench_arg_long(argc, argv, 1, 100000);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *lat = malloc((size_t)calls * sizeof *lat);
    if (!lat)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int64_t in = rank + 1, out = 0, want = (int64_t)size * (size + 1) / 2;
    int ok = 1;
    for (int i = 0; i < WARMUP; i++)
        MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t l0 = bench_now_ns();
    for (long i = 0; i < calls; i++) {
        int64_t t0 = bench_now_ns();
        MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        int64_t t1 = bench_now_ns();
        lat[i] = t1 - t0;
        ok &= out == want;
    }
    int64_t l1 = bench_now_ns();
    int allok = 0;
    MPI_Reduce(&ok, &allok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("median_ns %.1f\n", bench_median_i64(lat, (size_t)calls));
        printf("mean_ns %.1f\n", (double)(l1 - l0) / (double)calls);
        printf("calls %ld\n", calls);
        printf("result %s\n", allok ? "ok" : "wrong");
    }
    free(lat);
    MPI_Finalize();
    return 0;
}

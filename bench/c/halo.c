/*
 * halo.c: a halo-exchange step loop (issue 12's application workload):
 * every rank exchanges 512 bytes with both ring neighbours (MPI_Irecv x2,
 * MPI_Isend x2, MPI_Waitall of the four) and then joins an 8-byte
 * MPI_Allreduce, `steps` times, with `compute_us` of busy work between
 * steps. Prints "halo: wall <seconds> s" (rank 0, the step loop only).
 *
 * usage: halo [steps=20000] [compute_us=2]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define HALO_BYTES 512

/* after_long prints how much slower the steps after a very long one (over
 * 20 times the median: a recorder's flush or sync epoch, a preemption)
 * are than the median step: for each such step k with no other within
 * the 100 steps after it, the median of steps k+1..k+19 and of
 * k+20..k+99, minus the median of all steps; then the medians over those
 * k. "halo: after_long n N d1_19 X d20_99 Y" (ns; N 0: none). Untraced,
 * the long steps are preemptions, the baseline a traced run's flushes
 * compare with. */
static void after_long(const int64_t *dt, long steps)
{
	int64_t *w = malloc((size_t)steps * sizeof *w);
	int64_t *a = malloc((size_t)steps * sizeof *a), *b = malloc((size_t)steps * sizeof *b);
	if (w == NULL || a == NULL || b == NULL) {
		free(w), free(a), free(b);
		return;
	}
	for (long s = 0; s < steps; s++)
		w[s] = dt[s];
	int64_t med = (int64_t)bench_median_i64(w, (size_t)steps);
	long n = 0;
	for (long k = 0; k + 100 < steps; k++) {
		if (dt[k] <= 20 * med)
			continue;
		int alone = 1;
		for (long j = k + 1; j < k + 100; j++)
			if (dt[j] > 20 * med)
				alone = 0;
		if (!alone)
			continue;
		for (long j = 0; j < 19; j++)
			w[j] = dt[k + 1 + j];
		a[n] = (int64_t)bench_median_i64(w, 19) - med;
		for (long j = 0; j < 80; j++)
			w[j] = dt[k + 20 + j];
		b[n] = (int64_t)bench_median_i64(w, 80) - med;
		n++;
	}
	printf("halo: after_long n %ld d1_19 %.0f d20_99 %.0f\n", n, n ? bench_median_i64(a, (size_t)n) : 0.0,
	       n ? bench_median_i64(b, (size_t)n) : 0.0);
	free(w), free(a), free(b);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long steps = bench_arg_long(argc, argv, 1, 20000);
	long compute_us = bench_arg_long(argc, argv, 2, 2);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int right = (rank + 1) % np, left = (rank + np - 1) % np;
	static char sl[HALO_BYTES], sr[HALO_BYTES], rl[HALO_BYTES], rr[HALO_BYTES];
	double acc = 0, sum = 0;
	int64_t *dt = calloc((size_t)steps, sizeof *dt);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	int64_t ts = bench_now_ns();
	for (long s = 0; s < steps; s++) {
		MPI_Request q[4];
		MPI_Irecv(rl, HALO_BYTES, MPI_BYTE, left, 1, MPI_COMM_WORLD, &q[0]);
		MPI_Irecv(rr, HALO_BYTES, MPI_BYTE, right, 2, MPI_COMM_WORLD, &q[1]);
		sl[0] = (char)s;
		sr[0] = (char)(s + 1);
		MPI_Isend(sl, HALO_BYTES, MPI_BYTE, left, 2, MPI_COMM_WORLD, &q[2]);
		MPI_Isend(sr, HALO_BYTES, MPI_BYTE, right, 1, MPI_COMM_WORLD, &q[3]);
		MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
		double t = MPI_Wtime() + (double)compute_us * 1e-6;
		while (MPI_Wtime() < t)
			acc += 1e-9;
		double v = rl[0] + rr[0] + acc;
		MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		int64_t te = bench_now_ns();
		if (dt != NULL)
			dt[s] = te - ts;
		ts = te;
	}
	double wall = MPI_Wtime() - t0;
	if (rank == 0) {
		printf("halo: wall %.6f s (%ld steps, checksum %.3f)\n", wall, steps, sum);
		if (dt != NULL)
			after_long(dt, steps);
		if (dt != NULL) {
			qsort(dt, (size_t)steps, sizeof *dt, bench_cmp_i64);
			/* the steps longer than twice the median: how many, and the
			 * time they took beyond it (a flush, a preemption) */
			int64_t med = dt[steps / 2], over = 0;
			long nlong = 0;
			for (long s = 0; s < steps; s++)
				if (dt[s] > 2 * med) {
					nlong++;
					over += dt[s] - med;
				}
			printf("halo: long_steps %ld over_ns %lld\n", nlong, (long long)over);
			printf("halo: step_ns p10 %lld p25 %lld p50 %lld p75 %lld p90 %lld\n",
			       (long long)dt[steps / 10], (long long)dt[steps / 4], (long long)dt[steps / 2],
			       (long long)dt[steps * 3 / 4], (long long)dt[steps * 9 / 10]);
		}
	}
	free(dt);
	MPI_Finalize();
	return 0;
}

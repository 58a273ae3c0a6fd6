/*
 * clockprog.c: a run of known shape for the injected-clock tests: <iters>
 * rounds of (uneven sleep, MPI_Barrier, MPI_Allreduce) on MPI_COMM_WORLD,
 * spreading events over a few hundred milliseconds.
 *
 * usage: clockprog <iters> <sleep-us> [wtime|p2p]
 *
 * With "p2p" the rounds are point-to-point only: (uneven sleep, MPI_Sendrecv
 * with both ring neighbours, which absorbs the unevenness, MPI_Sendrecv
 * again, which the ranks enter nearly together), no collective between
 * MPI_Init and MPI_Finalize.
 *
 * With "wtime" every rank prints "wtime-start <rank> <ns>": CLOCK_MONOTONIC
 * minus MPI_Wtime (ns), read back to back (the sample with the shortest
 * bracket of 1000), so a test can map raw MPI_Wtime values of different
 * processes to the one physical clock they share.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void print_wtime_start(int rank)
{
	double best = 1e300, start = 0;
	for (int i = 0; i < 1000; i++) {
		double a = mono_ns();
		double w = MPI_Wtime() * 1e9;
		double b = mono_ns();
		if (b - a < best) {
			best = b - a;
			start = (a + b) / 2 - w;
		}
	}
	printf("wtime-start %d %.1f\n", rank, start);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 50;
	long us = argc > 2 ? atol(argv[2]) : 2000;
	int p2p = argc > 3 && strcmp(argv[3], "p2p") == 0;
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	double acc = 0;
	for (int i = 0; i < iters; i++) {
		struct timespec ts = {0, (us * 1000L * (1 + (rank + i) % 3)) / 2};
		nanosleep(&ts, NULL);
		if (p2p) {
			double out[2] = {rank, i}, in[2] = {0, 0};
			for (int k = 0; k < 2; k++) {
				/* to the right, from the left; the second round again */
				MPI_Sendrecv(out, 2, MPI_DOUBLE, right, 7 + k, in, 2, MPI_DOUBLE, left, 7 + k, MPI_COMM_WORLD,
					     MPI_STATUS_IGNORE);
				acc += in[0] + in[1];
			}
			continue;
		}
		MPI_Barrier(MPI_COMM_WORLD);
		double x = rank + i, y = 0;
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		acc += y;
	}
	if (rank == 0)
		printf("acc %g\n", acc);
	if (argc > 3 && strcmp(argv[3], "wtime") == 0)
		print_wtime_start(rank);
	MPI_Finalize();
	return 0;
}

/*
 * barrierloop.c: the wrapper-overhead benchmark. Times <n> calls of
 * MPI_Barrier(MPI_COMM_SELF) (≈4 ns in Open MPI itself, so the difference
 * with and without the preload is the recorder's cost per call) and prints
 * the best of <reps> repetitions in ns per call.
 *
 * usage: barrierloop <n> <reps>
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	double best = 1e300;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		for (long i = 0; i < n; i++)
			MPI_Barrier(MPI_COMM_SELF);
		double per = (now() - t0) / (double)n;
		if (per < best)
			best = per;
	}
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		printf("%.2f\n", best);
	MPI_Finalize();
	return 0;
}

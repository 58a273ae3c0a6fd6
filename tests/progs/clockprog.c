/*
 * clockprog.c: a run of known shape for the injected-clock tests: <iters>
 * rounds of (uneven sleep, MPI_Barrier, MPI_Allreduce) on MPI_COMM_WORLD,
 * spreading events over a few hundred milliseconds.
 *
 * usage: clockprog <iters> <sleep-us>
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 50;
	long us = argc > 2 ? atol(argv[2]) : 2000;
	double acc = 0;
	for (int i = 0; i < iters; i++) {
		struct timespec ts = {0, (us * 1000L * (1 + (rank + i) % 3)) / 2};
		nanosleep(&ts, NULL);
		MPI_Barrier(MPI_COMM_WORLD);
		double x = rank + i, y = 0;
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		acc += y;
	}
	if (rank == 0)
		printf("acc %g\n", acc);
	MPI_Finalize();
	return 0;
}

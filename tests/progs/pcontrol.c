/*
 * pcontrol.c: selective tracing. <iters> rounds of (short sleep,
 * MPI_Barrier, 8-byte MPI_Allreduce, a ring exchange with
 * MPI_Isend/MPI_Irecv/MPI_Waitall). Rounds [iters/3, 2*iters/3) run with
 * recording paused by MPI_Pcontrol(0), resumed by MPI_Pcontrol(1).
 * Rank 0 prints the sum of every Allreduce result, which the preload must
 * not change.
 *
 * usage: pcontrol <iters> <sleep-us>
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
	int iters = argc > 1 ? atoi(argv[1]) : 30;
	long us = argc > 2 ? atol(argv[2]) : 1000;
	double acc = 0;
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	for (int i = 0; i < iters; i++) {
		if (i == iters / 3)
			MPI_Pcontrol(0);
		if (i == 2 * iters / 3)
			MPI_Pcontrol(1);
		struct timespec ts = {0, us * 1000L};
		nanosleep(&ts, NULL);
		MPI_Barrier(MPI_COMM_WORLD);
		double x = rank + i, y = 0;
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		acc += y;
		int out = rank * 1000 + i, in = -1;
		MPI_Request rq[2];
		MPI_Irecv(&in, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(&out, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		if (in != left * 1000 + i) {
			fprintf(stderr, "rank %d: round %d received %d, want %d\n", rank, i, in, left * 1000 + i);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (rank == 0)
		printf("acc %g\n", acc);
	MPI_Finalize();
	return 0;
}

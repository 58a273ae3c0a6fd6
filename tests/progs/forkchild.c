/*
 * forkchild.c: N 8-byte MPI_Allreduce calls, then fork(): the child prints
 * a line and ends with exit(0), so its atexit handlers run; the parent
 * waits for it and makes N more calls. Rank 0 prints the sum and the
 * child's status, so runs with and without the preload compare byte for
 * byte (tests/recorder_test.go: the rank's trace holds exactly 2N calls).
 *
 * usage: forkchild N
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = argc > 1 ? atol(argv[1]) : 1000;
	double x = rank, y = 0;
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		printf("child of rank %d exits\n", rank);
		exit(0);
	}
	int st = -1;
	if (p > 0)
		waitpid(p, &st, 0);
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("sum %g, child status %d\n", y, st);
	MPI_Finalize();
	return 0;
}

/*
 * forkchild.c: fork() without exec, after or before MPI_Init.
 *
 * usage: forkchild N          N 8-byte MPI_Allreduce calls, then fork(): the
 *                             child prints a line and ends with exit(0), so
 *                             its atexit handlers run; the parent waits for
 *                             it and makes N more calls. Rank 0 prints the
 *                             sum and the child's status.
 *        forkchild N before   fork() first; parent and child each call
 *                             MPI_Init (run it as a singleton, without a
 *                             launcher) and make N calls; each prints its sum,
 *                             the parent the child's status.
 *
 * Runs with and without the preload compare byte for byte once lines are
 * sorted (tests/recorder_test.go).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_status(pid_t p)
{
	int st = -1;
	if (p > 0)
		waitpid(p, &st, 0);
	return st;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int before = argc > 2 && strcmp(argv[2], "before") == 0;
	pid_t p = -1;
	if (before) {
		fflush(stdout);
		p = fork();
	}
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double x = rank + 1, y = 0;
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (before) {
		printf("%s sum %g\n", p == 0 ? "child" : "parent", y);
		fflush(stdout);
		MPI_Finalize();
		if (p > 0)
			printf("child status %d\n", child_status(p));
		return 0;
	}
	fflush(stdout);
	p = fork();
	if (p == 0) {
		printf("child of rank %d exits\n", rank);
		exit(0);
	}
	int st = child_status(p);
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("sum %g, child status %d\n", y, st);
	MPI_Finalize();
	return 0;
}

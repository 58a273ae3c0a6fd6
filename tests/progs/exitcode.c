/*
 * exitcode.c: ends in a chosen way so tests can check the recorder keeps
 * the program's exit status.
 *
 * usage: exitcode exit <n>       return n after MPI_Finalize
 *        exitcode abort <n>      rank 0 calls MPI_Abort(MPI_COMM_WORLD, n)
 *        exitcode nofinalize <n> some collectives, then exit(n) without
 *                                MPI_Finalize
 *        exitcode segv <n>       rank n dereferences NULL
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 3) {
		fprintf(stderr, "usage: exitcode exit|abort|nofinalize|segv <n>\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int n = atoi(argv[2]);
	double x = rank, y = 0;
	for (int i = 0; i < 5; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("sum %g\n", y);
	fflush(stdout);
	if (strcmp(argv[1], "abort") == 0) {
		if (rank == 0)
			MPI_Abort(MPI_COMM_WORLD, n);
		MPI_Barrier(MPI_COMM_WORLD); /* the abort ends it */
	}
	if (strcmp(argv[1], "segv") == 0 && rank == n) {
		volatile int *p = NULL;
		*p = 1;
	}
	if (strcmp(argv[1], "nofinalize") == 0)
		exit(n);
	MPI_Finalize();
	return n;
}

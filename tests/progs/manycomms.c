/*
 * manycomms.c: N communicators live at once (tests/commloop_test.go): N
 * duplicates of MPI_COMM_WORLD, one MPI_Barrier and one 8-byte
 * MPI_Allreduce on each, in creation order and then in reverse, then all
 * freed. Rank 0 prints N and the sum of the reductions.
 *
 * usage: manycomms N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 100;
	MPI_Comm *c = malloc(sizeof(MPI_Comm) * (size_t)n);
	if (c == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < n; i++)
		MPI_Comm_dup(MPI_COMM_WORLD, &c[i]);
	long sum = 0;
	for (int i = 0; i < n; i++)
		MPI_Barrier(c[i]);
	for (int i = n - 1; i >= 0; i--) {
		long x = 1, y = 0;
		MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c[i]);
		sum += y;
	}
	for (int i = 0; i < n; i++)
		MPI_Comm_free(&c[i]);
	free(c);
	if (rank == 0)
		printf("communicators %d sum %ld\n", n, sum);
	MPI_Finalize();
	return 0;
}

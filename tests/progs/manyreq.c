/*
 * manyreq.c: many requests outstanding at once (tests/commloop_test.go):
 * every rank posts N MPI_Irecv from its left neighbour (tags 0..N-1),
 * meets the others in a barrier, starts N MPI_Isend to its right
 * neighbour, and completes all 2N requests in one MPI_Waitall with
 * statuses ignored. Rank 0 prints N and the sum of what it received.
 *
 * usage: manyreq N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int *in = calloc((size_t)n, sizeof(int)), *out = calloc((size_t)n, sizeof(int));
	MPI_Request *q = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
	if (in == NULL || out == NULL || q == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	int right = (rank + 1) % np, left = (rank + np - 1) % np;
	for (int i = 0; i < n; i++)
		MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &q[i]);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < n; i++) {
		out[i] = i;
		MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &q[n + i]);
	}
	MPI_Waitall(2 * n, q, MPI_STATUSES_IGNORE);
	long sum = 0;
	for (int i = 0; i < n; i++)
		sum += in[i];
	if (rank == 0)
		printf("requests %d sum %ld\n", n, sum);
	free(in);
	free(out);
	free(q);
	MPI_Finalize();
	return 0;
}

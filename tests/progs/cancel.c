/*
 * MPI_Cancel (tests/cancel_test.go, issue 11 §4): on every rank an
 * MPI_Irecv from the left neighbour is cancelled before anything is sent
 * to it and completed by MPI_Wait (its status says cancelled); after a
 * barrier a real ring exchange with the same source and tag reuses the
 * key's queue, so a cancelled receive left in it would take the real
 * message. Rank 0 prints one line
 * per rank.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int right = (rank + 1) % np, left = (rank + np - 1) % np;
	int v = -1, flag = 0;
	MPI_Request r;
	MPI_Status st;
	MPI_Irecv(&v, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &r);
	MPI_Cancel(&r);
	MPI_Wait(&r, &st);
	MPI_Test_cancelled(&st, &flag);
	MPI_Barrier(MPI_COMM_WORLD); /* nothing is sent before every cancel completed */
	int got = 0, out = rank;
	for (int i = 0; i < 3; i++) {
		MPI_Sendrecv(&out, 1, MPI_INT, right, 77, &got, 1, MPI_INT, left, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		out += got;
	}
	int res[2] = {flag, out}, all[128];
	MPI_Gather(res, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (int i = 0; i < np && i < 64; i++)
			printf("rank %d cancelled %d ring %d\n", i, all[2 * i], all[2 * i + 1]);
	MPI_Finalize();
	return 0;
}

/*
 * Matched probes (tests/mprobe_test.go, issue 11 §4): N ring steps on every
 * rank, each sending two messages to the right neighbour and receiving two
 * from the left: one by MPI_Mprobe + MPI_Mrecv (with MPI_ANY_TAG and the
 * status ignored), one by an MPI_Improbe loop + MPI_Imrecv + MPI_Wait.
 * Rank 0 prints one deterministic line per rank.
 */
#include <mpi.h>
#include <stdio.h>

#define N 6

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int right = (rank + 1) % np, left = (rank + np - 1) % np;
	long check = 0;
	for (int i = 0; i < N; i++) {
		int out[2] = {rank * 1000 + i, rank * 1000 + 100 + i}, in[8] = {0};
		MPI_Request sreq[2];
		MPI_Isend(&out[0], 1, MPI_INT, right, i, MPI_COMM_WORLD, &sreq[0]);
		MPI_Isend(&out[1], 1, MPI_INT, right, 100 + i, MPI_COMM_WORLD, &sreq[1]);

		MPI_Message msg;
		MPI_Status st;
		MPI_Mprobe(left, i, MPI_COMM_WORLD, &msg, &st);
		int n = 0;
		MPI_Get_count(&st, MPI_INT, &n);
		MPI_Mrecv(in, n, MPI_INT, &msg, MPI_STATUS_IGNORE);
		check += in[0];

		int flag = 0;
		MPI_Message msg2;
		while (!flag)
			MPI_Improbe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg2, &st);
		MPI_Request r;
		MPI_Imrecv(&in[1], 1, MPI_INT, &msg2, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		check += in[1] + st.MPI_TAG;
		MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE);
	}
	long all[64];
	MPI_Gather(&check, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (int r = 0; r < np && r < 64; r++)
			printf("rank %d check %ld\n", r, all[r]);
	MPI_Finalize();
	return 0;
}

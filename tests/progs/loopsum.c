/*
 * loopsum.c: N 8-byte MPI_Allreduce calls on MPI_COMM_WORLD; rank 0
 * prints the last sum and how many calls returned the right one, so runs
 * with and without the preload compare byte for byte.
 *
 * usage: loopsum N
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int64_t in = rank + 1, out = 0, want = (int64_t)np * (np + 1) / 2;
	long ok = 0;
	for (long i = 0; i < n; i++) {
		MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		ok += out == want;
	}
	if (rank == 0)
		printf("sum %lld, %ld of %ld calls right\n", (long long)out, ok, n);
	MPI_Finalize();
	return 0;
}

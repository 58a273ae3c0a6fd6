/*
 * commloop.c: a program that creates and frees a communicator every step
 * (tests/commloop_test.go): MPI_Comm_dup of MPI_COMM_WORLD, or every tenth
 * step MPI_Comm_split by rank parity, one 8-byte MPI_Allreduce on it, then
 * MPI_Comm_free. Rank 0 prints the steps and the sum of the reductions;
 * every rank prints its anonymous resident memory (RssAnon) after half
 * of the steps and at the end to stderr ("commloop: rank R anon KB1 KB2").
 *
 * usage: commloop N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procstatus.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0, half = -1;
	for (long i = 0; i < n; i++) {
		MPI_Comm c;
		if (i % 10 == 9)
			MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
		else
			MPI_Comm_dup(MPI_COMM_WORLD, &c);
		long x = 1, y = 0;
		MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c);
		sum += y;
		MPI_Comm_free(&c);
		if (i == n / 2)
			half = proc_status_kb("RssAnon");
	}
	fprintf(stderr, "commloop: rank %d anon %ld %ld\n", rank, half, proc_status_kb("RssAnon"));
	long total = 0;
	MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("steps %ld sum %ld\n", n, total);
	MPI_Finalize();
	return 0;
}

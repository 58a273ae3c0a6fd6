/*
 * halo.c: a halo-exchange step loop (issue 12's application workload):
 * every rank exchanges 512 bytes with both ring neighbours (MPI_Irecv x2,
 * MPI_Isend x2, MPI_Waitall of the four) and then joins an 8-byte
 * MPI_Allreduce, `steps` times, with `compute_us` of busy work between
 * steps. Prints "halo: wall <seconds> s" (rank 0, the step loop only).
 *
 * usage: halo [steps=20000] [compute_us=2]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "common.h"

#define HALO_BYTES 512

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long steps = bench_arg_long(argc, argv, 1, 20000);
	long compute_us = bench_arg_long(argc, argv, 2, 2);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int right = (rank + 1) % np, left = (rank + np - 1) % np;
	static char sl[HALO_BYTES], sr[HALO_BYTES], rl[HALO_BYTES], rr[HALO_BYTES];
	double acc = 0, sum = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long s = 0; s < steps; s++) {
		MPI_Request q[4];
		MPI_Irecv(rl, HALO_BYTES, MPI_BYTE, left, 1, MPI_COMM_WORLD, &q[0]);
		MPI_Irecv(rr, HALO_BYTES, MPI_BYTE, right, 2, MPI_COMM_WORLD, &q[1]);
		sl[0] = (char)s;
		sr[0] = (char)(s + 1);
		MPI_Isend(sl, HALO_BYTES, MPI_BYTE, left, 2, MPI_COMM_WORLD, &q[2]);
		MPI_Isend(sr, HALO_BYTES, MPI_BYTE, right, 1, MPI_COMM_WORLD, &q[3]);
		MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
		double t = MPI_Wtime() + (double)compute_us * 1e-6;
		while (MPI_Wtime() < t)
			acc += 1e-9;
		double v = rl[0] + rr[0] + acc;
		MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	double wall = MPI_Wtime() - t0;
	if (rank == 0)
		printf("halo: wall %.6f s (%ld steps, checksum %.3f)\n", wall, steps, sum);
	MPI_Finalize();
	return 0;
}

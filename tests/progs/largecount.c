/*
 * MPI-4 large-count variants (tests/largecount_test.go, issue 11 §4) on 2
 * ranks: point-to-point, blocking and nonblocking collectives and one-sided
 * calls through their `_c` functions where mpi.h is MPI-4 (MPICH 4), their
 * int-count twins otherwise (Open MPI 4.1) or with -DGCK_INT_ONLY
 * (largecount_int.c). The recorder records both alike. Rank 0 prints one
 * deterministic line per rank.
 */
#include <mpi.h>
#include <stdio.h>

#if MPI_VERSION >= 4 && !defined(GCK_INT_ONLY)
#define LC(f) f##_c
#define LARGE 1
typedef MPI_Count cnt_t; /* count arrays of the v/w calls */
typedef MPI_Aint dsp_t;  /* their displacements */
#else
#define LC(f) f
#define LARGE 0
typedef int cnt_t;
typedef int dsp_t;
#endif

#define K 4

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int peer = 1 - rank;
	if (np != 2) {
		if (rank == 0)
			fprintf(stderr, "largecount: run with 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int a[K], b[K], c[2 * K], d[2 * K];
	long sum = 0;
	for (int i = 0; i < K; i++)
		a[i] = 10 * rank + i;
	for (int i = 0; i < 2 * K; i++)
		c[i] = 100 * rank + i;

	/* point-to-point */
	if (rank == 0) {
		LC(MPI_Send)(a, K, MPI_INT, peer, 1, MPI_COMM_WORLD);
		LC(MPI_Recv)(b, K, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		LC(MPI_Recv)(b, K, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		LC(MPI_Send)(a, K, MPI_INT, peer, 1, MPI_COMM_WORLD);
	}
	for (int i = 0; i < K; i++)
		sum += b[i];
	MPI_Request q[2];
	LC(MPI_Irecv)(b, K, MPI_INT, peer, 2, MPI_COMM_WORLD, &q[0]);
	LC(MPI_Isend)(a, K, MPI_INT, peer, 2, MPI_COMM_WORLD, &q[1]);
	MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
	for (int i = 0; i < K; i++)
		sum += 2 * b[i];
	LC(MPI_Sendrecv)(a, K, MPI_INT, peer, 3, b, K, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int i = 0; i < K; i++)
		sum += 3 * b[i];

	/* blocking collectives */
	LC(MPI_Bcast)(a, K, MPI_INT, 0, MPI_COMM_WORLD);
	LC(MPI_Reduce)(a, b, K, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
	LC(MPI_Allreduce)(a, b, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < K; i++)
		sum += 5 * b[i];
	LC(MPI_Gather)(a, K, MPI_INT, c, K, MPI_INT, 0, MPI_COMM_WORLD);
	LC(MPI_Scatter)(c, K, MPI_INT, b, K, MPI_INT, 0, MPI_COMM_WORLD);
	LC(MPI_Allgather)(a, K, MPI_INT, c, K, MPI_INT, MPI_COMM_WORLD);
	LC(MPI_Alltoall)(c, K, MPI_INT, d, K, MPI_INT, MPI_COMM_WORLD);
	for (int i = 0; i < 2 * K; i++)
		sum += 7 * d[i];
	LC(MPI_Reduce_scatter_block)(c, b, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	LC(MPI_Scan)(a, b, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	LC(MPI_Exscan)(a, b, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 1)
		for (int i = 0; i < K; i++)
			sum += 11 * b[i];

	/* v/w collectives: count arrays of MPI_Count, displacements of MPI_Aint */
	cnt_t vc[2] = {K, K};
	dsp_t vd[2] = {0, K}, wd[2] = {0, K * (dsp_t)sizeof(int)};
	MPI_Datatype vt[2] = {MPI_INT, MPI_INT};
	LC(MPI_Gatherv)(a, K, MPI_INT, c, vc, vd, MPI_INT, 0, MPI_COMM_WORLD);
	LC(MPI_Scatterv)(c, vc, vd, MPI_INT, b, K, MPI_INT, 1, MPI_COMM_WORLD);
	LC(MPI_Allgatherv)(a, K, MPI_INT, c, vc, vd, MPI_INT, MPI_COMM_WORLD);
	LC(MPI_Alltoallv)(c, vc, vd, MPI_INT, d, vc, vd, MPI_INT, MPI_COMM_WORLD);
	LC(MPI_Alltoallw)(d, vc, wd, vt, c, vc, wd, vt, MPI_COMM_WORLD);
	for (int i = 0; i < 2 * K; i++)
		sum += 23 * c[i];
	LC(MPI_Reduce_scatter)(c, b, vc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Request vq;
	LC(MPI_Ialltoallv)(c, vc, vd, MPI_INT, d, vc, vd, MPI_INT, MPI_COMM_WORLD, &vq);
	MPI_Wait(&vq, MPI_STATUS_IGNORE);
	for (int i = 0; i < 2 * K; i++)
		sum += 29 * d[i];

	/* nonblocking collective */
	MPI_Request r;
	LC(MPI_Iallreduce)(a, b, K, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int i = 0; i < K; i++)
		sum += 13 * b[i];

	/* one-sided */
	int w[K] = {0, 0, 0, 0};
	MPI_Win win;
	LC(MPI_Win_create)(w, (MPI_Aint)sizeof w, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	LC(MPI_Put)(a, K, MPI_INT, peer, 0, K, MPI_INT, win);
	MPI_Win_fence(0, win);
	LC(MPI_Get)(b, K, MPI_INT, peer, 0, K, MPI_INT, win);
	MPI_Win_fence(0, win);
	LC(MPI_Accumulate)(a, K, MPI_INT, peer, 0, K, MPI_INT, MPI_SUM, win);
	MPI_Win_fence(0, win);
	MPI_Win_free(&win);
	for (int i = 0; i < K; i++)
		sum += 17 * b[i] + 19 * w[i];

	long line[3] = {rank, sum, LARGE}, all[6];
	MPI_Gather(line, 3, MPI_LONG, all, 3, MPI_LONG, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (int i = 0; i < 2; i++)
			printf("rank %ld sum %ld\n", all[3 * i], all[3 * i + 1]);
	MPI_Finalize();
	return 0;
}

/*
 * One-sided test program (tests/rma_test.go, docs/explanation/rma.md): known counts of
 * every wrapped RMA call per rank on 3 ranks, with deliberate imbalance:
 * rank 1 arrives 30 ms late at one fence (Wait at Fence of ranks 0 and 2),
 * rank 2 posts 30 ms late in one PSCW round (Late Post of its origin,
 * rank 1), rank 0 completes 30 ms late in another (Early Wait of its
 * target, rank 1). Rank 0 prints one deterministic line per rank.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define N 3   /* fence rounds */
#define K 4   /* ints per transfer */

static void nap_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int right = (rank + 1) % np, left = (rank + np - 1) % np;

	/* Fence epochs on an allocated window. */
	int *a;
	MPI_Win wa;
	MPI_Win_allocate(4 * K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &a, &wa);
	for (int i = 0; i < 4 * K; i++)
		a[i] = rank * 100 + i;
	int src[K], got[K];
	for (int i = 0; i < K; i++)
		src[i] = rank + i;
	MPI_Win_fence(0, wa);
	for (int it = 0; it < N; it++) {
		MPI_Put(src, K, MPI_INT, right, 0, K, MPI_INT, wa);
		MPI_Win_fence(0, wa);
		MPI_Get(got, K, MPI_INT, left, K, K, MPI_INT, wa);
		if (it == 1 && rank == 1)
			nap_ms(30);
		MPI_Win_fence(0, wa);
		MPI_Accumulate(got, K, MPI_INT, right, 2 * K, K, MPI_INT, MPI_SUM, wa);
		MPI_Win_fence(0, wa);
	}

	/* Passive target on a created window. */
	int b[4 * K];
	for (int i = 0; i < 4 * K; i++)
		b[i] = rank;
	MPI_Win wb;
	MPI_Win_create(b, sizeof b, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wb);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, wb);
	int one = 1, old = 0, cmp = right, repl = 1000 + rank, res[K];
	MPI_Fetch_and_op(&one, &old, MPI_INT, right, 0, MPI_SUM, wb);
	MPI_Compare_and_swap(&repl, &cmp, &old, MPI_INT, right, 1, wb);
	MPI_Get_accumulate(src, K, MPI_INT, res, K, MPI_INT, right, K, K, MPI_INT, MPI_SUM, wb);
	MPI_Win_flush(right, wb);
	MPI_Request rq[2];
	MPI_Rput(src, K, MPI_INT, right, 2 * K, K, MPI_INT, wb, &rq[0]);
	MPI_Rget(got, K, MPI_INT, right, 3 * K, K, MPI_INT, wb, &rq[1]);
	MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	MPI_Win_flush_local(right, wb);
	MPI_Win_unlock(right, wb);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, wb);
	MPI_Put(&repl, 1, MPI_INT, left, 3 * K, 1, MPI_INT, wb);
	MPI_Win_flush_all(wb);
	MPI_Win_flush_local_all(wb);
	MPI_Win_sync(wb);
	MPI_Win_unlock_all(wb);
	MPI_Barrier(MPI_COMM_WORLD);

	/* General active target (PSCW) on the allocated window: I expose to
	 * my left neighbour and access my right one. */
	MPI_Group world, gl, gr;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &left, &gl);
	MPI_Group_incl(world, 1, &right, &gr);
	for (int round = 0; round < 2; round++) {
		if (round == 0 && rank == 2)
			nap_ms(30); /* late post: rank 1 waits */
		MPI_Win_post(gl, 0, wa);
		MPI_Win_start(gr, 0, wa);
		MPI_Put(&repl, 1, MPI_INT, right, 3 * K + 1 + round, 1, MPI_INT, wa);
		if (round == 1 && rank == 0)
			nap_ms(30); /* late complete: rank 1 waits in MPI_Win_wait */
		MPI_Win_complete(wa);
		MPI_Win_wait(wa);
	}
	MPI_Group_free(&gl);
	MPI_Group_free(&gr);
	MPI_Group_free(&world);

	/* Shared and dynamic windows: created and freed. */
	int *sh;
	MPI_Win ws, wd;
	MPI_Win_allocate_shared(K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &sh, &ws);
	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wd);
	MPI_Win_free(&wd);
	MPI_Win_free(&ws);

	long sum = 0;
	for (int i = 0; i < 4 * K; i++)
		sum += (long)a[i] * (i + 1) + (long)b[i] * (i + 7);
	for (int i = 0; i < K; i++)
		sum += got[i] + res[i];
	long mine[2] = {sum, old}, all[2 * 64];
	MPI_Gather(mine, 2, MPI_LONG, all, 2, MPI_LONG, 0, MPI_COMM_WORLD);
	for (int r = 0; rank == 0 && r < np && r < 64; r++)
		printf("rank %d checksum %ld old %ld\n", r, all[2 * r], all[2 * r + 1]);
	MPI_Win_free(&wb);
	MPI_Win_free(&wa);
	MPI_Finalize();
	return 0;
}

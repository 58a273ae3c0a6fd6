/*
 * threads.c: MPI_THREAD_MULTIPLE; two threads per rank each call
 * MPI_Allreduce <n> times on their own duplicate of MPI_COMM_WORLD, while
 * the main thread waits. Exercises per-thread buffers and concurrent
 * flushes.
 *
 * usage: threads <n>
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int n;
static MPI_Comm comms[2];
static long long sums[2];

static void *work(void *arg)
{
	int k = (int)(long)arg;
	for (int i = 0; i < n; i++) {
		long long x = i + k, y = 0;
		MPI_Allreduce(&x, &y, 1, MPI_LONG_LONG, MPI_SUM, comms[k]);
		sums[k] += y;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	n = argc > 1 ? atoi(argv[1]) : 1000;
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("no MPI_THREAD_MULTIPLE (provided %d)\n", provided);
		MPI_Finalize();
		return 3;
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
	MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
	pthread_t th[2];
	for (long k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, work, (void *)k);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	if (rank == 0)
		printf("sums %lld %lld\n", sums[0], sums[1]);
	MPI_Comm_free(&comms[0]);
	MPI_Comm_free(&comms[1]);
	MPI_Finalize();
	return 0;
}

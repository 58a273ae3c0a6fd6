/*
 * slowthread.c: MPI_THREAD_MULTIPLE; on every rank the main thread calls
 * MPI_Barrier(MPI_COMM_SELF) <n> times (fast: its buffer fills and is
 * written many times) while a second thread calls MPI_Barrier(MPI_COMM_SELF)
 * (a duplicate of it) every <ms> milliseconds until the main thread is
 * done (slow: its buffer
 * half stays open for the whole run, tests/order_test.go).
 *
 * usage: slowthread <n> <ms>
 * prints (rank 0): "slowthread fast N slow M"
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int done;
static long slow_calls;
static int ms;
static MPI_Comm slow_comm; /* its own: collectives on one communicator from two threads at once are erroneous */

static void *slow(void *arg)
{
	(void)arg;
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		MPI_Barrier(slow_comm);
		slow_calls++;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, rank;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("no MPI_THREAD_MULTIPLE (provided %d)\n", provided);
		MPI_Finalize();
		return 3;
	}
	long n = argc > 1 ? atol(argv[1]) : 100000;
	ms = argc > 2 ? atoi(argv[2]) : 10;
	MPI_Comm_dup(MPI_COMM_SELF, &slow_comm);
	pthread_t th;
	if (pthread_create(&th, NULL, slow, NULL) != 0)
		return 4;
	for (long i = 0; i < n; i++)
		MPI_Barrier(MPI_COMM_SELF);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	if (rank == 0)
		printf("slowthread fast %ld slow %ld\n", n, slow_calls);
	MPI_Comm_free(&slow_comm);
	MPI_Finalize();
	return 0;
}

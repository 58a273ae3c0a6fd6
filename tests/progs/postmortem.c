/*
 * Post-mortem test program (tests/postmortem_test.go, issue 36): every
 * rank calls MPI_Allreduce on MPI_COMM_WORLD N times (argv[2]); then rank
 * R (argv[3]) ends the way argv[1] says while the others enter the next
 * MPI_Allreduce and wait there:
 *   segv    dereferences NULL          fpe     divides an int by zero
 *   abort   MPI_Abort(world, 3)        exit    exit(1) without MPI_Finalize
 *   kill    kill(getpid(), SIGKILL)    thread  a second thread (under
 *           MPI_THREAD_MULTIPLE) dereferences NULL after 100
 *           MPI_Barrier(MPI_COMM_SELF), the main thread waiting for it
 *   hang    ranks 0 and 1 call MPI_Recv from each other (tag 7), the others
 *           enter the Allreduce: a deadlock, ended by the test's timeout
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int zero, seven = 7;

static void *crasher(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		MPI_Barrier(MPI_COMM_SELF);
	usleep(200000); /* the main thread is inside its MPI_Allreduce by now */
	volatile int *p = NULL;
	*p = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: postmortem segv|fpe|abort|exit|kill|thread|hang N RANK\n");
		return 2;
	}
	const char *how = argv[1];
	long n = atol(argv[2]);
	int who = atoi(argv[3]);
	int provided;
	MPI_Init_thread(&argc, &argv, strcmp(how, "thread") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
			&provided);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	double x = rank, y;
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (strcmp(how, "hang") == 0 && rank < 2) {
		int v;
		MPI_Recv(&v, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	if (rank == who) {
		if (strcmp(how, "segv") == 0) {
			volatile int *p = NULL;
			*p = 1;
		} else if (strcmp(how, "fpe") == 0) {
			printf("%d\n", seven / zero); /* not 1 / x: GCC turns that into compares */
		} else if (strcmp(how, "abort") == 0) {
			MPI_Abort(MPI_COMM_WORLD, 3);
		} else if (strcmp(how, "exit") == 0) {
			exit(1);
		} else if (strcmp(how, "kill") == 0) {
			kill(getpid(), SIGKILL);
		} else if (strcmp(how, "thread") == 0) {
			if (provided < MPI_THREAD_MULTIPLE) {
				fprintf(stderr, "postmortem: no MPI_THREAD_MULTIPLE\n");
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
			pthread_t t;
			pthread_create(&t, NULL, crasher, NULL);
			pthread_join(t, NULL); /* the others wait in the MPI_Allreduce */
		}
	}
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}

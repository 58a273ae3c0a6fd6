/*
 * threadchurn.c: a program that runs its MPI calls in short-lived threads
 * (tests/threadchurn_test.go): R rounds, each starting T threads at once
 * that each make M MPI_Barrier and M MPI_Isend/MPI_Irecv pairs to itself
 * completed by MPI_Waitall, each thread on its own duplicate of
 * MPI_COMM_SELF (threads may not run collectives on one communicator at
 * once), then joining them. Rank 0
 * prints the calls made; every rank prints its file-backed resident memory
 * (RssFile: the recorder's thread buffers are file mappings) after half the
 * rounds and at the end to stderr ("threadchurn: rank R file KB1 KB2").
 *
 * usage: threadchurn R T M
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procstatus.h"

static long m_calls;
static MPI_Comm *comms;

static void *work(void *arg)
{
	int tag = (int)(long)arg;
	MPI_Comm c = comms[tag - 1];
	for (long i = 0; i < m_calls; i++) {
		MPI_Barrier(c);
		int out = tag, in = -1;
		MPI_Request r[2];
		MPI_Irecv(&in, 1, MPI_INT, 0, tag, c, &r[0]);
		MPI_Isend(&out, 1, MPI_INT, 0, tag, c, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		if (in != tag)
			abort();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (provided != MPI_THREAD_MULTIPLE || argc != 4) {
		fprintf(stderr, "threadchurn: needs MPI_THREAD_MULTIPLE (got %d) and R T M\n", provided);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long rounds = atol(argv[1]), nt = atol(argv[2]), half = -1;
	m_calls = atol(argv[3]);
	pthread_t *t = calloc((size_t)nt, sizeof *t);
	comms = calloc((size_t)nt, sizeof *comms);
	for (long i = 0; i < nt; i++)
		MPI_Comm_dup(MPI_COMM_SELF, &comms[i]);
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < nt; i++)
			pthread_create(&t[i], NULL, work, (void *)(long)(i + 1));
		for (long i = 0; i < nt; i++)
			pthread_join(t[i], NULL);
		if (r == rounds / 2)
			half = proc_status_kb("RssFile");
	}
	fprintf(stderr, "threadchurn: rank %d file %ld %ld\n", rank, half, proc_status_kb("RssFile"));
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("rounds %ld threads %ld calls per thread %ld\n", rounds, nt, 4 * m_calls);
	for (long i = 0; i < nt; i++)
		MPI_Comm_free(&comms[i]);
	free(t);
	free(comms);
	MPI_Finalize();
	return 0;
}

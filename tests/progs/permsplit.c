/*
 * permsplit.c: a program whose communicators have a new member list at
 * every step (tests/permsplit_test.go): MPI_Comm_split of MPI_COMM_WORLD
 * with the ranks in the order of the step's permutation (steps below
 * size! are all distinct), a message around the ring of the new
 * communicator received from MPI_ANY_SOURCE, and MPI_Comm_free before the
 * requests complete (a request may outlive its communicator: its status is
 * translated to world ranks at completion). Rank 0 prints the steps and a
 * checksum of the senders' world ranks as received and as the statuses
 * named them; a wrong source exits 3. With T > 1 threads
 * (MPI_THREAD_MULTIPLE), each thread runs the steps on its own duplicate
 * of MPI_COMM_WORLD at once, and the checksum counts every thread's.
 *
 * usage: permsplit N [T]
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
	MPI_Comm base;
	long n, sum;
};

static void *steps(void *arg)
{
	struct job *j = arg;
	int rank, size;
	MPI_Comm_rank(j->base, &rank);
	MPI_Comm_size(j->base, &size);
	long n = j->n, sum = 0;
	int *perm = malloc(sizeof(int) * (size_t)size), *left = malloc(sizeof(int) * (size_t)size);
	for (long i = 0; i < n; i++) {
		/* The i-th permutation of 0..size-1 (factorial number system). */
		long x = i;
		for (int j = 0; j < size; j++)
			left[j] = j;
		for (int j = size; j > 0; j--) {
			int pick = (int)(x % j);
			x /= j;
			perm[size - j] = left[pick];
			for (int k = pick; k < j - 1; k++)
				left[k] = left[k + 1];
		}
		int key = 0;
		for (int j = 0; j < size; j++)
			if (perm[j] == rank)
				key = j;
		MPI_Comm c;
		MPI_Comm_split(j->base, 0, key, &c);
		int crank;
		MPI_Comm_rank(c, &crank);
		int in = -1, out = rank;
		MPI_Request rq[2];
		MPI_Status st[2];
		MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 7, c, &rq[0]);
		MPI_Isend(&out, 1, MPI_INT, (crank + 1) % size, 7, c, &rq[1]);
		MPI_Comm_free(&c);
		MPI_Waitall(2, rq, st);
		if (st[0].MPI_SOURCE != (crank + size - 1) % size || in != perm[(key + size - 1) % size]) {
			fprintf(stderr, "permsplit: rank %d step %ld: from %d (comm rank %d), expected %d\n", rank, i,
				in, st[0].MPI_SOURCE, perm[(key + size - 1) % size]);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		sum += in;
	}
	free(perm);
	free(left);
	j->sum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int nt = argc > 2 ? atoi(argv[2]) : 1, provided = MPI_THREAD_SINGLE;
	if (nt < 1 || nt > 16)
		nt = 1;
	if (nt > 1) {
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
		if (provided < MPI_THREAD_MULTIPLE) {
			fprintf(stderr, "permsplit: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
			MPI_Abort(MPI_COMM_WORLD, 4);
		}
	} else {
		MPI_Init(&argc, &argv);
	}
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	struct job jobs[16];
	pthread_t th[16];
	for (int t = 0; t < nt; t++) {
		jobs[t].n = n;
		jobs[t].sum = 0;
		if (nt > 1)
			MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].base);
		else
			jobs[t].base = MPI_COMM_WORLD;
	}
	for (int t = 1; t < nt; t++)
		pthread_create(&th[t], NULL, steps, &jobs[t]);
	steps(&jobs[0]);
	long sum = jobs[0].sum;
	for (int t = 1; t < nt; t++) {
		pthread_join(th[t], NULL);
		sum += jobs[t].sum;
	}
	for (int t = 0; t < nt && nt > 1; t++)
		MPI_Comm_free(&jobs[t].base);
	long total = 0;
	MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("steps %ld sum %ld\n", n, total);
	MPI_Finalize();
	return 0;
}

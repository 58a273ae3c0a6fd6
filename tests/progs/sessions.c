/*
 * sessions.c: a program that starts MPI with the MPI-4 sessions model
 * (tests/sessions_test.go, docs/explanation/recorder.md "Sessions"). Its communicator
 * is made from the process set "mpi://WORLD" of its session; on it every
 * rank makes N steps of a ring exchange (MPI_Isend/MPI_Irecv/MPI_Waitall
 * with both neighbours) and one 8-byte MPI_Allreduce, then a barrier on a
 * second communicator made from the even ranks' group. A second session
 * (a library's own, say) makes a communicator of its own and one
 * MPI_Allreduce on it. Rank 0 prints one deterministic line per result.
 *
 * usage: sessions MODE N
 *   MODE session:       the sessions model only
 *   MODE init-first:    MPI_Init, then the sessions; MPI_Finalize last
 *   MODE session-first: the first session, then MPI_Init; MPI_Finalize
 *                       before the sessions are finalized
 * Built against an MPI-3 mpi.h (Open MPI 4.1) it says so and exits 3.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
static MPI_Comm world_of(MPI_Session s, const char *tag)
{
	MPI_Group g;
	MPI_Comm c;
	if (MPI_Group_from_session_pset(s, "mpi://WORLD", &g) != MPI_SUCCESS ||
	    MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) != MPI_SUCCESS) {
		fprintf(stderr, "sessions: cannot make a communicator from mpi://WORLD\n");
		exit(4);
	}
	MPI_Group_free(&g);
	return c;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sessions session|init-first|session-first N\n");
		return 2;
	}
	const char *mode = argv[1];
	long n = atol(argv[2]);
	int world_model = strcmp(mode, "session") != 0;
	if (strcmp(mode, "init-first") == 0)
		MPI_Init(&argc, &argv);
	MPI_Session s1, s2;
	if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1) != MPI_SUCCESS) {
		fprintf(stderr, "sessions: MPI_Session_init failed\n");
		return 4;
	}
	if (strcmp(mode, "session-first") == 0)
		MPI_Init(&argc, &argv);
	MPI_Comm c = world_of(s1, "org.example.app");
	int rank, np;
	MPI_Comm_rank(c, &rank);
	MPI_Comm_size(c, &np);
	int right = (rank + 1) % np, left = (rank + np - 1) % np;

	double out[2], in[2];
	long ring = 0, sum = 0;
	for (long i = 0; i < n; i++) {
		MPI_Request r[4];
		out[0] = out[1] = (double)(rank + i);
		MPI_Irecv(&in[0], 1, MPI_DOUBLE, left, 1, c, &r[0]);
		MPI_Irecv(&in[1], 1, MPI_DOUBLE, right, 2, c, &r[1]);
		MPI_Isend(&out[0], 1, MPI_DOUBLE, right, 1, c, &r[2]);
		MPI_Isend(&out[1], 1, MPI_DOUBLE, left, 2, c, &r[3]);
		MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
		ring += (long)(in[0] + in[1]);
		long x = rank + i, y = 0;
		MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c);
		sum += y;
	}

	/* the even ranks' communicator, made by its members only */
	MPI_Group cg, eg;
	MPI_Comm_group(c, &cg);
	int evens[64], ne = 0;
	for (int r = 0; r < np && ne < 64; r += 2)
		evens[ne++] = r;
	MPI_Group_incl(cg, ne, evens, &eg);
	if (rank % 2 == 0) {
		MPI_Comm ec;
		MPI_Comm_create_from_group(eg, "org.example.evens", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ec);
		MPI_Barrier(ec);
		MPI_Comm_free(&ec);
	}
	MPI_Group_free(&eg);
	MPI_Group_free(&cg);

	/* a second session, e.g. a library's */
	if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) != MPI_SUCCESS) {
		fprintf(stderr, "sessions: the second MPI_Session_init failed\n");
		return 4;
	}
	MPI_Comm c2 = world_of(s2, "org.example.lib");
	long lib = 0, one = 1;
	MPI_Allreduce(&one, &lib, 1, MPI_LONG, MPI_SUM, c2);
	MPI_Comm_free(&c2);
	MPI_Session_finalize(&s2);

	long all[2] = {ring, sum}, tot[2];
	MPI_Reduce(all, tot, 2, MPI_LONG, MPI_SUM, 0, c);
	if (rank == 0) {
		printf("ranks %d steps %ld\n", np, n);
		printf("ring %ld allreduce %ld\n", tot[0], tot[1]);
		printf("second session sees %ld ranks\n", lib);
		fflush(stdout);
	}
	MPI_Comm_free(&c);
	if (world_model && strcmp(mode, "session-first") == 0)
		MPI_Finalize();
	MPI_Session_finalize(&s1);
	if (strcmp(mode, "init-first") == 0)
		MPI_Finalize();
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "sessions: mpi.h is MPI-%d; the sessions model is MPI-4\n", MPI_VERSION);
	return 3;
}
#endif

/*
 * collectives.c: calls every wrapped collective a known number of times on
 * several communicators and writes, per rank, the events a recorder must
 * see (one line per call: op comm-label root sent recv) to
 * <expect-dir>/expect-<rank>.txt. Output on stdout comes from rank 0 only
 * and is deterministic, so runs with and without the preload compare
 * byte for byte.
 *
 * usage: collectives <expect-dir>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *ef;
static int wrank, wsize;
static long long checksum;

static void expect(const char *op, const char *label, int root,
		   unsigned long long sent, unsigned long long recv)
{
	fprintf(ef, "%s %s %d %llu %llu\n", op, label, root, sent, recv);
}

/* user-defined op: integer sum written by hand */
static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	int *a = in, *b = inout;
	for (int i = 0; i < *len * 3; i++)
		b[i] += a[i];
}

static MPI_Datatype triple; /* contiguous 3 ints = 12 bytes */
static MPI_Op myop;

static void add(const int *v, int n)
{
	for (int i = 0; i < n; i++)
		checksum = checksum * 31 + v[i];
}
static void addd(const double *v, int n)
{
	for (int i = 0; i < n; i++)
		checksum = checksum * 31 + (long long)v[i];
}

static void suite(MPI_Comm c, const char *L)
{
	int n, r;
	MPI_Comm_size(c, &n);
	MPI_Comm_rank(c, &r);
	int tri = n * (n + 1) / 2; /* sum of i+1 over ranks */
	int *ib = calloc(4096, sizeof(int)), *ib2 = calloc(4096, sizeof(int));
	double *db = calloc(4096, sizeof(double)), *db2 = calloc(4096, sizeof(double));
	int *cnt = calloc(n, sizeof(int)), *dsp = calloc(n, sizeof(int));
	int *cnt2 = calloc(n, sizeof(int)), *dsp2 = calloc(n, sizeof(int));
	for (int i = 0; i < 4096; i++) {
		ib[i] = wrank * 100 + i;
		db[i] = wrank * 1000 + i;
	}

	/* Barrier */
	MPI_Barrier(c);
	expect("MPI_Barrier", L, -1, 0, 0);

	/* Bcast 5 ints from the last rank */
	MPI_Bcast(ib, 5, MPI_INT, n - 1, c);
	expect("MPI_Bcast", L, n - 1, r == n - 1 ? 20 : 0, r == n - 1 ? 0 : 20);
	add(ib, 5);

	/* Reduce 4 doubles to 0, then in place at the root */
	MPI_Reduce(db, db2, 4, MPI_DOUBLE, MPI_SUM, 0, c);
	expect("MPI_Reduce", L, 0, 32, r == 0 ? 32 : 0);
	if (r == 0)
		addd(db2, 4);
	if (r == 0)
		MPI_Reduce(MPI_IN_PLACE, db, 4, MPI_DOUBLE, MPI_SUM, 0, c);
	else
		MPI_Reduce(db, NULL, 4, MPI_DOUBLE, MPI_SUM, 0, c);
	expect("MPI_Reduce", L, 0, 32, r == 0 ? 32 : 0);

	/* Allreduce with a user datatype and a user op; then in place */
	MPI_Allreduce(ib, ib2, 3, triple, myop, c);
	expect("MPI_Allreduce", L, -1, 36, 36);
	add(ib2, 9);
	MPI_Allreduce(MPI_IN_PLACE, ib2, 2, MPI_INT, MPI_SUM, c);
	expect("MPI_Allreduce", L, -1, 8, 8);
	add(ib2, 2);

	/* Gather 2 ints to 0; then in place at the root */
	MPI_Gather(ib, 2, MPI_INT, ib2, 2, MPI_INT, 0, c);
	expect("MPI_Gather", L, 0, 8, r == 0 ? 8ull * n : 0);
	if (r == 0)
		add(ib2, 2 * n);
	if (r == 0)
		MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ib2, 2, MPI_INT, 0, c);
	else
		MPI_Gather(ib, 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 0, c);
	expect("MPI_Gather", L, 0, r == 0 ? 0 : 8, r == 0 ? 8ull * (n - 1) : 0);

	/* Gatherv: rank i sends i+1 ints to the last rank */
	for (int i = 0, d = 0; i < n; i++) {
		cnt[i] = i + 1;
		dsp[i] = d;
		d += i + 1;
	}
	MPI_Gatherv(ib, r + 1, MPI_INT, ib2, cnt, dsp, MPI_INT, n - 1, c);
	expect("MPI_Gatherv", L, n - 1, 4ull * (r + 1), r == n - 1 ? 4ull * tri : 0);
	if (r == n - 1)
		add(ib2, tri);

	/* Scatter 3 doubles from 0; then in place at the root */
	MPI_Scatter(db, 3, MPI_DOUBLE, db2, 3, MPI_DOUBLE, 0, c);
	expect("MPI_Scatter", L, 0, r == 0 ? 24ull * n : 0, 24);
	addd(db2, 3);
	if (r == 0)
		MPI_Scatter(db, 3, MPI_DOUBLE, MPI_IN_PLACE, 3, MPI_DOUBLE, 0, c);
	else
		MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, db2, 3, MPI_DOUBLE, 0, c);
	expect("MPI_Scatter", L, 0, r == 0 ? 24ull * (n - 1) : 0, r == 0 ? 0 : 24);

	/* Scatterv: i+1 ints to rank i, from 0 */
	MPI_Scatterv(ib, cnt, dsp, MPI_INT, ib2, r + 1, MPI_INT, 0, c);
	expect("MPI_Scatterv", L, 0, r == 0 ? 4ull * tri : 0, 4ull * (r + 1));
	add(ib2, r + 1);

	/* Allgather 1 double; then in place */
	MPI_Allgather(db, 1, MPI_DOUBLE, db2, 1, MPI_DOUBLE, c);
	expect("MPI_Allgather", L, -1, 8, 8ull * n);
	addd(db2, n);
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, db2, 1, MPI_DOUBLE, c);
	expect("MPI_Allgather", L, -1, 8, 8ull * (n - 1));

	/* Allgatherv: uneven (i+1 ints from rank i); then in place */
	MPI_Allgatherv(ib, r + 1, MPI_INT, ib2, cnt, dsp, MPI_INT, c);
	expect("MPI_Allgatherv", L, -1, 4ull * (r + 1), 4ull * tri);
	add(ib2, tri);
	MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ib2, cnt, dsp, MPI_INT, c);
	expect("MPI_Allgatherv", L, -1, 4ull * (r + 1), 4ull * (tri - (r + 1)));

	/* Alltoall 2 ints per peer; then in place */
	MPI_Alltoall(ib, 2, MPI_INT, ib2, 2, MPI_INT, c);
	expect("MPI_Alltoall", L, -1, 8ull * n, 8ull * n);
	add(ib2, 2 * n);
	MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ib2, 2, MPI_INT, c);
	expect("MPI_Alltoall", L, -1, 8ull * (n - 1), 8ull * (n - 1));

	/* Alltoallv: i+1 ints to rank i (so r+1 from everyone) */
	for (int i = 0, d = 0; i < n; i++) {
		cnt2[i] = r + 1;
		dsp2[i] = d;
		d += r + 1;
	}
	MPI_Alltoallv(ib, cnt, dsp, MPI_INT, ib2, cnt2, dsp2, MPI_INT, c);
	expect("MPI_Alltoallv", L, -1, 4ull * tri, 4ull * n * (r + 1));
	add(ib2, n * (r + 1));
	/* in place: symmetric counts r+i+1 */
	{
		unsigned long long b = 0;
		for (int i = 0, d = 0; i < n; i++) {
			cnt2[i] = r + i + 1;
			dsp2[i] = d;
			d += r + i + 1;
			if (i != r)
				b += 4ull * (r + i + 1);
		}
		MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ib2, cnt2, dsp2, MPI_INT, c);
		expect("MPI_Alltoallv", L, -1, b, b);
	}

	/* Alltoallw: to peer i one int (i even) or one double (i odd) */
	{
		int *sc = calloc(n, sizeof(int)), *sd = calloc(n, sizeof(int));
		int *rc = calloc(n, sizeof(int)), *rd = calloc(n, sizeof(int));
		MPI_Datatype *st = calloc(n, sizeof(MPI_Datatype)), *rt = calloc(n, sizeof(MPI_Datatype));
		unsigned long long sb = 0;
		for (int i = 0; i < n; i++) {
			sc[i] = rc[i] = 1;
			sd[i] = rd[i] = 8 * i; /* byte displacements */
			st[i] = (i % 2) ? MPI_DOUBLE : MPI_INT;
			rt[i] = (r % 2) ? MPI_DOUBLE : MPI_INT;
			sb += (i % 2) ? 8 : 4;
		}
		MPI_Alltoallw(db, sc, sd, st, db2, rc, rd, rt, c);
		expect("MPI_Alltoallw", L, -1, sb, (unsigned long long)n * ((r % 2) ? 8 : 4));
		free(sc); free(sd); free(rc); free(rd); free(st); free(rt);
	}

	/* Reduce_scatter: i+1 ints to rank i */
	MPI_Reduce_scatter(ib, ib2, cnt, MPI_INT, MPI_SUM, c);
	expect("MPI_Reduce_scatter", L, -1, 4ull * tri, 4ull * (r + 1));
	add(ib2, r + 1);

	/* Reduce_scatter_block: 2 doubles each */
	MPI_Reduce_scatter_block(db, db2, 2, MPI_DOUBLE, MPI_SUM, c);
	expect("MPI_Reduce_scatter_block", L, -1, 16ull * n, 16);
	addd(db2, 2);

	/* Scan 2 long longs; Exscan 1 int */
	{
		long long a[2] = {wrank, 7}, b[2];
		MPI_Scan(a, b, 2, MPI_LONG_LONG, MPI_SUM, c);
		expect("MPI_Scan", L, -1, 16, 16);
		checksum = checksum * 31 + b[0] + b[1];
		int x = wrank + 1, y = 0;
		MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, c);
		expect("MPI_Exscan", L, -1, 4, r == 0 ? 0 : 4);
		if (r != 0)
			checksum = checksum * 31 + y;
	}

	free(ib); free(ib2); free(db); free(db2);
	free(cnt); free(dsp); free(cnt2); free(dsp2);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	if (argc < 2) {
		fprintf(stderr, "usage: collectives <expect-dir>\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/expect-%d.txt", argv[1], wrank);
	ef = fopen(path, "w");
	if (ef == NULL) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Type_contiguous(3, MPI_INT, &triple);
	MPI_Type_commit(&triple);
	MPI_Op_create(my_sum, 1, &myop);

	suite(MPI_COMM_WORLD, "world");

	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
	suite(half, wrank % 2 ? "half1" : "half0");

	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	suite(dup, "dup");

	MPI_Group wg, fg;
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	int nfirst = (wsize + 1) / 2;
	int *fr = malloc(sizeof(int) * nfirst);
	for (int i = 0; i < nfirst; i++)
		fr[i] = i;
	MPI_Group_incl(wg, nfirst, fr, &fg);
	MPI_Comm created;
	MPI_Comm_create(MPI_COMM_WORLD, fg, &created);
	if (created != MPI_COMM_NULL)
		suite(created, "create");

	MPI_Comm shared;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank, MPI_INFO_NULL, &shared);
	suite(shared, "shared");

	/* handle reuse: free the dup, make another */
	MPI_Comm old = dup;
	MPI_Comm_free(&dup);
	MPI_Comm dup2;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
	fprintf(ef, "# handle-reused %d\n", dup2 == old);
	suite(dup2, "dup2");

	/* a topology constructor (wrapped: kind "cart") */
	MPI_Comm cart;
	int dims[1] = {wsize}, periods[1] = {0};
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
	MPI_Barrier(cart);
	expect("MPI_Barrier", "cart", -1, 0, 0);
	MPI_Allreduce(MPI_IN_PLACE, &checksum, 1, MPI_LONG_LONG, MPI_BXOR, cart);
	expect("MPI_Allreduce", "cart", -1, 8, 8);

	/* MPI_Comm_dup_with_info (wrapped: kind "dup") */
	MPI_Comm withinfo;
	MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &withinfo);
	MPI_Barrier(withinfo);
	expect("MPI_Barrier", "withinfo", -1, 0, 0);

	/* a communicator the recorder did not see created (its PMPI entry
	 * point, as a function the recorder does not wrap would): kind
	 * "unknown", its id agreed from the member list */
	MPI_Comm behind;
	PMPI_Comm_dup(MPI_COMM_WORLD, &behind);
	MPI_Barrier(behind);
	expect("MPI_Barrier", "behind", -1, 0, 0);

	MPI_Barrier(MPI_COMM_SELF);
	expect("MPI_Barrier", "self", -1, 0, 0);

	/* Output: every rank's checksum, printed by rank 0 in rank order. */
	long long *all = malloc(sizeof(long long) * wsize);
	MPI_Gather(&checksum, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	expect("MPI_Gather", "world", 0, 8, wrank == 0 ? 8ull * wsize : 0);
	if (wrank == 0)
		for (int i = 0; i < wsize; i++)
			printf("rank %d checksum %lld\n", i, all[i]);

	MPI_Comm_free(&half);
	MPI_Comm_free(&dup2);
	MPI_Comm_free(&shared);
	MPI_Comm_free(&cart);
	MPI_Comm_free(&withinfo);
	MPI_Comm_free(&behind);
	if (created != MPI_COMM_NULL)
		MPI_Comm_free(&created);
	MPI_Group_free(&fg);
	MPI_Group_free(&wg);
	MPI_Op_free(&myop);
	MPI_Type_free(&triple);
	fclose(ef);
	MPI_Finalize();
	return 0;
}

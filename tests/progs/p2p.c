/*
 * p2p.c: point-to-point, request and nonblocking-collective patterns with
 * known messages (issue 7). Per rank it writes the events a recorder must
 * see, one line per event record, to <expect-dir>/expect-<rank>.txt:
 *
 *   op comm-label seq root peer tag sent recv req
 *
 * (peer as world rank, req the per-rank request id the recorder assigns:
 * 1, 2, ... in start order; docs/explanation/p2p.md), plus "# misses <op> <n>" lines
 * for unsuccessful MPI_Test* / MPI_Iprobe calls. Which request a
 * Waitany/Testsome completes is timing dependent, so those lines are
 * written from what MPI returned. Output on stdout comes from rank 0 only
 * and is deterministic, so runs with and without the preload compare byte
 * for byte.
 *
 * usage: p2p <expect-dir>            every pattern, expectations
 *        p2p <expect-dir> late <ms>  halo rounds where the last rank sends
 *                                    <ms> late in round 2, and a blocking
 *                                    Send from rank 1 <ms> late to rank 0
 *        p2p <expect-dir> bench <n>  ns per Irecv+Isend+Waitall triple on
 *                                    MPI_COMM_SELF (best of 30 batches of n)
 *        p2p <dir> threads           MPI_THREAD_MULTIPLE: two threads per
 *                                    rank run ring exchanges concurrently
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE *ef;
static int wrank, wsize;
static unsigned reqs; /* requests started so far = last request id */
static unsigned wseq; /* collectives started on MPI_COMM_WORLD */
static long long checksum;

static unsigned newreq(void) { return ++reqs; }

static void E(const char *op, const char *label, unsigned seq, int root, int peer, int tag,
	      unsigned long long sent, unsigned long long recv, unsigned req)
{
	fprintf(ef, "%s %s %u %d %d %d %llu %llu %u\n", op, label, seq, root, peer, tag, sent,
		recv, req);
}

static void add(const int *v, int n)
{
	for (int i = 0; i < n; i++)
		checksum = checksum * 31 + v[i];
}

static void sleep_ms(double ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (time_t)(ms / 1000)) * 1e6)};
	nanosleep(&ts, NULL);
}

/* a posted message: what the program knows about one of its requests */
struct msg {
	const char *label;
	int recv; /* 1 receive, 0 send */
	int peer, tag;
	unsigned long long bytes;
	unsigned req;
};

/* complete writes the completion line of m (status-resolved values in st
 * for receives when given). */
static void complete(const char *op, unsigned seq, const struct msg *m, const MPI_Status *st)
{
	if (m->recv) {
		int peer = m->peer, tag = m->tag;
		unsigned long long b = m->bytes;
		if (st != NULL) {
			int n = 0;
			MPI_Get_count(st, MPI_BYTE, &n);
			peer = st->MPI_SOURCE; /* world here */
			tag = st->MPI_TAG;
			b = (unsigned long long)n;
		}
		E(op, m->label, seq, -1, peer, tag, 0, b, m->req);
	} else {
		E(op, m->label, seq, -1, m->peer, m->tag, m->bytes, 0, m->req);
	}
}

static void ring_blocking(void)
{
	int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
	int out[10], in[10];
	for (int i = 0; i < 10; i++)
		out[i] = wrank * 10 + i;
	for (int pass = 0; pass < 2; pass++) {
		const char *sop = pass == 0 ? "MPI_Send" : "MPI_Ssend";
		if (wrank % 2 == 0) {
			if (pass == 0)
				MPI_Send(out, 10, MPI_INT, right, 1, MPI_COMM_WORLD);
			else
				MPI_Ssend(out, 10, MPI_INT, right, 1, MPI_COMM_WORLD);
			E(sop, "world", 0, -1, right, 1, 40, 0, 0);
			MPI_Recv(in, 10, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			E("MPI_Recv", "world", 0, -1, left, 1, 0, 40, 0);
		} else {
			MPI_Recv(in, 10, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			E("MPI_Recv", "world", 0, -1, left, 1, 0, 40, 0);
			if (pass == 0)
				MPI_Send(out, 10, MPI_INT, right, 1, MPI_COMM_WORLD);
			else
				MPI_Ssend(out, 10, MPI_INT, right, 1, MPI_COMM_WORLD);
			E(sop, "world", 0, -1, right, 1, 40, 0, 0);
		}
		add(in, 10);
	}
	/* MPI_PROC_NULL: no message, peer -2 */
	MPI_Send(out, 10, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD);
	E("MPI_Send", "world", 0, -1, -2, 7, 0, 0, 0);
}

/* sendrecv on the reversed communicator: comm ranks differ from world ranks */
static void ring_sendrecv(MPI_Comm rev)
{
	int n, r;
	MPI_Comm_size(rev, &n);
	MPI_Comm_rank(rev, &r);
	int cr = (r + 1) % n, cl = (r + n - 1) % n;
	int wr = n - 1 - cr, wl = n - 1 - cl; /* world ranks of those */
	double out[8], in[8];
	for (int i = 0; i < 8; i++)
		out[i] = wrank + i;
	MPI_Sendrecv(out, 8, MPI_DOUBLE, cr, 2, in, 8, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, rev,
		     MPI_STATUS_IGNORE);
	E("MPI_Sendrecv", "rev", 0, -1, wr, 2, 64, 0, 0);
	E("MPI_Sendrecv", "rev", 1, -1, wl, 2, 0, 64, 0);
	checksum = checksum * 31 + (long long)in[3];
	int buf[5];
	for (int i = 0; i < 5; i++)
		buf[i] = wrank;
	int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
	MPI_Status st;
	MPI_Sendrecv_replace(buf, 5, MPI_INT, right, 3, left, 3, MPI_COMM_WORLD, &st);
	E("MPI_Sendrecv_replace", "world", 0, -1, right, 3, 20, 0, 0);
	E("MPI_Sendrecv_replace", "world", 1, -1, left, 3, 0, 20, 0);
	add(buf, 5);
}

/* halo: Irecv from both neighbours, Isend to both, Waitall */
static void halo(int rounds, double late_ms, int late_round)
{
	int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
	static int inl[16], inr[16], outl[16], outr[16];
	for (int round = 0; round < rounds; round++) {
		for (int i = 0; i < 16; i++)
			outr[i] = outl[i] = wrank + round + i;
		MPI_Request rq[4];
		struct msg m[4] = {
		    {"world", 1, left, 5, 64, 0},
		    {"world", 1, right, 6, 32, 0},
		    {"world", 0, right, 5, 64, 0},
		    {"world", 0, left, 6, 32, 0},
		};
		MPI_Irecv(inl, 16, MPI_INT, left, 5, MPI_COMM_WORLD, &rq[0]);
		m[0].req = newreq();
		MPI_Irecv(inr, 8, MPI_INT, right, 6, MPI_COMM_WORLD, &rq[1]);
		m[1].req = newreq();
		for (int i = 0; i < 2; i++)
			E("MPI_Irecv", "world", 0, -1, m[i].peer, m[i].tag, 0, m[i].bytes, m[i].req);
		if (late_ms > 0 && round == late_round && wrank == wsize - 1)
			sleep_ms(late_ms);
		MPI_Isend(outr, 16, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[2]);
		m[2].req = newreq();
		MPI_Isend(outl, 8, MPI_INT, left, 6, MPI_COMM_WORLD, &rq[3]);
		m[3].req = newreq();
		for (int i = 2; i < 4; i++)
			E("MPI_Isend", "world", 0, -1, m[i].peer, m[i].tag, m[i].bytes, 0, m[i].req);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		for (int i = 0; i < 4; i++)
			complete("MPI_Waitall", (unsigned)i, &m[i], NULL);
		add(inl, 16);
		add(inr, 8);
	}
}

/* any-source receives at rank 0, completed with Waitany; Probe; short message */
static void anysource(MPI_Comm rev, MPI_Comm dup)
{
	if (wrank == 0) {
		int n = wsize - 1;
		MPI_Request *rq = malloc(sizeof *rq * (size_t)(n + 1));
		struct msg *m = calloc((size_t)n + 1, sizeof *m);
		int(*buf)[100] = calloc((size_t)n + 1, sizeof *buf);
		for (int i = 0; i < n; i++) {
			MPI_Irecv(buf[i], 100, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &rq[i]);
			m[i] = (struct msg){"dup", 1, -1, -1, 400, newreq()};
			E("MPI_Irecv", "dup", 0, -1, -1, -1, 0, 400, m[i].req);
		}
		for (int k = 0; k < n; k++) {
			int idx;
			MPI_Status st;
			MPI_Waitany(n, rq, &idx, &st);
			complete("MPI_Waitany", 0, &m[idx], &st);
			int c = 0;
			MPI_Get_count(&st, MPI_INT, &c);
			checksum += st.MPI_SOURCE * 1000 + c; /* completion order varies */
		}
		int idx;
		MPI_Waitany(n, rq, &idx, MPI_STATUS_IGNORE); /* all null: completes nothing */
		E("MPI_Waitany", "world", 0, -1, 0, 0, 0, 0, 0);
		/* Probe each of the others' tag-30 messages on the reversed
		 * communicator (comm rank = n-1-world rank), then receive it */
		for (int k = 0; k < n; k++) {
			MPI_Status st;
			MPI_Probe(MPI_ANY_SOURCE, 30, rev, &st);
			int c = 0;
			MPI_Get_count(&st, MPI_BYTE, &c);
			int w = wsize - 1 - st.MPI_SOURCE;
			E("MPI_Probe", "rev", 0, -1, w, 30, 0, (unsigned long long)c, 0);
			double d[64];
			MPI_Recv(d, 64, MPI_DOUBLE, st.MPI_SOURCE, 30, rev, MPI_STATUS_IGNORE);
			E("MPI_Recv", "rev", 0, -1, w, 30, 0, (unsigned long long)c, 0);
			checksum += (long long)d[0];
		}
		free(rq);
		free(m);
		free(buf);
	} else {
		int v[64];
		for (int i = 0; i < 64; i++)
			v[i] = wrank * 7 + i;
		MPI_Send(v, 37 + wrank, MPI_INT, 0, 20 + wrank, dup);
		E("MPI_Send", "dup", 0, -1, 0, 20 + wrank, (unsigned long long)(37 + wrank) * 4, 0, 0);
		double d[64];
		for (int i = 0; i < 64; i++)
			d[i] = wrank;
		MPI_Send(d, 7 + wrank, MPI_DOUBLE, wsize - 1, 30, rev); /* world rank 0 */
		E("MPI_Send", "rev", 0, -1, 0, 30, (unsigned long long)(7 + wrank) * 8, 0, 0);
	}
}

/* persistent requests: Send_init/Recv_init, Startall x3, Start, Request_free */
static void persistent(void)
{
	int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
	int out[4], in[4];
	MPI_Request rq[2];
	MPI_Recv_init(in, 4, MPI_INT, left, 40, MPI_COMM_WORLD, &rq[0]);
	struct msg mr = {"world", 1, left, 40, 16, newreq()};
	E("MPI_Recv_init", "world", 0, -1, left, 40, 0, 16, mr.req);
	MPI_Send_init(out, 4, MPI_INT, right, 40, MPI_COMM_WORLD, &rq[1]);
	struct msg ms = {"world", 0, right, 40, 16, newreq()};
	E("MPI_Send_init", "world", 0, -1, right, 40, 16, 0, ms.req);
	for (int it = 0; it < 3; it++) {
		for (int i = 0; i < 4; i++)
			out[i] = wrank + it * 100 + i;
		MPI_Startall(2, rq);
		E("MPI_Startall", "world", 0, -1, left, 40, 0, 16, mr.req);
		E("MPI_Startall", "world", 1, -1, right, 40, 16, 0, ms.req);
		MPI_Status st[2];
		MPI_Waitall(2, rq, st);
		complete("MPI_Waitall", 0, &mr, &st[0]);
		complete("MPI_Waitall", 1, &ms, NULL);
		add(in, 4);
	}
	MPI_Start(&rq[0]);
	E("MPI_Start", "world", 0, -1, left, 40, 0, 16, mr.req);
	MPI_Start(&rq[1]);
	E("MPI_Start", "world", 0, -1, right, 40, 16, 0, ms.req);
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	complete("MPI_Wait", 0, &ms, NULL);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	complete("MPI_Wait", 0, &mr, NULL);
	add(in, 4);
	MPI_Request_free(&rq[0]);
	E("MPI_Request_free", "world", 0, -1, left, 40, 0, 0, mr.req);
	MPI_Request_free(&rq[1]);
	E("MPI_Request_free", "world", 0, -1, right, 40, 0, 0, ms.req);
}

/* Testsome / Testall / Test / Iprobe loops with counted misses */
static void polling(void)
{
	int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
	int a[8], b[8], o1[8], o2[8];
	for (int i = 0; i < 8; i++)
		o1[i] = o2[i] = wrank - i;
	MPI_Request rq[4];
	struct msg m[4] = {
	    {"world", 1, left, 50, 32, 0},
	    {"world", 1, right, 51, 16, 0},
	    {"world", 0, right, 50, 32, 0},
	    {"world", 0, left, 51, 16, 0},
	};
	MPI_Irecv(a, 8, MPI_INT, left, 50, MPI_COMM_WORLD, &rq[0]);
	m[0].req = newreq();
	MPI_Irecv(b, 8, MPI_INT, right, 51, MPI_COMM_WORLD, &rq[1]);
	m[1].req = newreq();
	E("MPI_Irecv", "world", 0, -1, left, 50, 0, 32, m[0].req);
	/* posted for 8 ints, 4 arrive: the completion reports 16 bytes */
	E("MPI_Irecv", "world", 0, -1, right, 51, 0, 32, m[1].req);
	/* the sends go out after a rank-dependent pause so tests miss */
	sleep_ms(2 + wrank);
	MPI_Issend(o1, 8, MPI_INT, right, 50, MPI_COMM_WORLD, &rq[2]);
	m[2].req = newreq();
	MPI_Isend(o2, 4, MPI_INT, left, 51, MPI_COMM_WORLD, &rq[3]);
	m[3].req = newreq();
	E("MPI_Issend", "world", 0, -1, right, 50, 32, 0, m[2].req);
	E("MPI_Isend", "world", 0, -1, left, 51, 16, 0, m[3].req);
	int done = 0, misses = 0;
	while (done < 4) {
		int out, idx[4];
		MPI_Testsome(4, rq, &out, idx, MPI_STATUSES_IGNORE);
		if (out == MPI_UNDEFINED)
			break;
		if (out == 0) {
			misses++;
			continue;
		}
		for (int j = 0; j < out; j++)
			complete("MPI_Testsome", (unsigned)j, &m[idx[j]], NULL);
		done += out;
	}
	fprintf(ef, "# misses MPI_Testsome %d\n", misses);
	add(a, 8);
	add(b, 4);

	/* Testall on a fresh pair */
	MPI_Irecv(a, 8, MPI_INT, left, 52, MPI_COMM_WORLD, &rq[0]);
	m[0] = (struct msg){"world", 1, left, 52, 32, newreq()};
	E("MPI_Irecv", "world", 0, -1, left, 52, 0, 32, m[0].req);
	sleep_ms(1 + (wrank % 2) * 3);
	MPI_Isend(o1, 8, MPI_INT, right, 52, MPI_COMM_WORLD, &rq[1]);
	m[1] = (struct msg){"world", 0, right, 52, 32, newreq()};
	E("MPI_Isend", "world", 0, -1, right, 52, 32, 0, m[1].req);
	misses = 0;
	for (;;) {
		int flag;
		MPI_Status st[2];
		MPI_Testall(2, rq, &flag, st);
		if (flag) {
			complete("MPI_Testall", 0, &m[0], &st[0]);
			complete("MPI_Testall", 1, &m[1], NULL);
			break;
		}
		misses++;
	}
	fprintf(ef, "# misses MPI_Testall %d\n", misses);
	add(a, 8);

	/* Iprobe then Test: rank 1 sends to rank 0 after 5 ms */
	if (wrank == 0) {
		int flag = 0;
		misses = 0;
		MPI_Status st;
		for (;;) {
			MPI_Iprobe(1, 60, MPI_COMM_WORLD, &flag, &st);
			if (flag)
				break;
			misses++;
		}
		E("MPI_Iprobe", "world", 0, -1, 1, 60, 0, 12, 0);
		fprintf(ef, "# misses MPI_Iprobe %d\n", misses);
		MPI_Irecv(a, 3, MPI_INT, 1, 60, MPI_COMM_WORLD, &rq[0]);
		m[0] = (struct msg){"world", 1, 1, 60, 12, newreq()};
		E("MPI_Irecv", "world", 0, -1, 1, 60, 0, 12, m[0].req);
		misses = 0;
		for (;;) {
			MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
			if (flag)
				break;
			misses++;
		}
		complete("MPI_Test", 0, &m[0], NULL);
		fprintf(ef, "# misses MPI_Test %d\n", misses);
		add(a, 3);
	} else if (wrank == 1) {
		sleep_ms(5);
		MPI_Send(o1, 3, MPI_INT, 0, 60, MPI_COMM_WORLD);
		E("MPI_Send", "world", 0, -1, 0, 60, 12, 0, 0);
	}
}

/* a Waitall over more requests than the recorder's scratch area starts
 * with (1024) with MPI_STATUSES_IGNORE: the scratch grows, so every
 * completion is recorded with its status (the any-source receives resolved
 * to this rank, 4 bytes each; before 2026-11-27 the first 1024 were
 * recorded with their posted values and the rest not at all, docs/explanation/p2p.md).
 * On Open MPI the inline sends share
 * one handle, more of them than the thread's FIFO of shared handles holds
 * (1024), so the table gets several entries of one handle and its lookups
 * walk whole chains from then on (what follows checks they still link). */
static void bigwaitall(void)
{
	enum { N = 1100 };
	static int in[N][2], out[N];
	static MPI_Request rq[2 * N];
	static unsigned id[2 * N];
	for (int i = 0; i < N; i++) {
		MPI_Irecv(in[i], 2, MPI_INT, MPI_ANY_SOURCE, 90, MPI_COMM_SELF, &rq[i]);
		id[i] = newreq();
		E("MPI_Irecv", "self", 0, -1, -1, 90, 0, 8, id[i]);
	}
	for (int i = 0; i < N; i++) {
		out[i] = wrank + i;
		MPI_Isend(&out[i], 1, MPI_INT, 0, 90, MPI_COMM_SELF, &rq[N + i]);
		id[N + i] = newreq();
		E("MPI_Isend", "self", 0, -1, wrank, 90, 4, 0, id[N + i]);
	}
	MPI_Waitall(2 * N, rq, MPI_STATUSES_IGNORE);
	for (int i = 0; i < 2 * N; i++) {
		if (i < N)
			E("MPI_Waitall", "self", (unsigned)i, -1, wrank, 90, 0, 4, id[i]);
		else
			E("MPI_Waitall", "self", (unsigned)i, -1, wrank, 90, 4, 0, id[i]);
	}
	for (int i = 0; i < N; i++)
		checksum += in[i][0];
}

/* nonblocking collectives share world's collective numbering with the
 * blocking ones */
static void nbc(void)
{
	MPI_Request rq[3];
	unsigned ids[3], seqs[3];
	MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
	ids[0] = newreq();
	seqs[0] = wseq++;
	E("MPI_Ibarrier", "world", seqs[0], -1, 0, 0, 0, 0, ids[0]);
	int v = wrank + 1, s = 0;
	MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	E("MPI_Allreduce", "world", wseq++, -1, 0, 0, 4, 4, 0);
	double d = wrank, dsum = 0;
	MPI_Iallreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
	ids[1] = newreq();
	seqs[1] = wseq++;
	E("MPI_Iallreduce", "world", seqs[1], -1, 0, 0, 8, 8, ids[1]);
	int bc[4] = {1, 2, 3, 4};
	MPI_Ibcast(bc, 4, MPI_INT, 0, MPI_COMM_WORLD, &rq[2]);
	ids[2] = newreq();
	seqs[2] = wseq++;
	E("MPI_Ibcast", "world", seqs[2], 0, 0, 0, wrank == 0 ? 16 : 0, wrank == 0 ? 0 : 16, ids[2]);
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	E("MPI_Wait", "world", 0, -1, 0, 0, 0, 0, ids[1]);
	MPI_Waitall(2, (MPI_Request[]){rq[0], rq[2]}, MPI_STATUSES_IGNORE);
	E("MPI_Waitall", "world", 0, -1, 0, 0, 0, 0, ids[0]);
	E("MPI_Waitall", "world", 1, -1, 0, 0, 0, 0, ids[2]);
	checksum = checksum * 31 + s + (long long)dsum + bc[3];
}

/* late: halo rounds with one late sender, and a late blocking send */
static void late(double ms)
{
	halo(5, ms, 2);
	if (wrank == 1) {
		sleep_ms(ms);
		int v[4] = {1, 2, 3, 4};
		MPI_Send(v, 4, MPI_INT, 0, 77, MPI_COMM_WORLD);
	} else if (wrank == 0) {
		int v[4];
		MPI_Recv(v, 4, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		add(v, 4);
	}
}

/* bench: best-of-batches cost of one Irecv + Isend + Waitall triple on
 * MPI_COMM_SELF (rank 0 prints ns per triple; run it with and without the
 * preload and subtract: docs/explanation/p2p.md) */
static void bench(int n)
{
	int a = 1, b = 0;
	double best = 1e30;
	for (int batch = 0; batch < 30; batch++) {
		double t0 = MPI_Wtime();
		for (int i = 0; i < n; i++) {
			MPI_Request rq[2];
			MPI_Irecv(&b, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &rq[0]);
			MPI_Isend(&a, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &rq[1]);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		}
		double t = (MPI_Wtime() - t0) / n;
		if (t < best)
			best = t;
	}
	if (wrank == 0)
		printf("p2p bench: %.1f ns per Irecv+Isend+Waitall triple (best of 30 x %d)\n", best * 1e9, n);
}

/* threads: MPI_THREAD_MULTIPLE, two threads per rank each running ring
 * exchanges (Irecv, Isend, Waitall) with its own tag at the same time */
static void *ring_thread(void *arg)
{
	int tag = 100 + (int)(long)arg;
	int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize;
	for (int i = 0; i < 200; i++) {
		int out[4] = {wrank, i, tag, 0}, in[4];
		MPI_Request rq[2];
		MPI_Irecv(in, 4, MPI_INT, left, tag, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(out, 4 - (i % 2), MPI_INT, right, tag, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	}
	return NULL;
}

static void threads(void)
{
	pthread_t th[2];
	for (long t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, ring_thread, (void *)t);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[2], "threads") == 0) {
		int provided = 0;
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
		MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
		MPI_Comm_size(MPI_COMM_WORLD, &wsize);
		if (provided == MPI_THREAD_MULTIPLE)
			threads();
		if (wrank == 0)
			printf("p2p threads: provided %s\n", provided == MPI_THREAD_MULTIPLE ? "multiple" : "less");
		MPI_Finalize();
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: p2p <expect-dir> [late <ms>]\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	char path[4096];
	snprintf(path, sizeof path, "%s/expect-%d.txt", argv[1], wrank);
	ef = fopen(path, "w");
	if (ef == NULL) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (argc >= 4 && strcmp(argv[2], "bench") == 0) {
		bench(atoi(argv[3]));
	} else if (argc >= 4 && strcmp(argv[2], "late") == 0) {
		late(atof(argv[3]));
	} else {
		MPI_Comm rev;
		MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &rev);
		ring_blocking();
		ring_sendrecv(rev);
		halo(3, 0, -1);
		MPI_Comm dup; /* any-tag receives on world could catch later phases' messages */
		MPI_Comm_dup(MPI_COMM_WORLD, &dup);
		anysource(rev, dup);
		MPI_Comm_free(&dup);
		persistent();
		polling();
		bigwaitall();
		nbc();
		MPI_Comm_free(&rev);
	}
	E("MPI_Reduce", "world", wseq++, 0, 0, 0, 8, wrank == 0 ? 8 : 0, 0);
	fclose(ef);
	long long all = 0;
	MPI_Reduce(&checksum, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (wrank == 0)
		printf("p2p: %d ranks, checksum %lld\n", wsize, all);
	MPI_Finalize();
	return 0;
}

/*
 * encode.c: the chunk column encoder of the recorder, in C.
 *
 * A full buffer half (72-byte gclock_event records) becomes the columns of
 * one EVENTS chunk (docs/trace-format.md; trace.Columns) here, straight
 * from the records: converting each record to a Go trace.Event first and
 * splitting that in Go cost about twice as much, and this work runs on a
 * core the application's ranks need. The bytes are exactly those of
 * trace.EncodeColumns (pmpi/encode_test.go checks both on random and
 * extreme events); Go then compresses and writes them.
 *
 * Not on the hot path: called by the Go writer with its lock held (so one
 * workspace per process suffices), on the thread that filled the buffer
 * right after the MPI call that filled it returned from PMPI (the default),
 * or on the background goroutine with GCLOCK_FLUSH_SYNC=0.
 */
#include <stdlib.h>
#include <string.h>

#include "encode.h"

/* Largest varint of each column (trace.Columns order): op uint16, comm
 * uint32, seq delta (zigzag int64), root int32, sent, recv uint64, enter
 * and duration (zigzag int64), site index uint32, peer, tag int32 (zigzag),
 * req uint32. */
static const uint8_t col_max[GCK_ENC_COLS] = {3, 5, 10, 5, 10, 10, 10, 10, 5, 5, 5, 5};

typedef struct {
	uint64_t site;
	uint32_t idx, gen;
} enc_site;

typedef struct {
	uint32_t comm, gen;
	int64_t last;
} enc_seq;

static struct {
	uint32_t cap;   /* events the columns hold */
	uint8_t *col[GCK_ENC_COLS];
	uint64_t *sites; /* cap entries */
	enc_site *stab; /* tmask+1 entries, open addressing */
	enc_seq *qtab;
	uint32_t tmask;
	uint32_t gen; /* stamps the tables' live entries (this chunk's) */
} enc;

static void enc_release(void)
{
	for (int i = 0; i < GCK_ENC_COLS; i++) {
		free(enc.col[i]);
		enc.col[i] = NULL;
	}
	free(enc.sites);
	free(enc.stab);
	free(enc.qtab);
	enc.sites = NULL;
	enc.stab = NULL;
	enc.qtab = NULL;
	enc.cap = 0;
}

/* enc_reserve sizes the workspace for n events. */
static int enc_reserve(uint32_t n)
{
	if (n <= enc.cap)
		return 0;
	enc_release();
	uint32_t t = 64;
	while (t < 2 * n)
		t *= 2;
	for (int i = 0; i < GCK_ENC_COLS; i++)
		if ((enc.col[i] = malloc((size_t)n * col_max[i])) == NULL)
			goto fail;
	enc.sites = malloc((size_t)n * sizeof(uint64_t));
	enc.stab = calloc(t, sizeof(enc_site));
	enc.qtab = calloc(t, sizeof(enc_seq));
	if (enc.sites == NULL || enc.stab == NULL || enc.qtab == NULL)
		goto fail;
	enc.tmask = t - 1;
	enc.gen = 0;
	enc.cap = n;
	return 0;
fail:
	enc_release();
	return -1;
}

/* Varints as Go's encoding/binary writes them. */
static inline uint8_t *put_u(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint8_t *put_s(uint8_t *p, int64_t v)
{
	return put_u(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline uint32_t enc_hash(uint64_t k)
{
	return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> 32);
}

int gclock_encode_columns(const gclock_event *ev, uint32_t n, gclock_enc_out *out)
{
	memset(out, 0, sizeof *out);
	if (n == 0)
		return 0;
	if (enc_reserve(n) != 0)
		return -1;
	if (++enc.gen == 0) { /* stamps wrapped: forget every entry */
		memset(enc.stab, 0, ((size_t)enc.tmask + 1) * sizeof(enc_site));
		memset(enc.qtab, 0, ((size_t)enc.tmask + 1) * sizeof(enc_seq));
		enc.gen = 1;
	}
	const uint32_t gen = enc.gen, mask = enc.tmask;
	uint8_t *p[GCK_ENC_COLS];
	for (int i = 0; i < GCK_ENC_COLS; i++)
		p[i] = enc.col[i];
	uint32_t nsites = 0;
	int any_root = 0, any_peer = 0, any_tag = 0, any_req = 0;
	uint64_t prev_exit = 0;
	enc_seq *q = NULL;   /* the previous event's communicator entry */
	enc_site *st = NULL; /* and call-site entry */
	for (uint32_t i = 0; i < n; i++) {
		const gclock_event *e = &ev[i];
		p[0] = put_u(p[0], e->op);
		p[1] = put_u(p[1], e->comm);
		/* seq - (previous seq on this comm in the chunk + 1), from -1;
		 * runs of one communicator skip the table */
		if (q == NULL || e->comm != q->comm) {
			uint32_t h = enc_hash(e->comm) & mask;
			while (enc.qtab[h].gen == gen && enc.qtab[h].comm != e->comm)
				h = (h + 1) & mask;
			q = &enc.qtab[h];
			if (q->gen != gen) {
				q->comm = e->comm;
				q->gen = gen;
				q->last = -1;
			}
		}
		p[2] = put_s(p[2], (int64_t)e->seq - (q->last + 1));
		q->last = e->seq;
		p[3] = put_s(p[3], e->root);
		p[4] = put_u(p[4], e->sent);
		p[5] = put_u(p[5], e->recv);
		/* first: EnterNS; then EnterNS - previous ExitNS (wrapping) */
		uint64_t enter = (uint64_t)e->enter_ns, exit = (uint64_t)e->exit_ns;
		p[6] = put_s(p[6], (int64_t)(i == 0 ? enter : enter - prev_exit));
		prev_exit = exit;
		p[7] = put_s(p[7], (int64_t)(exit - enter));
		if (st == NULL || e->callsite != st->site) { /* likewise call sites */
			uint32_t h = enc_hash(e->callsite) & mask;
			while (enc.stab[h].gen == gen && enc.stab[h].site != e->callsite)
				h = (h + 1) & mask;
			st = &enc.stab[h];
			if (st->gen != gen) {
				st->site = e->callsite;
				st->gen = gen;
				st->idx = nsites;
				enc.sites[nsites++] = e->callsite;
			}
		}
		p[8] = put_u(p[8], st->idx);
		p[9] = put_s(p[9], e->peer);
		p[10] = put_s(p[10], e->tag);
		p[11] = put_u(p[11], e->req);
		any_root |= e->root != 0;
		any_peer |= e->peer != 0;
		any_tag |= e->tag != 0;
		any_req |= e->req != 0;
	}
	out->n = n;
	for (int i = 0; i < GCK_ENC_COLS; i++) {
		out->col[i] = enc.col[i];
		out->len[i] = (size_t)(p[i] - enc.col[i]);
	}
	/* All-zero sparse columns are stored empty (trace.Columns). */
	if (!any_root)
		out->len[3] = 0;
	if (!any_peer)
		out->len[9] = 0;
	if (!any_tag)
		out->len[10] = 0;
	if (!any_req)
		out->len[11] = 0;
	out->sites = enc.sites;
	out->nsites = nsites;
	return 0;
}

void gclock_encode_release(void) { enc_release(); }

/*
 * encode.c: the chunk column encoder of the recorder, in C.
 *
 * A full buffer half (72-byte gclock_event records) becomes the columns of
 * one layout-4 EVENTS chunk (docs/reference/trace-format.md; trace.Columns) here,
 * straight from the records: each event is a template index (the fields it
 * shares with others: op, comm, root, sizes, call site, peer, tag) plus its
 * seq, times and request id, which halves what S2 then compresses. In C
 * because converting each record to a Go trace.Event first and splitting
 * that in Go cost about twice as much, and this work runs on a core the
 * application's ranks need. The bytes are exactly those of
 * trace.EncodeColumns (pmpi/encode_test.go checks both on random and
 * extreme events); Go then compresses and writes them.
 *
 * Not on the hot path: called by the Go writer with its lock held (so one
 * workspace per process suffices), on the thread that filled the buffer
 * right after the MPI call that filled it returned from PMPI (the default),
 * or on the background goroutine with GCLOCK_FLUSH_SYNC=0.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"

/* Largest value of each column (trace.Columns order): a varint seq delta
 * (zigzag int64), enter and duration (zigzag int64 in at most 8 bytes;
 * enc_put8 stores 8 bytes wherever the value is shorter, so the column
 * needs room for 8 at its last value too), a varint req code (zigzag of a
 * difference of two uint32, plus one), a varint template index (uint32;
 * below 2^26, at most 4 bytes, which the split stores whole wherever the
 * index is shorter: 5 leaves room), one width byte. */
static const uint8_t col_max[GCK_ENC_COLS] = {10, 8, 8, 5, 5, 1};

/* Largest template row: op (uint16), comm, root, sent, recv, site index,
 * peer, tag. */
#define GCK_TMPL_MAX (3 + 5 + 5 + 10 + 10 + 5 + 5 + 5)

/* Records read ahead of the one being split (gclock_encode_columns). */
#define GCK_ENC_AHEAD 16u

typedef struct {
	uint64_t site;
	uint32_t idx, gen;
} enc_site;

/* enc_seq predicts an event's seq (layout 3): a communicator's entry
 * for the templates of collectives and other ops with one record per
 * call (want: the comm's last seq of such an event in the chunk + 1,
 * inc 1), or a template's own for ops that write several records per call
 * (want: the template's last seq, inc 0: a call's n-th record is a
 * template of its own, its seq always n). */
typedef struct {
	uint32_t comm, gen;
	int64_t want; /* the seq expected next */
	int64_t inc;  /* added to an event's seq for the next want */
} enc_seq;

/* enc_key holds two 64-bit lanes: a template's fields are compared as
 * three of them (GCC's vector extension: SSE2 on x86-64, NEON on arm64),
 * not field by field. */
typedef uint64_t enc_key __attribute__((vector_size(16)));

/* enc_tmpl is one template: the fields an event shares with many others
 * (everything but seq, times and request id), its index and stamp. key
 * holds the record's template bytes as three lanes (enc_load), the last
 * with flags cleared (enc.mask). */
typedef struct enc_tmpl_s {
	enc_key key[3];
	struct enc_tmpl_s *next; /* the template that followed this one last; enc.none if none */
	enc_seq *q;              /* its seq prediction: its communicator's entry, or own */
	enc_seq own;             /* the prediction of a multi template */
	uint32_t gen, idx;
	uint32_t later; /* this chunk's events of it with seq > 0 */
	uint16_t multi; /* op writes several records per call (gclock_op_multi) */
	uint8_t idxlen; /* bytes of idx as a varint (1 to 4: idx < 2^26, GCLOCK_BUFFER's limit) */
	uint32_t idxenc; /* those bytes, little-endian: the split stores all four, advances idxlen */
} enc_tmpl;

/* The lanes' offsets in a record: sent and recv; recv's upper half,
 * callsite and comm (ending where seq starts: no mask needed); root, op,
 * flags, peer and tag (flags masked). */
static const size_t enc_lane[3] = {offsetof(gclock_event, sent),
				   offsetof(gclock_event, seq) - sizeof(enc_key),
				   offsetof(gclock_event, root)};
_Static_assert(offsetof(gclock_event, sent) + sizeof(enc_key) == offsetof(gclock_event, callsite) &&
		       offsetof(gclock_event, seq) - sizeof(enc_key) <= offsetof(gclock_event, callsite) &&
		       offsetof(gclock_event, callsite) + 8 == offsetof(gclock_event, comm) &&
		       offsetof(gclock_event, comm) + 4 == offsetof(gclock_event, seq) &&
		       offsetof(gclock_event, seq) + 4 == offsetof(gclock_event, root) &&
		       offsetof(gclock_event, root) + sizeof(enc_key) == offsetof(gclock_event, req),
	       "the template lanes cover sent .. comm and root .. tag, never seq");

/* gclock_op_multi: records of op with seq > 0 continue a call written as
 * several records (trace.Op.Continues; the exports' per-event limit
 * counts calls, docs/reference/trace-format.md "Footer"). */
static inline int gclock_op_multi(uint16_t op)
{
	return (op >= GCK_OP_MPI_SEND && op <= GCK_OP_MPI_REQUEST_FREE) || op == GCK_OP_MPI_WIN_POST ||
	       op == GCK_OP_MPI_WIN_START;
}

static struct {
	uint32_t cap;   /* events the columns hold */
	uint8_t *col[GCK_ENC_COLS];
	uint8_t *trows;  /* cap rows of at most GCK_TMPL_MAX bytes */
	uint64_t *sites; /* cap entries */
	enc_site *stab; /* tmask+1 entries each, open addressing */
	enc_seq *qtab;
	enc_tmpl *ttab;
	enc_tmpl **tlist; /* cap entries: this chunk's templates by index */
	uint32_t tmask;
	uint32_t gen; /* stamps the tables' live entries (this chunk's) */
	enc_key mask;  /* ones over the last lane's template fields (enc_reserve) */
	enc_tmpl none;   /* a template no record matches (op 0xFFFF) */
	/* The chunk being split: template rows written so far and counts (the
	 * lookups below keep them here, out of the split's registers). */
	uint8_t *tr;
	uint32_t ntmpl, nsites;
} enc;

/* enc_load reads lane i of a record's template bytes (unaligned). */
static inline enc_key enc_load(const gclock_event *e, int i)
{
	enc_key k;
	memcpy(&k, (const char *)e + enc_lane[i], sizeof k);
	return k;
}

static void enc_release(void)
{
	for (int i = 0; i < GCK_ENC_COLS; i++) {
		free(enc.col[i]);
		enc.col[i] = NULL;
	}
	free(enc.trows);
	free(enc.sites);
	free(enc.stab);
	free(enc.qtab);
	free(enc.ttab);
	free(enc.tlist);
	enc.tlist = NULL;
	enc.trows = NULL;
	enc.sites = NULL;
	enc.stab = NULL;
	enc.qtab = NULL;
	enc.ttab = NULL;
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
	enc.trows = malloc((size_t)n * GCK_TMPL_MAX);
	enc.sites = malloc((size_t)n * sizeof(uint64_t));
	enc.stab = calloc(t, sizeof(enc_site));
	enc.qtab = calloc(t, sizeof(enc_seq));
	enc.ttab = calloc(t, sizeof(enc_tmpl));
	enc.tlist = malloc((size_t)n * sizeof(enc_tmpl *));
	if (enc.trows == NULL || enc.sites == NULL || enc.stab == NULL || enc.qtab == NULL ||
	    enc.ttab == NULL || enc.tlist == NULL)
		goto fail;
	/* The mask, endian-neutral: a record with ones in its template
	 * fields. */
	gclock_event m;
	memset(&m, 0, sizeof m);
	m.root = m.peer = m.tag = -1;
	m.op = UINT16_MAX;
	memcpy(&enc.mask, (const char *)&m + enc_lane[2], sizeof enc.mask);
	memset(&m, 0, sizeof m);
	m.op = UINT16_MAX; /* GCK_OP_COUNT < 0xFFFF: no record has it */
	memset(&enc.none, 0, sizeof enc.none);
	for (int i = 0; i < 3; i++)
		enc.none.key[i] = enc_load(&m, i);
	enc.none.next = &enc.none;
	enc.tmask = t - 1;
	enc.gen = 0;
	enc.cap = n;
	return 0;
fail:
	enc_release();
	return -1;
}

/* Varints as Go's encoding/binary writes them. One and two bytes (the
 * template index, the seq difference, most gaps and durations of a loop)
 * are written without the loop: two stores and no backward branch, about
 * three instructions fewer per two-byte varint (make bench section 10). */
static inline uint8_t *put_u(uint8_t *p, uint64_t v)
{
	if (GCK_LIKELY(v < 0x80)) {
		p[0] = (uint8_t)v;
		return p + 1;
	}
	if (GCK_LIKELY(v < 0x4000)) {
		p[0] = (uint8_t)v | 0x80;
		p[1] = (uint8_t)(v >> 7);
		return p + 2;
	}
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	p[0] = (uint8_t)v;
	return p + 1;
}

static inline uint8_t *put_s(uint8_t *p, int64_t v)
{
	return put_u(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* enc_zz is v zigzag-coded (small magnitudes, small values). */
static inline uint64_t enc_zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* enc_wcode is the number of bytes that hold v, minus one: 0 to 7 (0
 * takes one byte), what layout 3's tw nibbles hold. The highest set bit's
 * index (63 ^ clz, which the compiler makes one bsr; 63 - clz costs two
 * more) and a shift, no branch. */
static inline unsigned enc_wcode(uint64_t v) { return (unsigned)(__builtin_clzll(v | 1) ^ 63) >> 3; }

/* enc_put8 stores all 8 bytes of v little-endian at p (the column has
 * room, col_max); the caller advances p by enc_wcode(v) + 1 only, so the
 * next value overwrites the high zero bytes. One store whatever v's
 * length, where a varint takes a branch and a store per 7 bits (layout
 * 3's timing columns, D47). */
static inline void enc_put8(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, sizeof v);
}

/* enc_put4 stores the 4 bytes of v little-endian at p (enc_put8's way,
 * for the template index). */
static inline void enc_put4(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, sizeof v);
}

static inline uint32_t enc_hash(uint64_t k)
{
	return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> 32);
}

/* tmpl_hash mixes a record's template fields (equal fields, equal hash;
 * the table compares them all). */
static inline uint32_t tmpl_hash(const gclock_event *e)
{
	uint64_t a = e->callsite ^ ((uint64_t)e->op << 48) ^ ((uint64_t)(uint32_t)e->peer << 16) ^
		     ((uint64_t)(uint32_t)e->root << 40);
	uint64_t b = e->sent ^ (e->recv << 24) ^ ((uint64_t)(uint32_t)e->tag << 32) ^ e->comm;
	return (uint32_t)(((a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full)) >> 32);
}

/* tmpl_is reports whether e has t's template fields; m is enc.mask (in a
 * register, passed by value, in the split's loop). */
static inline int tmpl_is(const enc_tmpl *t, const gclock_event *e, enc_key m)
{
	const enc_key x = (enc_load(e, 0) ^ t->key[0]) | (enc_load(e, 1) ^ t->key[1]) |
			  ((enc_load(e, 2) ^ t->key[2]) & m);
	return (x[0] | x[1]) == 0;
}

/* site_index returns the call site's index in the chunk's dictionary,
 * adding it on first sight. */
static inline uint32_t site_index(uint64_t site)
{
	const uint32_t gen = enc.gen, mask = enc.tmask;
	uint32_t h = enc_hash(site) & mask;
	while (enc.stab[h].gen == gen && enc.stab[h].site != site)
		h = (h + 1) & mask;
	enc_site *st = &enc.stab[h];
	if (st->gen != gen) {
		st->site = site;
		st->gen = gen;
		st->idx = enc.nsites;
		enc.sites[enc.nsites++] = site;
	}
	return st->idx;
}

/* seq_find returns comm's entry of the sequence table, entering it (last
 * seq -1, so want 0) on first sight. */
static enc_seq *seq_find(uint32_t comm)
{
	const uint32_t gen = enc.gen, mask = enc.tmask;
	uint32_t k = enc_hash(comm) & mask;
	while (enc.qtab[k].gen == gen && enc.qtab[k].comm != comm)
		k = (k + 1) & mask;
	enc_seq *q = &enc.qtab[k];
	if (q->gen != gen) {
		q->comm = comm;
		q->gen = gen;
		q->want = 0;
		q->inc = 1;
	}
	return q;
}

/* tmpl_find returns e's template from the table, entering it (and its
 * row) on first sight; prev, the previous event's template, learns it as
 * its successor (the first event's prev is a stand-in). Out of line: the
 * split's loop tries the predicted template first and keeps its registers
 * for that. */
static __attribute__((noinline)) enc_tmpl *tmpl_find(const gclock_event *e, enc_tmpl *prev)
{
	const uint32_t gen = enc.gen, mask = enc.tmask;
	uint32_t h = tmpl_hash(e) & mask;
	while (enc.ttab[h].gen == gen && !tmpl_is(&enc.ttab[h], e, enc.mask))
		h = (h + 1) & mask;
	enc_tmpl *t = &enc.ttab[h];
	if (t->gen != gen) { /* a new template: its row, in first-use order */
		t->key[0] = enc_load(e, 0);
		t->key[1] = enc_load(e, 1);
		t->key[2] = enc_load(e, 2) & enc.mask;
		t->multi = (uint16_t)gclock_op_multi(e->op);
		t->gen = gen;
		t->later = 0;
		t->next = &enc.none;
		if (t->multi) {
			t->own.want = 0;
			t->own.inc = 0;
			t->q = &t->own;
		} else {
			t->q = seq_find(e->comm);
		}
		t->idx = enc.ntmpl;
		uint8_t ib[10] = {0};
		t->idxlen = (uint8_t)(put_u(ib, t->idx) - ib);
		t->idxenc = (uint32_t)ib[0] | (uint32_t)ib[1] << 8 | (uint32_t)ib[2] << 16 | (uint32_t)ib[3] << 24;
		enc.tlist[enc.ntmpl++] = t;
		uint8_t *tr = enc.tr;
		tr = put_u(tr, e->op);
		tr = put_u(tr, e->comm);
		tr = put_s(tr, e->root);
		tr = put_u(tr, e->sent);
		tr = put_u(tr, e->recv);
		tr = put_u(tr, site_index(e->callsite));
		tr = put_s(tr, e->peer);
		tr = put_s(tr, e->tag);
		enc.tr = tr;
	}
	prev->next = t;
	return t;
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
		memset(enc.ttab, 0, ((size_t)enc.tmask + 1) * sizeof(enc_tmpl));
		enc.gen = 1;
	}
	/* Column cursors in locals, and the record's fields read once into
	 * locals: a byte store through a uint8_t pointer may alias anything, so
	 * fields read after one would be read again (and spilled to the stack)
	 * by the compiler. */
	uint8_t *restrict pseq = enc.col[GCK_ENC_SEQ], *restrict pent = enc.col[GCK_ENC_ENTER],
			  *restrict pdur = enc.col[GCK_ENC_DUR], *restrict preq = enc.col[GCK_ENC_REQ],
			  *restrict ptmpl = enc.col[GCK_ENC_TMPL], *restrict ptw = enc.col[GCK_ENC_TW];
	enc.tr = enc.trows;
	enc.ntmpl = enc.nsites = 0;
	uint64_t prev_exit = 0; /* the first event's gap is its EnterNS */
	/* the previous event's enter; with prev_exit the times a record of the
	 * same call shares (layout 4, GCK_TW_SAME). The first event never
	 * shares: its enter is compared with ~enter. */
	uint64_t prev_enter = ~(uint64_t)ev[0].enter_ns;
	uint32_t prev_req = 0;  /* stays 0 while every req is 0 */
	const enc_key mask = enc.mask;
	enc_tmpl start = {.next = &enc.none}; /* predicts nothing */
	enc_tmpl *prev = &start; /* the previous event's template */
	for (const gclock_event *restrict e = ev, *end = ev + n; e != end; e++) {
		/* A half fills over thousands of MPI calls whose own data pushes
		 * it out of the core's caches: ask for both lines of the record
		 * GCK_ENC_AHEAD on (perf put 30 % of the split's samples on its
		 * first load of each record in a 2-rank MPI_Allreduce run). A
		 * prefetch never faults, so the last records ask past the end. */
		const char *ahead = (const char *)((uintptr_t)e + GCK_ENC_AHEAD * sizeof *e);
		__builtin_prefetch(ahead, 0, 3);
		__builtin_prefetch(ahead + sizeof *e - 1, 0, 3);
		const uint64_t enter = (uint64_t)e->enter_ns, exit = (uint64_t)e->exit_ns;
		const uint32_t seq = e->seq;
		/* A program repeats its sequence of calls: the template that
		 * followed the previous event's last time is tried first. */
		enc_tmpl *t;
		if (GCK_LIKELY(tmpl_is(prev->next, e, mask)))
			t = prev->next;
		else
			t = tmpl_find(e, prev);
		prev = t;
		t->later += seq > 0; /* summed per template after the loop */
		/* the index's varint, made when the template was (tmpl_find):
		 * one store and an advance, no length test */
		enc_put4(ptmpl, t->idxenc);
		ptmpl += t->idxlen;
		/* seq - the seq expected: the comm's previous one + 1 (from -1),
		 * or a multi template's previous one (from 0) */
		enc_seq *const q = t->q;
		const int64_t sd = (int64_t)seq - q->want;
		q->want = (int64_t)seq + q->inc;
		/* layout 3: only a difference other than 0 is written, flagged
		 * in the widths byte (GCK_TW_SEQ) */
		unsigned flag = 0;
		if (GCK_UNLIKELY(sd != 0)) {
			pseq = put_s(pseq, sd);
			flag = GCK_TW_SEQ;
		}
		/* Layout 4: a record with the previous one's enter and exit (the
		 * later records of one call: a MPI_Waitall's completions) stores
		 * no timing value, only GCK_TW_SAME. A branch: the same written
		 * without one (values stored, cursors not moved) counted 859
		 * instructions per halo step against 721 (D91). */
		if (((enter ^ prev_enter) | (exit ^ prev_exit)) == 0) {
			*ptw++ = (uint8_t)(flag | GCK_TW_SAME);
		} else {
			/* first: EnterNS; then EnterNS - previous ExitNS
			 * (wrapping); each in as many bytes as it needs, the two
			 * widths in one byte */
			const uint64_t g = enc_zz((int64_t)(enter - prev_exit)), d = enc_zz((int64_t)(exit - enter));
			const unsigned wg = enc_wcode(g), wd = enc_wcode(d);
			enc_put8(pent, g);
			pent += wg + 1;
			enc_put8(pdur, d);
			pdur += wd + 1;
			*ptw++ = (uint8_t)(wg | flag | wd << 4);
			prev_enter = enter;
			prev_exit = exit;
		}
		/* 0: no request; else 1 + zigzag(req - previous non-zero req) */
		const uint32_t req = e->req;
		if (req == 0) {
			*preq++ = 0;
		} else {
			int64_t d = (int64_t)req - (int64_t)prev_req;
			preq = put_u(preq, (((uint64_t)d << 1) ^ (uint64_t)(d >> 63)) + 1);
			prev_req = req;
		}
	}
	const int any_req = prev_req != 0;
	uint32_t conts = 0; /* records that continue a call */
	for (uint32_t i = 0; i < enc.ntmpl; i++)
		if (enc.tlist[i]->multi)
			conts += enc.tlist[i]->later;
	uint8_t *p[GCK_ENC_COLS];
	p[GCK_ENC_SEQ] = pseq;
	p[GCK_ENC_ENTER] = pent;
	p[GCK_ENC_DUR] = pdur;
	p[GCK_ENC_REQ] = preq;
	p[GCK_ENC_TMPL] = ptmpl;
	p[GCK_ENC_TW] = ptw;
	out->n = n;
	out->calls = n - conts;
	for (int i = 0; i < GCK_ENC_COLS; i++) {
		out->col[i] = enc.col[i];
		out->len[i] = (size_t)(p[i] - enc.col[i]);
	}
	/* An all-zero req column is stored empty (trace.Columns); the seq
	 * column is empty when no difference was written. */
	if (!any_req)
		out->len[GCK_ENC_REQ] = 0;
	out->templates = enc.trows;
	out->templates_len = (size_t)(enc.tr - enc.trows);
	out->ntemplates = enc.ntmpl;
	out->sites = enc.sites;
	out->nsites = enc.nsites;
	return 0;
}

int gclock_encode_prepare(uint32_t n)
{
	if (n == 0)
		return 0;
	if (enc_reserve(n) != 0)
		return -1;
	for (int i = 0; i < GCK_ENC_COLS; i++)
		memset(enc.col[i], 0, (size_t)n * col_max[i]);
	memset(enc.trows, 0, (size_t)n * GCK_TMPL_MAX);
	return 0;
}

void gclock_encode_release(void) { enc_release(); }

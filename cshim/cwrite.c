/*
 * cwrite.c: a full buffer half written to the rank file in C, on the thread
 * that filled it, without a call into Go (docs/explanation/recorder.md "Flush pauses",
 * docs/explanation/decisions.md "Chunks written in C").
 *
 * The Go half (pmpi, trace.Writer) owns the rank file: it creates it,
 * writes the header, communicators, epochs and footer, and reopens it when
 * the application took its descriptor. Once it arms this writer
 * (gclock_cw_setup, then trace.Writer.SetShared, whose Unlock publishes the
 * descriptor, the file's identity, its end and the counts), an events frame
 * is made here: the columns (encode.c), the chunk array in msgpack, zstd
 * (libzstd, opened with dlopen: on every Debian system, dpkg pre-depends on
 * it) with the two timing columns raw after the block (flags 5, "tail"),
 * chunk layout 4 (format 6: the timing columns' values in as many bytes
 * as each needs, their widths a column of their own, none for a record
 * with the times of the one before it), CRC-32C, the SPAN frame,
 * one write(). Both writers take cw.lock around a frame, so they append in
 * turn and their counts add up.
 *
 * Whatever is not the common case goes to Go as before (gclock_go.flush):
 * the writer not armed (not set up, GCLOCK_FLUSH_SYNC=0, GCLOCK_CWRITE=0,
 * closed, failed), freed communicators' frames waiting for the next frame,
 * the descriptor no longer naming the file, the file size limit near, a
 * half of more than trace.MaxChunkEvents. A failed write disarms this
 * writer and leaves its errno for Go, which reports it as before.
 *
 * The column encoder's one workspace is used here only with the writer
 * armed and cw.lock held, and by Go (pmpi's flushLocked) only after it
 * disarmed the writer under that lock, holding its own.
 *
 * Part of the C shim; compiled in the unity build cshim/libgclock.c after
 * encode.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "encode.h"

/* Frame kinds and flags (trace/frame.go). */
enum { CW_KIND_EVENTS = 2, CW_KIND_SPAN = 6 };
enum { CW_FLAG_ZSTD = 1, CW_FLAG_TAIL = 4 };
#define CW_FRAME_HDR 12
#define CW_SPAN_PAYLOAD 24
#define CW_MAX_CHUNK (1u << 20)		   /* trace.MaxChunkEvents */
#define CW_SIZE_RESERVE ((int64_t)64 << 10) /* trace.SizeLimitReserve */
#define CW_MAX_PAYLOAD ((size_t)1 << 28)   /* trace.MaxFramePayload */

/* libzstd's stable API (zstd.h), called through pointers found with dlsym. */
typedef struct ZSTD_CCtx_s ZSTD_CCtx;
static struct {
	ZSTD_CCtx *(*create)(void);
	size_t (*compress)(ZSTD_CCtx *, void *, size_t, const void *, size_t, int);
	size_t (*bound)(size_t);
	unsigned (*is_error)(size_t);
} zs;

static gclock_cw_state gclock_cw;

static struct {
	int ready;	/* gclock_cw_setup succeeded */
	int level, tail;
	ZSTD_CCtx *cctx;
	uint8_t *mp;	/* the chunk array, before compression */
	size_t mp_cap;
	uint8_t *frame; /* the frames as written */
	size_t frame_cap;
} cw;

/* ---- the lock -------------------------------------------------------------
 * A word, not a pthread mutex: Go takes and releases it in two cgo calls,
 * which may run on two different threads. Held for one frame; a waiter
 * yields its core. */
static void cw_lock(void)
{
	for (unsigned spins = 0; __atomic_exchange_n(&gclock_cw.lock, 1, __ATOMIC_ACQUIRE) != 0; spins++) {
		if (spins < 64) {
			sched_yield();
		} else {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
}

static void cw_unlock(void) { __atomic_store_n(&gclock_cw.lock, 0, __ATOMIC_RELEASE); }

GCK_EXPORT gclock_cw_state *gclock_cw_lock(void)
{
	cw_lock();
	return &gclock_cw;
}

GCK_EXPORT void gclock_cw_unlock(void) { cw_unlock(); }

/* gclock_cw_disarm: from now on full halves go to Go (pmpi's flushLocked,
 * before it uses the column encoder itself; trace.Writer's next frame arms
 * it again). */
GCK_EXPORT void gclock_cw_disarm(void)
{
	cw_lock();
	gclock_cw.armed = 0;
	cw_unlock();
}

/* ---- CRC-32C (Castagnoli), as trace/frame.go ----------------------------- */
static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc_soft(uint32_t c, const uint8_t *p, size_t n)
{
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		v ^= c;
		c = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^ crc_table[5][(v >> 16) & 0xff] ^
		    crc_table[4][(v >> 24) & 0xff] ^ crc_table[3][(v >> 32) & 0xff] ^
		    crc_table[2][(v >> 40) & 0xff] ^ crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
	}
	while (n--)
		c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t c64 = c;
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c64 = __builtin_ia32_crc32di(c64, v);
	}
	c = (uint32_t)c64;
	while (n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

static int crc_use_hw;

static uint32_t crc32c(const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
	if (crc_use_hw)
		return ~crc_hw(~0u, p, n);
#endif
	return ~crc_soft(~0u, p, n);
}

/* ---- bytes ---------------------------------------------------------------- */
static inline uint8_t *put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
	return p + 2;
}

static inline uint8_t *put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 4;
}

static inline uint8_t *put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 8;
}

static inline uint8_t *put_uvarint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* msgpack: the smallest form of each value (trace's reader takes any). */
static inline uint8_t *mp_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *mp_uint(uint8_t *p, uint64_t v)
{
	if (v < 0x80) {
		*p++ = (uint8_t)v;
		return p;
	}
	if (v <= 0xff) {
		*p++ = 0xcc;
		return mp_be(p, v, 1);
	}
	if (v <= 0xffff) {
		*p++ = 0xcd;
		return mp_be(p, v, 2);
	}
	if (v <= 0xffffffffu) {
		*p++ = 0xce;
		return mp_be(p, v, 4);
	}
	*p++ = 0xcf;
	return mp_be(p, v, 8);
}

static uint8_t *mp_bin(uint8_t *p, const uint8_t *b, size_t n)
{
	if (n <= 0xff) {
		*p++ = 0xc4;
		p = mp_be(p, n, 1);
	} else if (n <= 0xffff) {
		*p++ = 0xc5;
		p = mp_be(p, n, 2);
	} else {
		*p++ = 0xc6;
		p = mp_be(p, n, 4);
	}
	if (n > 0)
		memcpy(p, b, n);
	return p + n;
}

static uint8_t *mp_array(uint8_t *p, uint32_t n)
{
	if (n < 16) {
		*p++ = (uint8_t)(0x90 | n);
		return p;
	}
	if (n <= 0xffff) {
		*p++ = 0xdc;
		return mp_be(p, n, 2);
	}
	*p++ = 0xdd;
	return mp_be(p, n, 4);
}

/* grow makes *buf hold at least n bytes; 0 when it cannot. */
static int grow(uint8_t **buf, size_t *cap, size_t n)
{
	if (*cap >= n)
		return 1;
	size_t c = *cap ? *cap : 4096;
	while (c < n)
		c *= 2;
	uint8_t *b = realloc(*buf, c);
	if (b == NULL)
		return 0;
	*buf = b;
	*cap = c;
	return 1;
}

/* pack writes the chunk array (trace's chunkPayload, or chunkPayloadTail
 * with the timing columns' lengths in their elements) into cw.mp; returns
 * its length, 0 when out of memory. */
static size_t pack(const gclock_enc_out *o)
{
	size_t need = 64 + o->templates_len + 9 * (size_t)o->nsites;
	for (int i = 0; i < GCK_ENC_COLS; i++)
		need += o->len[i] + 5;
	if (!grow(&cw.mp, &cw.mp_cap, need))
		return 0;
	uint8_t *p = cw.mp;
	p = mp_array(p, 18);
	p = mp_uint(p, 4); /* layout */
	p = mp_uint(p, o->n);
	p = mp_bin(p, NULL, 0); /* op */
	p = mp_bin(p, NULL, 0); /* comm */
	p = mp_bin(p, o->col[GCK_ENC_SEQ], o->len[GCK_ENC_SEQ]);
	p = mp_bin(p, NULL, 0); /* root */
	p = mp_bin(p, NULL, 0); /* sent */
	p = mp_bin(p, NULL, 0); /* recv */
	if (cw.tail) {
		p = mp_uint(p, o->len[GCK_ENC_ENTER]);
		p = mp_uint(p, o->len[GCK_ENC_DUR]);
	} else {
		p = mp_bin(p, o->col[GCK_ENC_ENTER], o->len[GCK_ENC_ENTER]);
		p = mp_bin(p, o->col[GCK_ENC_DUR], o->len[GCK_ENC_DUR]);
	}
	p = mp_bin(p, NULL, 0); /* site */
	p = mp_array(p, o->nsites);
	for (uint32_t i = 0; i < o->nsites; i++)
		p = mp_uint(p, o->sites[i]);
	p = mp_bin(p, NULL, 0); /* peer */
	p = mp_bin(p, NULL, 0); /* tag */
	p = mp_bin(p, o->col[GCK_ENC_REQ], o->len[GCK_ENC_REQ]);
	p = mp_bin(p, o->col[GCK_ENC_TMPL], o->len[GCK_ENC_TMPL]);
	p = mp_bin(p, o->templates, o->templates_len);
	p = mp_bin(p, o->col[GCK_ENC_TW], o->len[GCK_ENC_TW]);
	return (size_t)(p - cw.mp);
}

static void frame_header(uint8_t *h, uint8_t kind, uint8_t flags, const uint8_t *payload, uint32_t len)
{
	uint8_t t[10];
	h[0] = kind;
	h[1] = flags;
	put_le32(h + 4, len);
	put_le32(h + 8, crc32c(payload, len));
	t[0] = h[0], t[1] = h[1];
	memcpy(t + 2, h + 4, 8);
	put_le16(h + 2, (uint16_t)crc32c(t, sizeof t));
}

/* chunk_span is the first and last entry time of a half, as pmpi's
 * cColumns takes them: a half that filled inside a call with several
 * records starts with the flush record, and the call's remaining records,
 * which entered earlier, follow it. */
static void chunk_span(const gclock_event *ev, uint32_t n, int64_t *first, int64_t *last)
{
	int64_t f = ev[0].enter_ns;
	for (uint32_t i = 1; i < n && ev[i].enter_ns < ev[0].enter_ns; i++)
		f = ev[i].enter_ns < f ? ev[i].enter_ns : f;
	int64_t l = ev[n - 1].enter_ns;
	*first = f;
	*last = l > f ? l : f;
}

/* encode_frames makes the EVENTS and SPAN frames of ev[0..n) in cw.frame;
 * returns their length, 0 when it cannot (out of memory, compression
 * failed, payload too large). *calls gets the events that start a call. */
static size_t encode_frames(const gclock_event *ev, uint32_t n, uint32_t chunk, uint32_t *calls)
{
	gclock_enc_out o;
	if (gclock_encode_columns(ev, n, &o) != 0)
		return 0;
	size_t mplen = pack(&o);
	if (mplen == 0)
		return 0;
	size_t bound = zs.bound(mplen);
	size_t tail = cw.tail ? o.len[GCK_ENC_ENTER] + o.len[GCK_ENC_DUR] : 0;
	size_t cap = CW_FRAME_HDR + 10 + bound + tail + CW_FRAME_HDR + CW_SPAN_PAYLOAD;
	if (!grow(&cw.frame, &cw.frame_cap, cap))
		return 0;
	uint8_t *payload = cw.frame + CW_FRAME_HDR;
	uint8_t *p = payload;
	size_t blk;
	if (cw.tail) {
		/* uvarint(block length) comes first: compress after room for the
		 * longest one, then move the block down if its length is shorter. */
		uint8_t *at = p + 10;
		blk = zs.compress(cw.cctx, at, bound, cw.mp, mplen, cw.level);
		if (zs.is_error(blk))
			return 0;
		uint8_t lenb[10];
		size_t k = (size_t)(put_uvarint(lenb, blk) - lenb);
		memcpy(p, lenb, k);
		memmove(p + k, at, blk);
		p += k + blk;
		memcpy(p, o.col[GCK_ENC_ENTER], o.len[GCK_ENC_ENTER]);
		p += o.len[GCK_ENC_ENTER];
		memcpy(p, o.col[GCK_ENC_DUR], o.len[GCK_ENC_DUR]);
		p += o.len[GCK_ENC_DUR];
	} else {
		blk = zs.compress(cw.cctx, p, bound, cw.mp, mplen, cw.level);
		if (zs.is_error(blk))
			return 0;
		p += blk;
	}
	size_t plen = (size_t)(p - payload);
	if (plen > CW_MAX_PAYLOAD)
		return 0;
	frame_header(cw.frame, CW_KIND_EVENTS, (uint8_t)(CW_FLAG_ZSTD | (cw.tail ? CW_FLAG_TAIL : 0)), payload,
		     (uint32_t)plen);
	/* SPAN: chunk index, events, first and last entry time */
	int64_t first, last;
	chunk_span(ev, n, &first, &last);
	uint8_t *s = p + CW_FRAME_HDR;
	put_le32(s, chunk);
	put_le32(s + 4, n);
	put_le64(s + 8, (uint64_t)first);
	put_le64(s + 16, (uint64_t)last);
	frame_header(p, CW_KIND_SPAN, 0, s, CW_SPAN_PAYLOAD);
	*calls = o.calls;
	return plen + CW_FRAME_HDR + CW_FRAME_HDR + CW_SPAN_PAYLOAD;
}

/* fsize_room says whether the file size limit leaves an events frame of
 * len bytes at off its room (trace.Writer.checkSizeLimit). */
static int fsize_room(int64_t off, size_t len)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1;
	return off + (int64_t)len <= (int64_t)rl.rlim_cur - CW_SIZE_RESERVE;
}

/* write_all writes len bytes; returns 0, or the errno of the failure with
 * *done the bytes that were written. */
static int write_all(int fd, const uint8_t *p, size_t len, size_t *done)
{
	*done = 0;
	while (*done < len) {
		ssize_t k = write(fd, p + *done, len - *done);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (k == 0)
			return EIO;
		*done += (size_t)k;
	}
	return 0;
}

/* cw_write writes ev[0..n) as one chunk; 1 when it did, 0 when Go must
 * (not armed, or a case Go handles: see the top of this file). */
static int cw_write(const gclock_event *ev, uint32_t n)
{
	if (!__atomic_load_n(&gclock_cw.armed, __ATOMIC_RELAXED) || n > CW_MAX_CHUNK)
		return 0;
	cw_lock();
	gclock_cw_state *s = &gclock_cw;
	if (!s->armed) {
		cw_unlock();
		return 0;
	}
	uint32_t calls = 0;
	size_t len = encode_frames(ev, n, s->chunks, &calls);
	struct stat st;
	if (len == 0 || fstat(s->fd, &st) != 0 || (uint64_t)st.st_dev != s->dev || (uint64_t)st.st_ino != s->ino ||
	    !fsize_room(s->off, len)) {
		s->armed = 0; /* Go finds out why, and arms again if it can */
		cw_unlock();
		return 0;
	}
	size_t done;
	int e = write_all(s->fd, cw.frame, len, &done);
	s->off += (int64_t)done;
	if (e != 0) {
		s->err = e;
		s->err_len = (int64_t)len;
		s->armed = 0;
		cw_unlock();
		return 0; /* Go reports it */
	}
	s->chunks++;
	s->events += n;
	s->calls += calls;
	cw_unlock();
	return 1;
}

/* gclock_cw_flush writes a full half and marks it written, or hands it to
 * Go (which does both). */
void gclock_cw_flush(gclock_event *ev, int64_t n, uint32_t *state)
{
	if (n > 0 && n <= (int64_t)CW_MAX_CHUNK && cw_write(ev, (uint32_t)n)) {
		__atomic_store_n(state, GCK_LIVE_WRITTEN, __ATOMIC_RELEASE);
		return;
	}
	gclock_go.flush(ev, n, state);
}

/* gclock_cw_setup opens libzstd and prepares the writer for halves of up
 * to events records (workspace allocated and touched, one compression run,
 * so the first real flush does not pay for it): level is zstd's, tail
 * whether the timing columns go raw after the block. Returns NULL, or why
 * the C writer cannot be used (Go then writes every chunk). Called by Go
 * in MPI_Init, before it arms the writer. */
GCK_EXPORT const char *gclock_cw_setup(int level, int tail, uint32_t events)
{
	if (!cw.ready) {
		/* GCLOCK_TEST_FAULT=nozstd: a system without it (tests/). */
		const char *fault = getenv("GCLOCK_TEST_FAULT");
		int missing = fault != NULL && strcmp(fault, "nozstd") == 0;
		void *h = dlopen(missing ? "libzstd-gclock-test-missing.so.1" : "libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
		if (h == NULL)
			return "libzstd.so.1 cannot be loaded";
		*(void **)&zs.create = dlsym(h, "ZSTD_createCCtx");
		*(void **)&zs.compress = dlsym(h, "ZSTD_compressCCtx");
		*(void **)&zs.bound = dlsym(h, "ZSTD_compressBound");
		*(void **)&zs.is_error = dlsym(h, "ZSTD_isError");
		if (zs.create == NULL || zs.compress == NULL || zs.bound == NULL || zs.is_error == NULL)
			return "libzstd.so.1 lacks ZSTD_compressCCtx";
		cw.cctx = zs.create();
		if (cw.cctx == NULL)
			return "ZSTD_createCCtx failed";
		crc_init();
#if defined(__x86_64__)
		__builtin_cpu_init();
		crc_use_hw = __builtin_cpu_supports("sse4.2");
#endif
		cw.ready = 1;
	}
	cw.level = level;
	cw.tail = tail != 0;
	/* A loop's chunk array takes a few bytes per event, its frames a few
	 * more (docs/reference/trace-format.md); grow() takes more if a chunk needs it. */
	size_t n = (size_t)(events < CW_MAX_CHUNK ? events : CW_MAX_CHUNK);
	if (!grow(&cw.mp, &cw.mp_cap, 8 * n + 4096) || !grow(&cw.frame, &cw.frame_cap, 12 * n + 4096))
		return "out of memory";
	memset(cw.mp, 0, cw.mp_cap);
	memset(cw.frame, 0, cw.frame_cap);
	size_t warm = 4 * n + 64;
	if (warm > cw.mp_cap)
		warm = cw.mp_cap;
	size_t r = zs.compress(cw.cctx, cw.frame, cw.frame_cap, cw.mp, warm, level);
	if (zs.is_error(r))
		return "zstd cannot compress";
	return NULL;
}

/* gclock_cw_write_test: cw_write for pmpi's tests (1: written in C). */
GCK_EXPORT int gclock_cw_write_test(const gclock_event *ev, uint32_t n) { return n > 0 && cw_write(ev, n); }

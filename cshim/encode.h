/*
 * encode.h: the recorder's chunk column encoder (encode.c), called from Go
 * (pmpi/encode.go) when a buffer half is written.
 */
#ifndef GCK_ENCODE_H
#define GCK_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "gclock.h"

/* Per-event columns of one layout-4 chunk (docs/reference/trace-format.md), in
 * trace.Columns order: seq (the differences other than 0 only), enter and
 * dur (each value in as many little-endian bytes as its width code in tw
 * says; none for an event with GCK_TW_SAME), req, tmpl, tw (one byte per
 * event: the enter value's width minus one in bits 0-2, GCK_TW_SEQ when
 * its seq difference is in the seq column, dur's width minus one in bits
 * 4-6, GCK_TW_SAME when it has the times of the event before it). */
enum { GCK_ENC_SEQ, GCK_ENC_ENTER, GCK_ENC_DUR, GCK_ENC_REQ, GCK_ENC_TMPL, GCK_ENC_TW, GCK_ENC_COLS };

/* GCK_TW_SEQ marks, in an event's tw byte, a seq difference other than 0
 * (the next value of the seq column). */
#define GCK_TW_SEQ 0x08u

/* GCK_TW_SAME marks, in an event's tw byte (layout 4), an event with the
 * enter and exit times of the event before it: it has no value in the
 * enter and dur columns, and its width bits are 0 (D91). */
#define GCK_TW_SAME 0x80u

/* One encoded chunk. The memory is the encoder's, valid until its next
 * call; a column length of 0 is an empty (all-zero) column. templates
 * holds ntemplates rows of 8 varints (op, comm, root, sent, recv, site
 * index, peer, tag), sites the nsites distinct call sites. */
typedef struct gclock_enc_out {
	uint32_t n;
	uint32_t calls; /* events that start a call (trace.Columns.Calls) */
	uint32_t nsites;
	uint32_t ntemplates;
	uint8_t *col[GCK_ENC_COLS];
	size_t len[GCK_ENC_COLS];
	uint8_t *templates;
	size_t templates_len;
	uint64_t *sites;
} gclock_enc_out;

/* gclock_encode_columns encodes ev[0..n) into *out. Returns 0, or -1 when
 * its workspace cannot be allocated. Callers serialise (the Go writer's
 * lock). */
GCK_EXPORT int gclock_encode_columns(const gclock_event *ev, uint32_t n, gclock_enc_out *out);

/* gclock_encode_prepare sizes the workspace for n events and touches its
 * column and template-row memory (pmpi's prepareFlush, in MPI_Init), so the
 * first real split does not fault it in. Returns 0, or -1 when it cannot be
 * allocated. Callers serialise, as for gclock_encode_columns. */
GCK_EXPORT int gclock_encode_prepare(uint32_t n);

/* gclock_encode_release frees the workspace. */
void gclock_encode_release(void);

#endif

/*
 * hotpath.h: what every generated wrapper does per call besides its rule:
 * read the timer, find the communicator's slot, write a collective's
 * event, mark the call in flight. Defined in hotpath.c, static inline:
 * only for files of the one translation unit libgclock.c (a file outside
 * it, such as the Go half's cgo code, includes gclock.h alone).
 */
#ifndef GCK_HOTPATH_H
#define GCK_HOTPATH_H

#include <time.h>

#include "gclock.h"

/* ---- the timer (the slow path and the set-up: timer.c) -------------------- */

/* gclock_rdtsc reads the TSC; gclock_clock a clock_gettime clock in ns;
 * gclock_timer_raw_inline the configured timer without injection (the
 * calibration and the slow path, timer.c). */
static inline uint64_t gclock_rdtsc(void);
static inline int64_t gclock_clock(clockid_t id);
static inline int64_t gclock_timer_raw_inline(void);

/* gclock_now reads the configured timer, with GCLOCK_FAKE_CLOCK applied:
 * fake(t) = t + offset_ns + drift_ppm*1e-6*t (trace.Injection). The TSC
 * without injection (the default timer where the kernel's clocksource is
 * the TSC) is read inline; everything else in gclock_now_slow. */
static inline int64_t gclock_now(void);

/* gclock_now_any is gclock_now's general path (timer.c's gclock_now_slow). */
static inline int64_t gclock_now_any(void);

/* ---- the communicator table's lookups (the table: comms.c) ---------------- */

/* gclock_slot_find finds the table slot keyed k (a communicator's or a
 * window's handle), NULL when absent. Readers take no lock: slots are
 * written only by the create/free wrappers, key last. */
static GCK_INLINE gclock_comm_slot *gclock_slot_find(uintptr_t k);

/* gclock_comm_get finds the slot of comm; NULL means "do not record"
 * (MPI_COMM_NULL or table full). */
static GCK_INLINE gclock_comm_slot *gclock_comm_get(MPI_Comm comm);

/* ---- the event and the call in flight ------------------------------------- */

/* gclock_record writes the event of a collective call (its instance
 * counted even when the event is not written) and meets a resync
 * armed on its instance. */
static GCK_INLINE void gclock_record(uint16_t op, gclock_comm_slot *cs, int32_t root,
				 uint64_t sent, uint64_t recv, int64_t t0,
				 int64_t t1, void *callsite);

/* ---- calls in flight (docs/guide/crash-hang.md) --------------------------------
 * gclock_fl_enter writes the call the thread enters into its next record
 * and marks it in flight (gclock.h GCK_PAD_FL), right before the
 * generated wrapper calls into MPI; the call's own record takes it over
 * when the call returned (gclock_record, gclock_put), and gclock_fl_leave
 * clears the mark of a point-to-point call that made no record.
 * GCK_NO_INFLIGHT (a compile-time switch, make bench's side-by-side
 * build) compiles the marker out and the writers store every field. */

/* gclock_fl_rank normalises a comm rank argument: MPI_ANY_SOURCE -1,
 * MPI_PROC_NULL -2 (trace.PeerAny, trace.PeerNull) whatever the MPI's values. */
static GCK_INLINE int32_t gclock_fl_rank(int r);

/* gclock_fl_peer is a comm rank argument as the record keeps it: the world
 * rank of a member of cs (NULL: not known), -1 any, -2 null. */
static GCK_INLINE int32_t gclock_fl_peer(const gclock_comm_slot *cs, int r);

/* coll (a constant at every call site): 1, a blocking collective, whose cs
 * is never NULL and whose instance is cs->seq; its record is finished by
 * gclock_record, which follows. 2, a send or request start (cx.fl, then
 * gclock_put_in's GCK_SAME_LOC); 0, another point-to-point call.
 * Returns the marked record, NULL when none. */
static GCK_INLINE gclock_event *gclock_fl_enter(uint16_t op, int coll, const gclock_comm_slot *cs, int32_t root,
						int32_t peer, int32_t tag, int32_t peer2, int32_t tag2, uint32_t count,
						void *ra, int64_t t0);

/* gclock_fl_leave follows a point-to-point rule's post (nrec: the
 * records it made). */
static GCK_INLINE void gclock_fl_leave(int nrec);

#endif

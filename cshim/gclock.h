/*
 * gclock C shim: the part of libgclock.so that runs on the application's hot
 * path. MPI wrappers (generated from cshim/collectives.tbl into
 * wrappers_gen.c), local timers, thread-local event buffers, the
 * communicator table and the reentrancy guard live here; everything that is
 * not per event (config, clock sync, file writing) lives in Go (pmpi/).
 *
 * Rules of the hot path: between a wrapper's entry and its return there is
 * no Go call, no allocation, no lock and no system call beyond the timer.
 *
 * libmpi is never linked: every PMPI_* function and every Open MPI
 * predefined-handle object we touch is a weak reference resolved inside the
 * MPI program, so the library loads (and stays inert) in processes without
 * MPI such as mpirun, ssh or /bin/true.
 */
#ifndef GCK_H
#define GCK_H

#include <stdint.h>
#include <stddef.h>
#include <time.h>
#include <mpi.h>

#include "ops_gen.h"

/* ---- PMPI entry points and predefined objects ----------------------------
 * libmpi is never linked: every PMPI_* function and Open MPI predefined
 * object the shim names is a pointer, the weak reference when the program
 * links libmpi, else looked up where libmpi was dlopen()ed (resolve.c). */

/* Everything declared from here on is the library's own (no program calls
 * it; Go reaches it from inside the library): hidden, so the wrappers read
 * these globals directly instead of through the GOT (one instruction less
 * per access, a dozen per wrapper). The wrappers themselves are declared
 * by mpi.h and fortran.h, outside this region, and stay exported. */
#pragma GCC visibility push(hidden)

#include "pmpi_gen.h"

int gclock_pmpi_resolve_all(void);
void *gclock_sym(const char *name);
int gclock_mpi_loaded(char *name, int len);

/* One recorded call: fixed size, written in place into a thread buffer.
 * Field order keeps it at 72 bytes without hidden padding. */
typedef struct gclock_event {
	int64_t enter_ns;  /* local timer at entry */
	int64_t exit_ns;   /* local timer at exit */
	uint64_t sent;     /* bytes this rank sends (see docs/explanation/recorder.md) */
	uint64_t recv;     /* bytes this rank receives */
	uint64_t callsite; /* return address into the application */
	uint32_t comm;     /* communicator local index */
	uint32_t seq;      /* per-communicator sequence number */
	int32_t root;      /* root as comm rank, -1 if none */
	uint16_t op;       /* trace.Op */
	uint16_t flags;    /* ignored by readers; in flight: GCK_FLF_* (below) */
	int32_t peer;      /* point-to-point: peer world rank (trace.PeerAny/PeerNull) */
	int32_t tag;       /* point-to-point: tag (trace.TagAny unresolved) */
	uint32_t req;      /* request id (docs/explanation/p2p.md); polls: number of calls */
	uint32_t pad;      /* its buffer half's generation, stored last (durability) */
} gclock_event;
_Static_assert(sizeof(gclock_event) == 72, "trace/live.go reads 72-byte records");

/* Per-communicator state, found by MPI_Comm handle on the hot path. */
typedef struct gclock_comm_slot {
	uintptr_t key;      /* handle; GCK_KEY_EMPTY / GCK_KEY_TOMB */
	uint64_t id;        /* agreed id (trace.CommID) */
	uint32_t local;     /* local index, never reused */
	uint32_t seq;       /* next collective sequence number */
	uint32_t children;  /* per-parent creation counter */
	int32_t rank;       /* my rank in the comm */
	int32_t size;       /* comm size (local group) */
	int32_t inter;      /* intercommunicator: bytes not computed */
	/* Neighbourhood collectives' block counts: sources and destinations
	 * of a graph or distributed-graph topology, 2*ndims of a Cartesian one
	 * (MPI_PROC_NULL neighbours included); 0 without a topology. */
	int32_t indeg, outdeg;
	/* Point-to-point peers: comm rank -> world rank (the remote group of an
	 * intercommunicator); NULL when unknown. Interned and counted
	 * (comms.c): freed once no slot and no live request holds it. */
	const int32_t *peers;
	int32_t npeers;
	/* Resync (docs/explanation/clocksync.md): the first resync-eligible collective
	 * with seq >= resync_at runs a sync epoch; UINT32_MAX = not armed. */
	uint32_t resync_at;
} gclock_comm_slot;

/* Timer kinds (GCLOCK_TIMER). Names are in gclock_timer_name. */
enum {
	GCK_TIMER_MONOTONIC = 0,
	GCK_TIMER_MONOTONIC_RAW = 1,
	GCK_TIMER_REALTIME = 2,
	GCK_TIMER_TSC = 3,
	GCK_TIMER_MPI_WTIME = 4,
};

/* ---- hot path, used by the generated wrappers ---------------------------- */

#define GCK_TLS _Thread_local __attribute__((tls_model("initial-exec")))
/* GCK_EXPORT marks what the Go half (libgclock-go.so) calls: exported from
 * libgclock.so, whose other symbols stay hidden. */
#define GCK_EXPORT __attribute__((visibility("default")))
#define GCK_LIKELY(x) __builtin_expect(!!(x), 1)
/* GCK_INLINE: always inlined. GCC's own limits left the start rules of
 * MPI_Isend/MPI_Irecv, the request table's walk and the byte count as
 * calls, each with its own prologue (make bench section 10: 1,496 → 1,370
 * instructions per p2p_self iteration once they are forced inline;
 * docs/explanation/recorder.md, "Fourth round"). */
#define GCK_INLINE inline __attribute__((always_inline))
#define GCK_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Thread buffer: events appended in place; written when full (cwrite.c). */
/* Per-thread scratch for the request-completion wrappers (p2p_rules.h):
 * copies of the request handles passed in, and statuses to hand to PMPI
 * when the application passes MPI_STATUS(ES)_IGNORE. GCK_SCRATCH of each
 * are allocated with the thread's buffer; a call with more requests grows
 * them (gclock_scratch_grow: to the next power of two, at most
 * GCK_SCRATCH_MAX), once per thread and size, like the buffer itself the
 * exception to the hot path's no-allocation rule. */
#define GCK_SCRATCH 1024
#define GCK_SCRATCH_MAX (1 << 20)

/* A request whose handle is shared with other live requests (Open MPI's
 * ompi_request_empty for inline sends): kept in its thread's FIFO
 * (reqtable.h) instead of the request table. */
typedef struct gclock_shared_req {
	uintptr_t key;        /* handle; 0 = consumed */
	uint64_t bytes;
	const int32_t *peers;
	int32_t npeers;
	uint32_t id, comm;
	int32_t peer, tag;
	uint16_t kind;
} gclock_shared_req;
#define GCK_SHARED_CAP 1024

/* A thread buffer's file-backed region (docs/explanation/recorder.md, "Durability"):
 * this header, then two halves of cap events each. The thread fills one
 * half while Go writes the other to the rank file; a record is complete
 * when its pad holds its half's generation (stored last). After a crash
 * tracemerge reads the halves not yet written (trace.ReadLive). */
#define GCK_LIVE_FILLING 1u
#define GCK_LIVE_HANDED 2u
#define GCK_LIVE_WRITTEN 3u
/* The call a thread is inside (docs/guide/crash-hang.md; sidecar version 3):
 * the record's own slot is the marker. Right before a wrapper calls into
 * MPI (gclock_fl_enter) it writes what it knows of the call into the next
 * record of its thread's buffer half, b->ev[b->n], and stores that
 * record's pad last as GCK_PAD_FL, which no generation is. At exit
 * the record is completed in place and published with pad = the
 * generation (a returned call, as before); a call that writes no record
 * (a poll miss, an op GCLOCK_OPS skips) clears the pad to 0. An in-flight
 * record holds enter_ns, callsite, op and comm (UINT32_MAX none), and
 * flags say which of the rest it holds (GCK_FLF_*):
 *   SEQ        seq: a blocking collective's instance (its number on comm)
 *   ROOT       root as passed (comm rank); else root is -1
 *   PEER       peer, tag: the source (else dest) and tag as passed, the
 *              rank as the record keeps it (world rank; -1 any, -2 null;
 *              GCK_FL_NONE none)
 *   PEER2      exit_ns: MPI_Sendrecv's dest (low 32 bits, a world rank)
 *              and send tag (high)
 *   COUNT      req: the number of requests of a wait or test call
 * A returned call's record keeps the flags: every reader ignores them
 * (encode.c masks them; trace/live.go does not read them from a record).
 * Nothing of the exit is stored while the pad says in flight, except
 * fields the flags leave out (a blocking collective's exit_ns, sent and
 * recv; a send's or a request start's exit_ns, sent, recv, seq and req:
 * its first record has its comm, root, peer and tag already); any other
 * point-to-point record is cleared (pad 0) before its exit fields are
 * stored. So a record with
 * the mark is the call in flight, whole, and never a returned call; one
 * that is neither marked nor complete is no call (trace/live.go). No
 * syscall, no lock, no store outside the record. Generations stay below
 * 2^31 (tbuf_swap). The mark is a constant, not the generation with a
 * bit set (two instructions less per call): every marked record is
 * completed or cleared before its thread makes another call, so a mark
 * outlives its call only in a process that died inside it, and a reused
 * half holds none. */
#define GCK_PAD_FL 0xffffffffu
enum { GCK_FLF_SEQ = 1, GCK_FLF_ROOT = 2, GCK_FLF_PEER = 4, GCK_FLF_PEER2 = 8, GCK_FLF_COUNT = 16 };
#define GCK_FL_NONE INT32_MIN /* no peer / tag / root */

typedef struct gclock_live_region {
	char magic[8];      /* "GCKTHRD1" */
	uint32_t cap;       /* events per half */
	uint32_t thread;    /* buffer number in this process */
	int32_t tid;        /* kernel thread id of the thread using it (sidecar version 2) */
	uint32_t reserved;
	struct {
		uint32_t gen;   /* generation of the events in the half (>= 1) */
		uint32_t state; /* GCK_LIVE_* */
		uint64_t reserved;
	} half[2];
	uint64_t pad;
	/* version 2's in-flight slot; unused since version 3 (the marker is
	 * the record's own slot), kept so the layout stays the same */
	uint32_t reserved_fl[16];
} gclock_live_region;
_Static_assert(sizeof(gclock_live_region) == 128, "trace/live.go reads a 128-byte region header");

/* How the process ended, where it could be recorded (docs/guide/crash-hang.md):
 * at byte 64 of the sidecar's first page, and in the footer (trace.End).
 * The first end claims it (state 0 -> 1, an atomic exchange, safe in a
 * signal handler), fills the fields and stores state 2 last. */
enum { GCK_END_ABORT = 1, GCK_END_SIGNAL = 2, GCK_END_EXIT = 3 };
typedef struct gclock_live_end {
	uint32_t state;    /* 0 nothing, 1 being written, 2 complete */
	uint32_t kind;     /* GCK_END_* */
	int64_t t;         /* local timer */
	int32_t code;      /* MPI_Abort's errorcode, exit()'s status, the signal number */
	int32_t si_code;   /* the signal's si_code */
	uint64_t addr;     /* a fault's address (si_addr) */
	uint64_t callsite; /* MPI_Abort's call site; a signal's interrupted pc */
	int32_t pid;       /* the sender of a signal sent by kill() (si_pid), 0 */
	int32_t tid;       /* the thread that got it */
	uint32_t thread;   /* its buffer number, UINT32_MAX none */
	uint32_t reserved;
	uint64_t reserved2;
} gclock_live_end;
_Static_assert(sizeof(gclock_live_end) == 64, "trace/live.go reads a 64-byte end record");
/* gclock_end_get copies the end recorded so far (footer); 0 when none. */
GCK_EXPORT int gclock_end_get(gclock_live_end *out);
/* gclock_end_record claims and fills the end record (buffers.c). */
int gclock_end_record(uint32_t kind, int32_t code, int32_t si_code, uint64_t addr, uint64_t callsite,
		      int32_t pid);

typedef struct gclock_tbuf {
	gclock_event *ev;
	uint32_t n, cap;
	uint32_t gen;             /* generation of the half being filled */
	int cur;                  /* that half: 0 or 1 */
	gclock_event *halves[2];
	gclock_live_region *live; /* file-backed (or malloc'ed) header */
	struct gclock_tbuf *next; /* all buffers, for the final flush */
	MPI_Request *sc_req;      /* sc_cap handles (NULL: none) */
	MPI_Status *sc_st;        /* sc_cap statuses */
	int sc_cap;
	/* A run of unsuccessful MPI_Test* / MPI_Iprobe calls, written as one
	 * gclock_polls event before the thread's next event (polls.c). */
	uint32_t poll_n;
	uint16_t poll_op;
	uint32_t poll_comm;
	int64_t poll_t0, poll_dur;
	uint64_t poll_pc;
	gclock_shared_req *shq;   /* GCK_SHARED_CAP ring (NULL: none) */
	uint32_t shq_head, shq_tail;
	uint32_t req_next, req_end; /* this thread's block of request ids */
	struct gclock_tbuf *idle_next; /* buffers of exited threads (buffers.c) */
} gclock_tbuf;

#define GCK_COMM_BITS 12
#define GCK_COMM_SLOTS (1u << GCK_COMM_BITS)
/* A key lives within GCK_COMM_PROBES slots of its hash in the first table
 * that had room there; the tables after gclock_comms (comm_more in
 * comms.c) are allocated when one is full, so any number of communicators
 * and windows can be live (before: 4,094, and calls on more were silently
 * not recorded). */
#define GCK_COMM_PROBES 64u
#define GCK_KEY_EMPTY ((uintptr_t)0)
#define GCK_KEY_TOMB (~(uintptr_t)0)

extern int gclock_active;                 /* recording on (set after init) */
/* 1 when MPI provides MPI_THREAD_MULTIPLE: only then can two threads be in
 * wrappers at once, and only then do the shared tables need locked
 * instructions (reqtable.h). */
extern int gclock_mt;
/* Selective tracing (docs/reference/settings-details.md): gclock_op_off[op] is 1 for an
 * op GCLOCK_OPS excludes, gclock_paused 1 between MPI_Pcontrol(0) and the
 * next MPI_Pcontrol(level != 0). A skipped call keeps all bookkeeping
 * (instance counts, requests, resync meetings) and writes no event. */
extern uint8_t gclock_op_off[GCK_OP_COUNT];
extern int gclock_paused;
#define gclock_skip(op) (gclock_paused | gclock_op_off[(op)])
GCK_EXPORT void gclock_set_op_off(int op, int off);
void gclock_pcontrol(int level, int64_t t0, int64_t t1, void *ra);
extern GCK_TLS int gclock_tl_guard;    /* reentrancy depth */
extern GCK_TLS gclock_tbuf *gclock_tl_buf;
extern gclock_comm_slot gclock_comms[GCK_COMM_SLOTS];
gclock_comm_slot *gclock_slot_find_more(uintptr_t k); /* comms.c */
int gclock_scratch_grow(gclock_tbuf *b, int count); /* buffers.c */
uint64_t gclock_requests_lost(void);              /* polls.c */
void gclock_requests_nomem(void);                 /* polls.c */
void gclock_requests_peers_each(void (*f)(const int32_t *)); /* polls.c */
void gclock_shared_peers_each(void (*f)(const int32_t *));   /* buffers.c */
size_t gclock_peers_kept(void);                  /* comms.c */
void gclock_peers_sweep_always(void);            /* comms.c */
extern int gclock_timer_kind;
extern int gclock_fake_on;
extern int gclock_tsc_fast;               /* the TSC, no injection: gclock_now inline */
extern int64_t gclock_fake_off;           /* ns */
extern double gclock_fake_k;              /* drift_ppm * 1e-6 */
extern int gclock_fake_nl;                /* number of non-linear terms */
double gclock_fake_extra(int64_t raw);    /* their sum at raw time raw (ns) */
extern uint64_t gclock_tsc0;
extern int64_t gclock_tsc_ns0;
extern uint64_t gclock_tsc_mult;          /* ns per tick, 32.32 fixed point */

gclock_tbuf *gclock_tbuf_new(void);
void gclock_tbuf_full(gclock_tbuf *b);
void gclock_polls_flush(gclock_tbuf *b); /* polls.c */
MPI_Datatype gclock_byte_type(void);     /* MPI_BYTE, resolved at MPI_Init */
gclock_comm_slot *gclock_comm_unknown(MPI_Comm comm);

/* gclock_now_slow is gclock_now for every timer (timer.c). */
int64_t gclock_now_slow(void);

/* Matched probes' messages, per thread (p2p_rules.h: MPI_Mprobe keeps
 * what MPI_Mrecv of the message records). */
#define GCK_MSG_SLOTS 16
typedef struct {
	uintptr_t key;
	gclock_comm_slot *cs;
	int32_t peer, tag;
} gclock_msg_slot;
extern GCK_TLS gclock_msg_slot gclock_msgs[GCK_MSG_SLOTS];
extern GCK_TLS uint32_t gclock_msg_next;

void gclock_resync_point(gclock_comm_slot *cs, uint16_t op, uint64_t sent, uint64_t recv);

void gclock_fl_clear(void); /* hotpath.c: a marked call that wrote no record */
void gclock_fl_polls(gclock_tbuf *b, uint16_t op); /* hotpath.c: a collective ends a run of polls */

/* ---- shared by the C and Fortran wrappers (lifecycle.c, comms.c) ---------- */

int gclock_init_begin(void);
void gclock_init_end(int swapped, int rc);
int gclock_finalize_begin(void);
void gclock_finalize_end(void);
void gclock_abort_begin(int errorcode, void *callsite);
gclock_comm_slot *gclock_comm_new_begin(MPI_Comm parentcomm, uint32_t *counter);
void gclock_comm_new_end(int rc, gclock_comm_slot *parent, uint32_t counter, MPI_Comm newcomm,
			 const char *kind);
void gclock_comm_free_done(int rc, uintptr_t k);
/* MPI_Comm_create_group, MPI_Intercomm_merge: id from the member set. */
void gclock_comm_by_members(int rc, MPI_Comm newcomm, const char *kind);
/* MPI_Comm_idup: registered at first use with the parent and counter. */
void gclock_idup_note(int rc, gclock_comm_slot *parent, uint32_t counter, MPI_Comm newcomm);
void gclock_fortran_setup(void); /* fortran.c: Fortran sentinels, after init */
extern int gclock_init_seen;     /* resolve.c */

/* ---- called from Go (pmpi) --------------------------------------------- */

/* Timer set-up; kind is GCK_TIMER_*. Returns 0 or -1 (unsupported). */
GCK_EXPORT int gclock_timer_setup(int kind, int need_kernel_tsc, uint64_t machine_key, double *tsc_hz);
GCK_EXPORT void gclock_timer_fake(double offset_ns, double drift_ppm);
/* A non-linear term (trace/fakeclock.go): kind 1 step (a = at ns after the
 * anchor, b = ppm), 2 sine (a = amplitude ns, b = period ns, c = phase),
 * 3 random walk (a = step ns; off/freq: n knots, copied). */
GCK_EXPORT void gclock_timer_fake_term(int kind, double a, double b, double c, const double *off, const double *freq, int n);
GCK_EXPORT void gclock_timer_fake_anchor(int64_t anchor);
int64_t gclock_timer_raw(void);
GCK_EXPORT double gclock_timer_cost_ns(void);

/* Transport over PMPI on private communicators. tc 0 is the private
 * duplicate of MPI_COMM_WORLD. All return an MPI error code. */
GCK_EXPORT int gclock_t_rank(int tc);
GCK_EXPORT int gclock_t_size(int tc);
GCK_EXPORT int gclock_t_send(int tc, const double *v, int n, int dst, int sync);
GCK_EXPORT int gclock_t_recv(int tc, double *v, int n, int src);
int gclock_t_bcast(int tc, void *buf, int64_t n, int root);
int gclock_t_bcast_i64(int tc, int64_t *v, int root);
GCK_EXPORT int gclock_t_split(int tc, int color, int key, int *newtc);
int gclock_t_barrier(int tc);

GCK_EXPORT int gclock_world_rank(void);
GCK_EXPORT int gclock_spawned(void); /* goside.c */
GCK_EXPORT void gclock_deactivate(void); /* goside.c: recording off */
/* gclock_now for the Go half (the inline one reads hidden variables). */
GCK_EXPORT int64_t gclock_now_ext(void);
GCK_EXPORT int gclock_world_size(void);
GCK_EXPORT int gclock_node_shared(int *node_id, int *node_size, uint64_t machine_key,
		       int *machine_ranks);
GCK_EXPORT void gclock_mpi_library_version(char *buf, int len);

/* Loaded objects via dl_iterate_phdr. */
typedef struct gclock_object {
	char path[512];
	uint64_t base, lo, hi;
	unsigned char build_id[64];
	int build_id_len;
} gclock_object;
GCK_EXPORT int gclock_objects(gclock_object *out, int max);

/* Flush every thread buffer to the rank file (finalize / exit). */
void gclock_flush_all(void);
GCK_EXPORT uint64_t gclock_dropped(void);
GCK_EXPORT int gclock_buffer_events(void);
GCK_EXPORT void gclock_set_buffer_events(int n);

/* ---- implemented in Go (pmpi, libgclock-go.so), called from C -----------
 * The Go half is loaded at MPI_Init (gobridge.c); its package init
 * registers these entry points (pmpi/register.c). Every call below happens
 * only after gclock_go_load returned 1. */
typedef struct gclock_go_api {
	void (*ready)(void);
	int (*start)(void);
	void (*flush)(gclock_event *ev, int64_t n, uint32_t *state);
	void (*flush_wait)(uint32_t *state);
	uint64_t (*comm)(uint64_t fixed_id, uint64_t parent, uint32_t counter, uint32_t local, char *kind,
			 int32_t *members, int32_t n, int64_t created_ns);
	void (*comm_freed)(uint32_t local, int64_t freed_ns);
	void (*finish)(int32_t reason);
	/* Returns the next meeting's instance (low 32 bits; UINT32_MAX none)
	 * and in bit 32 whether a sync epoch ran. */
	uint64_t (*resync)(uint64_t comm_id, uint32_t seq);
} gclock_go_api;
extern gclock_go_api gclock_go;
GCK_EXPORT void gclock_go_register(const gclock_go_api *api);
/* gclock_go_load loads libgclock-go.so (once; before PMPI_Init) and waits
 * for its runtime; 1 when it is there, 0 when the process stays
 * unrecorded (gclock_go_why says why). */
int gclock_go_load(void);
extern const char *gclock_go_why;
/* gclock_go_nice_again gives the Go runtime's threads made since the load
 * their nice value (GCLOCK_GO_NICE; gobridge.c); once, at the end of
 * MPI_Init. */
void gclock_go_nice_again(void);
/* gclock_go_note: what loading it changed (a raised limit), or "". */
extern const char *gclock_go_note;
GCK_EXPORT int gclock_live_open(const char *path);

/* The C chunk writer (cwrite.c): a full half written without a call into
 * Go when the Go half armed it. The state is shared with trace.Writer
 * (pmpi/cwrite.go), which holds lock around each of its own frames. */
typedef struct gclock_cw_state {
	uint32_t lock;	 /* cw_lock's word */
	int32_t armed;	 /* C may write events frames */
	int32_t fd;	 /* the rank file's descriptor */
	int32_t err;	 /* errno of a failed C write, for Go to report */
	uint64_t dev, ino; /* the file it must name */
	int64_t off;	 /* the file's end */
	int64_t err_len; /* the frame that failed */
	uint64_t events, calls;
	uint32_t chunks; /* EVENTS frames in the file (the next SPAN index) */
} gclock_cw_state;
void gclock_cw_flush(gclock_event *ev, int64_t n, uint32_t *state);
GCK_EXPORT gclock_cw_state *gclock_cw_lock(void);
GCK_EXPORT void gclock_cw_unlock(void);
GCK_EXPORT void gclock_cw_disarm(void);
GCK_EXPORT const char *gclock_cw_setup(int level, int tail, uint32_t events);
GCK_EXPORT int gclock_cw_write_test(const gclock_event *ev, uint32_t n);

/* Resync arming (comms.c), called from Go. */
GCK_EXPORT void gclock_resync_arm_world(int on);

/* gclockGoFinish reasons. */
enum { GCK_FINISH_FINALIZE = 0, GCK_FINISH_EXIT = 1, GCK_FINISH_ABORT = 2 };

#pragma GCC visibility pop

#endif

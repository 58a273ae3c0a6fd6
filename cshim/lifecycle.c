/*
 * lifecycle.c: MPI_Init/_thread, MPI_Finalize and MPI_Abort, the crash signal
 * handlers that keep Open MPI's backtrace, and selective tracing
 * (GCLOCK_OPS, MPI_Pcontrol).
 *
 * Part of the C shim; compiled in the unity build pmpi/cshim.c after comms.c.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "gclock.h"
#include "hotpath.h"
#include "comms.h"
#include "shim.h"

/* ---- lifecycle ------------------------------------------------------------ */

static int env_true(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && *v != '\0' && strcmp(v, "0") != 0 && strcmp(v, "false") != 0;
}

/* gclock_forked: this process is the child of a fork() without exec. A Go
 * runtime loaded before the fork runs in threads of its own, and a child
 * gets none of them: a call into Go there waits forever (before the Go half
 * was loaded lazily, a program that forked before MPI_Init hung in the
 * child's MPI_Init). After MPI_Init the child also shares the rank's trace
 * file and buffers but is not the rank (its exit() wrote the events
 * buffered at the fork into the rank's file a second time). So a forked
 * child never calls Go and records nothing; one forked before MPI_Init is
 * not recorded either (it and its parent would be two singletons writing
 * rank 0 into the same GCLOCK_DIR). */
static int gclock_forked;

static void gclock_forked_child(void)
{
	gclock_forked = 1;
	gclock_active = 0;
	finished = 1;
}

__attribute__((constructor)) static void gclock_fork_register(void)
{
	pthread_atfork(NULL, NULL, gclock_forked_child);
}

/* requests_lost_say says once, at the end, how many requests were recorded
 * without their completion (only when memory for the request table ran
 * out; before 2026-11-27 that count was kept and never told). */
static void requests_lost_say(void)
{
	const char *fault = getenv("GCLOCK_TEST_FAULT");
	if (fault != NULL && strncmp(fault, "peers", 5) == 0) /* tests/permsplit_test.go */
		fprintf(stderr, "gclock: rank %d: member lists kept %zu bytes\n", world_rank, gclock_peers_kept());
	uint64_t n = gclock_requests_lost();
	if (n > 0)
		fprintf(stderr,
			"gclock: rank %d: %llu requests were recorded without their completion (no memory for "
			"the request table); their messages stay unmatched in the analysis\n",
			world_rank, (unsigned long long)n);
}

/* gclock_onexit runs at exit() and at the return from main without
 * MPI_Finalize: the footer says "exit" and, since 2026-11-28, the status
 * (trace.End; docs/guide/crash-hang.md). */
static void gclock_onexit(int status, void *arg)
{
	(void)arg;
	if (!started || finished)
		return;
	gclock_end_record(GCK_END_EXIT, status, 0, 0, 0, 0);
	finished = 1;
	gclock_active = 0;
	requests_lost_say();
	gclock_flush_all();
	gclock_tl_guard++;
	gclock_go.finish(GCK_FINISH_EXIT);
	gclock_tl_guard--;
}

/* ---- crash signals: keep Open MPI's backtrace ------------------------------
 *
 * The Go runtime installs handlers for SIGSEGV, SIGBUS, SIGFPE (and sees
 * SIGABRT) when the Go half loads (gobridge.c, before PMPI_Init), and Open MPI installs its own
 * backtrace-printing handler in MPI_Init only where none is installed, so
 * under the preload an application crash would lose Open MPI's "*** Process
 * received signal ***" report. Around PMPI_Init the shim puts back what was
 * there before the Go half loaded (SIG_DFL or the application's own
 * handler), lets the MPI library install its handlers, and then
 * installs a dispatcher that hands a fault to the Go runtime's handler when
 * the faulting instruction is in the Go half (Go code turns those into
 * panics) and to the MPI library's handler otherwise. */

static const int crash_sigs[] = {SIGABRT, SIGBUS, SIGFPE, SIGSEGV};
#define NCRASH (int)(sizeof crash_sigs / sizeof crash_sigs[0])
static struct sigaction app_act[NCRASH], go_act[NCRASH], mpi_act[NCRASH];
static uintptr_t self_lo, self_hi;

static int self_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t base = (uintptr_t)data;
	if (info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
			if (self_lo == 0 || lo < self_lo)
				self_lo = lo;
			if (hi > self_hi)
				self_hi = hi;
		}
	}
	return 1;
}

static void call_action(const struct sigaction *a, int sig, siginfo_t *si, void *uc)
{
	if (a->sa_flags & SA_SIGINFO) {
		a->sa_sigaction(sig, si, uc);
	} else if (a->sa_handler == SIG_DFL) {
		signal(sig, SIG_DFL);
		raise(sig);
	} else if (a->sa_handler != SIG_IGN) {
		a->sa_handler(sig);
	}
}

static void crash_dispatch(int sig, siginfo_t *si, void *ucv)
{
	int i = 0;
	while (i < NCRASH && crash_sigs[i] != sig)
		i++;
	if (i == NCRASH)
		return;
	uintptr_t pc = 0;
#if defined(__x86_64__)
	pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#endif
	if (pc >= self_lo && pc < self_hi)
		call_action(&go_act[i], sig, si, ucv);
	else
		call_action(&mpi_act[i], sig, si, ucv);
}

static int crash_reset(void)
{
#if defined(__x86_64__)
	Dl_info di; /* the Go half: its code is where Go's handlers apply */
	if (!dladdr((void *)gclock_go.start, &di) || di.dli_fbase == NULL)
		return 0;
	dl_iterate_phdr(self_cb, di.dli_fbase);
	if (self_hi == 0)
		return 0;
	/* What was there before the Go half loaded: SIG_DFL, or the
	 * application's own handler, which the MPI library then keeps as it
	 * would without the preload (and the dispatcher hands it the faults
	 * outside the Go half). */
	for (int i = 0; i < NCRASH; i++)
		sigaction(crash_sigs[i], &app_act[i], &go_act[i]);
	return 1;
#else
	return 0;
#endif
}

static void crash_install(void)
{
	for (int i = 0; i < NCRASH; i++) {
		sigaction(crash_sigs[i], NULL, &mpi_act[i]);
		if (!(mpi_act[i].sa_flags & SA_SIGINFO) && mpi_act[i].sa_handler == SIG_DFL) {
			/* The MPI library installed nothing here: Go's as before. */
			sigaction(crash_sigs[i], &go_act[i], NULL);
			continue;
		}
		struct sigaction d;
		memset(&d, 0, sizeof d);
		d.sa_sigaction = crash_dispatch;
		d.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigfillset(&d.sa_mask);
		sigaction(crash_sigs[i], &d, NULL);
	}
}

/* ---- how the process ended: signals (docs/guide/crash-hang.md) -------------------
 *
 * Once recording runs, a handler of the shim's own stands in front of
 * whatever handles the fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT: the MPI library's through crash_dispatch, Go's, the
 * application's or the default action) and the ones a launcher or batch
 * system ends a job with (SIGTERM, SIGINT, SIGXCPU, SIGUSR1, SIGUSR2). It
 * records the signal into the sidecar's end record (a few stores and the
 * timer: async-signal-safe) and hands the signal on, unchanged, to the
 * action that was installed before it: the MPI library still prints its
 * report, the default action still ends the process with the signal (and
 * its core). A signal that was ignored stays ignored (no handler). A fault
 * inside the Go half is Go's (a recovered panic), not recorded. After the
 * footer is written (MPI_Finalize, MPI_Abort, exit) nothing is recorded. */
static const int end_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGXCPU, SIGUSR1, SIGUSR2};
#define NEND (int)(sizeof end_sigs / sizeof end_sigs[0])
static struct sigaction end_prev[NEND];
static int end_fatal(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT; }

static void end_signal(int sig, siginfo_t *si, void *ucv)
{
	int i = 0;
	while (i < NEND && end_sigs[i] != sig)
		i++;
	if (i == NEND)
		return;
	uintptr_t pc = 0;
#if defined(__x86_64__)
	if (ucv != NULL)
		pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#endif
	int in_go = end_fatal(sig) && self_hi != 0 && pc >= self_lo && pc < self_hi;
	if (!in_go && !__atomic_load_n(&finished, __ATOMIC_RELAXED) && si != NULL) {
		int sent = si->si_code <= 0; /* kill(), tgkill(), sigqueue(): si_pid is the sender */
		uint64_t addr = end_fatal(sig) && !sent ? (uint64_t)(uintptr_t)si->si_addr : 0;
		gclock_end_record(GCK_END_SIGNAL, sig, si->si_code, addr, pc, sent ? si->si_pid : 0);
	}
	call_action(&end_prev[i], sig, si, ucv);
}

/* end_signals_install puts end_signal in front of each signal's action;
 * run once, at the end of the start (after crash_install). */
static void end_signals_install(void)
{
	for (int i = 0; i < NEND; i++) {
		struct sigaction old;
		if (sigaction(end_sigs[i], NULL, &old) != 0)
			continue;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
			continue; /* ignored: stays ignored */
		if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == end_signal)
			continue;
		end_prev[i] = old;
		struct sigaction d = old; /* its mask and flags (SA_RESTART, SA_NODEFER, ...) */
		d.sa_sigaction = end_signal;
		d.sa_flags = old.sa_flags | SA_SIGINFO | SA_ONSTACK;
		sigaction(end_sigs[i], &d, NULL);
	}
}

/* first_missing is an MPI reduction: the lowest rank without the Go half
 * (world_size where every rank has it). A user-defined op, so no
 * predefined op handle has to be resolved. */
static void first_missing(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	for (int i = 0; i < *len; i++)
		if (((int *)in)[i] < ((int *)inout)[i])
			((int *)inout)[i] = ((int *)in)[i];
}

/* go_everywhere says whether every rank loaded the Go half (collective on
 * tcomm[0], no allocation, so every rank takes part): the recorder's start
 * is collective (sync epoch 0), so a rank without it (a limit of its own, a
 * node without the file) would leave the others waiting for it forever.
 * Rank 0 says why once. */
static int go_everywhere(void)
{
	int mine = gclock_go_load() ? world_size : world_rank, first = world_rank;
	MPI_Op op;
	if (PMPI_Op_create(first_missing, 1, &op) != MPI_SUCCESS)
		return 0; /* local; fails only when memory is gone */
	int rc = PMPI_Allreduce(&mine, &first, 1, h_int, op, tcomm[0]);
	PMPI_Op_free(&op);
	if (rc != MPI_SUCCESS)
		return 0;
	if (first == world_size)
		first = -1;
	if (first < 0 && world_rank == 0 && *gclock_go_note)
		fprintf(stderr, "gclock: rank 0: %s\n", gclock_go_note);
	if (first >= 0 && world_rank == first)
		fprintf(stderr, "gclock: rank %d: %s; not recording (the application continues)\n", world_rank,
			gclock_go_why);
	else if (first >= 0 && world_rank == 0)
		fprintf(stderr, "gclock: rank %d cannot record (it says why); no rank records (the application continues)\n",
			first);
	return first < 0;
}

/* The recorder's world in the sessions model (MPI_Session_init below):
 * in_session says it is live (made, not yet freed). */
static MPI_Comm session_world;
static int in_session;

/* after_init runs right after a successful PMPI_Init(_thread), or after
 * the first PMPI_Session_init with h_world set to the session's world
 * (session_world below). */
static void after_init(void)
{
	if (env_true("GCLOCK_DISABLE") || started)
		return;
	if (gclock_forked) {
		fprintf(stderr, "gclock: process %ld was forked, without exec, from one that had loaded the "
				"recorder; it is not recorded (the application continues)\n",
			(long)getpid());
		return;
	}
	if (!handles_resolve()) {
		fprintf(stderr, "gclock: cannot find the MPI library's predefined handles "
				"(MPI_COMM_WORLD, ...); not recording (the application continues)\n");
		return;
	}
	if (in_session)
		h_world = session_world; /* the sessions model: no MPI_COMM_WORLD */
	if (PMPI_Comm_dup(h_world, &tcomm[0]) != MPI_SUCCESS)
		return;
	ntcomm = 1;
	PMPI_Comm_rank(h_world, &world_rank);
	PMPI_Comm_size(h_world, &world_size);
	if (!go_everywhere())
		return;
	PMPI_Comm_group(h_world, &world_group);
	int level = MPI_THREAD_MULTIPLE;
	if (PMPI_Query_thread(&level) != MPI_SUCCESS)
		level = MPI_THREAD_MULTIPLE;
	gclock_mt = level == MPI_THREAD_MULTIPLE;
	started = 1;
	on_exit(gclock_onexit, NULL);
	int go_started = gclock_go.start();
	gclock_go_nice_again();
	if (!go_started)
		return; /* inert, but epoch 1 and finish still run collectively */
	gclock_active = 1;
	const char *fault = getenv("GCLOCK_TEST_FAULT");
	if (fault != NULL && strcmp(fault, "reqtable") == 0)
		gclock_requests_nomem();
	if (fault != NULL && strcmp(fault, "peers-sweep") == 0)
		gclock_peers_sweep_always();
	gclock_comm_slot *w = comm_register(h_world, NULL, 0, "world", 1);
	/* MPI_COMM_SELF exists in the world model only; a sessions program's
	 * self communicators are registered at first use. */
	gclock_comm_slot *s = in_session ? w : comm_register(h_self, NULL, 0, "self", 2);
	if (w == NULL || s == NULL)
		gclock_active = 0;
	/* The initialising thread's event buffer is made here, not at its
	 * first recorded call, so no application MPI call on it ever
	 * allocates; other threads get theirs at their first event (once). */
	if (gclock_active && gclock_tl_buf == NULL)
		(void)gclock_tbuf_new();
	if (gclock_active)
		end_signals_install();
}

extern int gclock_init_seen; /* resolve.c */

/* gclock_init_begin and gclock_init_end bracket the real MPI_Init(_thread)
 * of every binding (C here, Fortran in fortran.c): the guard keeps an inner
 * MPI_Init (MPICH's Fortran layer calls the C one) from starting twice. */
int gclock_init_begin(void)
{
	gclock_init_seen = 1;
	gclock_tl_guard++;
	if (env_true("GCLOCK_DISABLE") || gclock_forked)
		return 0;
	for (int i = 0; i < NCRASH; i++) /* the application's, before Go's */
		sigaction(crash_sigs[i], NULL, &app_act[i]);
	if (!gclock_go_load())
		return 0; /* no Go runtime: its crash handlers are not there either */
	return crash_reset();
}

void gclock_init_end(int swapped, int rc)
{
	if (swapped)
		crash_install();
	if (rc == MPI_SUCCESS)
		after_init();
	gclock_tl_guard--;
}

int MPI_Init(int *argc, char ***argv)
{
	if (gclock_tl_guard) {
		gclock_init_seen = 1;
		return PMPI_Init(argc, argv);
	}
	int swapped = gclock_init_begin();
	int rc = PMPI_Init(argc, argv);
	gclock_init_end(swapped, rc);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	if (gclock_tl_guard) {
		gclock_init_seen = 1;
		return PMPI_Init_thread(argc, argv, required, provided);
	}
	int swapped = gclock_init_begin();
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	gclock_init_end(swapped, rc);
	return rc;
}

/* gclock_finalize_begin runs before the real MPI_Finalize of every
 * binding: final sync epoch and flush. Returns 1 if gclock_finalize_end
 * must follow the real call. */
int gclock_finalize_begin(void)
{
	if (gclock_tl_guard || !started || finished)
		return 0;
	gclock_tl_guard++;
	finished = 1;
	gclock_active = 0;
	requests_lost_say();
	gclock_flush_all();
	gclock_go.finish(GCK_FINISH_FINALIZE);
	for (int i = ntcomm - 1; i >= 0; i--)
		if (tcomm[i] != h_null)
			PMPI_Comm_free(&tcomm[i]);
	ntcomm = 0;
	PMPI_Group_free(&world_group);
	if (in_session) {
		in_session = 0;
		PMPI_Comm_free(&session_world);
	}
	return 1;
}

void gclock_finalize_end(void) { gclock_tl_guard--; }

int MPI_Finalize(void)
{
	int own = gclock_finalize_begin();
	int rc = PMPI_Finalize();
	if (own)
		gclock_finalize_end();
	return rc;
}

/* ---- the sessions model (MPI-4) ---------------------------------------------
 *
 * A program that starts MPI with MPI_Session_init instead of MPI_Init has no
 * MPI_COMM_WORLD. The first session started while nothing records becomes
 * the recorder's: right after PMPI_Session_init the recorder makes its own
 * world, a communicator of the process set "mpi://WORLD" (the same ranks in
 * the same order as MPI_COMM_WORLD), and starts on it as MPI_Init would;
 * MPI_Session_finalize of that session (or MPI_Finalize, if the program
 * also used the world model) finishes the recording. Every process of the
 * job must start its sessions alike: the start is collective over
 * mpi://WORLD, as MPI_Init's is over MPI_COMM_WORLD. Other sessions are not
 * touched. MPI-4 libraries only (MPICH 4; Open MPI 4.1 has no sessions). */

#if MPI_VERSION >= 4
static MPI_Session session_own; /* the session session_world was made from */
static int session_claimed;     /* a session start was attempted */

/* session_world_make builds the recorder's world from session s. */
static int session_world_make(MPI_Session s)
{
	MPI_Group g;
	MPI_Errhandler eh; /* the session's own: no predefined handle needed */
	if (PMPI_Session_get_errhandler(s, &eh) != MPI_SUCCESS)
		return 0;
	int rc = PMPI_Group_from_session_pset(s, "mpi://WORLD", &g);
	if (rc == MPI_SUCCESS) {
		rc = PMPI_Comm_create_from_group(g, "org.gclock.world", MPI_INFO_NULL, eh, &session_world);
		PMPI_Group_free(&g);
	}
	PMPI_Errhandler_free(&eh);
	return rc == MPI_SUCCESS;
}

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
	if (gclock_tl_guard || started || session == NULL ||
	    __atomic_exchange_n(&session_claimed, 1, __ATOMIC_ACQ_REL))
		return PMPI_Session_init(info, errhandler, session);
	int swapped = gclock_init_begin();
	int rc = PMPI_Session_init(info, errhandler, session);
	if (swapped)
		crash_install();
	if (rc == MPI_SUCCESS && !env_true("GCLOCK_DISABLE") && !gclock_forked) {
		if (session_world_make(*session)) {
			session_own = *session;
			in_session = 1;
			after_init();
		} else {
			fprintf(stderr, "gclock: cannot make a communicator of the session's process set "
					"mpi://WORLD; not recording (the application continues)\n");
		}
	}
	gclock_tl_guard--;
	return rc;
}

int MPI_Session_finalize(MPI_Session *session)
{
	if (gclock_tl_guard || session == NULL || !in_session || *session != session_own)
		return PMPI_Session_finalize(session);
	int own = gclock_finalize_begin(); /* frees session_world */
	if (in_session) {		   /* the recording never started */
		in_session = 0;
		gclock_tl_guard++;
		PMPI_Comm_free(&session_world);
		gclock_tl_guard--;
	}
	int rc = PMPI_Session_finalize(session);
	if (own)
		gclock_finalize_end();
	return rc;
}

/* MPI_Comm_create_from_group: only the group's members call it, so the new
 * communicator is registered by its members (like MPI_Comm_create_group). */
int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
			       MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
	if (!gclock_active || gclock_tl_guard || newcomm == NULL)
		return PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
	gclock_tl_guard++;
	int rc = PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
	gclock_comm_by_members(rc, *newcomm, "from_group");
	gclock_tl_guard--;
	return rc;
}
#endif

/* gclock_abort_begin writes the calling rank's buffered events (footer
 * reason "abort", no sync epoch) before the real MPI_Abort of any binding. */
void gclock_abort_begin(int errorcode, void *callsite)
{
	if (started && !finished && !gclock_tl_guard) {
		gclock_end_record(GCK_END_ABORT, errorcode, 0, 0, (uint64_t)(uintptr_t)callsite, 0);
		gclock_tl_guard++;
		finished = 1;
		gclock_active = 0;
		gclock_flush_all();
		gclock_go.finish(GCK_FINISH_ABORT);
		gclock_tl_guard--;
	}
}

/* MPI_Abort: the calling rank's buffered events are written (footer reason
 * "abort", no sync epoch) before the MPI library kills the job; the other
 * ranks keep what they flushed before. */
int MPI_Abort(MPI_Comm comm, int errorcode)
{
	gclock_abort_begin(errorcode, __builtin_return_address(0));
	return PMPI_Abort(comm, errorcode);
}

/* ---- selective tracing ------------------------------------------------------ */

uint8_t gclock_op_off[GCK_OP_COUNT];
int gclock_paused;
static uint32_t pcontrol_count;

/* gclock_set_op_off is GCLOCK_OPS's effect (pmpi/selective.go), set in
 * MPI_Init before recording starts. */
void gclock_set_op_off(int op, int off)
{
	if (op >= 0 && op < GCK_OP_COUNT)
		gclock_op_off[op] = off != 0;
}

/* gclock_pcontrol records MPI_Pcontrol(level) and applies it: level 0
 * pauses recording on this process after its event, any other level
 * resumes it before its event, so a paused interval lies between two
 * MPI_Pcontrol events (Root = level). Instance counts, requests and resync
 * meetings go on while paused (gclock_skip). */
void gclock_pcontrol(int level, int64_t t0, int64_t t1, void *ra)
{
	if (!gclock_active)
		return;
	if (level != 0)
		gclock_paused = 0;
	gclock_tbuf *b = gclock_tl_buf;
	if (b == NULL)
		b = gclock_tbuf_new();
	if (!gclock_skip(GCK_OP_MPI_PCONTROL) && b != NULL) {
		if (b->poll_n != 0)
			gclock_polls_flush(b);
		gclock_event *e = &b->ev[b->n];
		memset(e, 0, sizeof *e);
		e->enter_ns = t0;
		e->exit_ns = t1;
		e->callsite = (uint64_t)(uintptr_t)ra;
		e->comm = 0xffffffffu;
		e->seq = pcontrol_count;
		e->root = level;
		e->op = GCK_OP_MPI_PCONTROL;
		__atomic_store_n(&e->pad, b->gen, __ATOMIC_RELEASE);
		if (++b->n == b->cap)
			gclock_tbuf_full(b);
	}
	pcontrol_count++;
	if (level == 0)
		gclock_paused = 1;
}

/* MPI_Pcontrol: the MPI library's own does nothing; it gets the level only
 * (extra arguments are for the profiling library, i.e. us, and unused). */
int MPI_Pcontrol(const int level, ...)
{
	if (!gclock_active || gclock_tl_guard)
		return PMPI_Pcontrol(level);
	gclock_tl_guard++;
	int64_t t0 = gclock_now();
	int rc = PMPI_Pcontrol(level);
	int64_t t1 = gclock_now();
	gclock_pcontrol(level, t0, t1, __builtin_return_address(0));
	gclock_tl_guard--;
	return rc;
}

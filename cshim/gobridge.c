/*
 * gobridge.c: loading the recorder's Go half.
 *
 * libgclock.so (this C library) is what the user preloads; it is loaded
 * into every process that inherits LD_PRELOAD (mpirun, its daemons, shells,
 * the MPI program). The Go half, libgclock-go.so next to it, starts a Go
 * runtime when it is loaded, so it is loaded only by a process that calls
 * MPI_Init, and only when the runtime can live there: the runtime reserves
 * address space at start (≈ 1 GiB on linux/amd64, mostly never touched)
 * and ends the process when that fails, which under an address-space
 * limit (ulimit -v, RLIMIT_AS: Grid Engine's h_vmem, for one) killed the
 * application before its main (docs/explanation/recorder.md, "Address-space limit").
 *
 * Until the Go half is there, gclock_go holds stubs that record nothing.
 *
 * Part of the C shim; compiled in the unity build cshim/libgclock.c last.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gclock.h"

static void stub_ready(void) {}
static int stub_start(void) { return 0; }
static void stub_flush(gclock_event *ev, int64_t n, uint32_t *state)
{
	(void)ev;
	(void)n;
	__atomic_store_n(state, GCK_LIVE_WRITTEN, __ATOMIC_RELEASE);
}
static void stub_flush_wait(uint32_t *state) { (void)state; }
static uint64_t stub_comm(uint64_t fixed_id, uint64_t parent, uint32_t counter, uint32_t local, char *kind,
			  int32_t *members, int32_t n, int64_t created_ns)
{
	(void)fixed_id, (void)parent, (void)counter, (void)local, (void)kind, (void)members, (void)n,
		(void)created_ns;
	return 0;
}
static void stub_comm_freed(uint32_t local, int64_t freed_ns) { (void)local, (void)freed_ns; }
static void stub_finish(int32_t reason) { (void)reason; }
static uint64_t stub_resync(uint64_t comm_id, uint32_t seq)
{
	(void)comm_id, (void)seq;
	return UINT32_MAX;
}

gclock_go_api gclock_go = {stub_ready,	 stub_start,	  stub_flush,  stub_flush_wait,
			   stub_comm,	 stub_comm_freed, stub_finish, stub_resync};

static int go_registered;

void gclock_go_register(const gclock_go_api *api)
{
	gclock_go = *api;
	__atomic_store_n(&go_registered, 1, __ATOMIC_RELEASE);
}

/* GCK_GO_ADDRESS_SPACE is the address space the Go half takes beside what
 * the process already maps: the runtime's reservations at start (its page
 * allocator's index for the whole 48-bit space, mostly never touched), its
 * heap, the encoder's buffers, with room to spare. Measured 2026-11-27 on
 * linux/amd64, Go 1.26: VmSize of a rank during 3·10⁶ MPI_Allreduce
 * 178,180 kB untraced, 1,813,940 kB traced (+1.56 GiB; docs/explanation/recorder.md,
 * "Address-space limit"). */
#define GCK_GO_ADDRESS_SPACE ((uint64_t)2 << 30)

const char *gclock_go_why = "";
const char *gclock_go_note = "";
static char go_why[4608], go_note[512];
static int go_state; /* 0 not tried, 1 loaded, -1 not loaded */
/* GCLOCK_GO_NICE (below, "the Go runtime's own threads"): */
static int go_nice;         /* the value */
static pid_t *go_before;    /* the threads before the Go half loaded */
static int go_nbefore = -1; /* their number; -1: not taken */
static const void *go_code; /* an address in the Go half */

/* mapped_bytes returns the process's mapped address space (VmSize), or 0. */
static uint64_t mapped_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	if (f == NULL)
		return 0;
	unsigned long long pages = 0;
	int n = fscanf(f, "%llu", &pages);
	fclose(f);
	return n == 1 ? (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/* room_for_go makes room for the Go half under an address-space limit
 * (ulimit -v, RLIMIT_AS): the application should keep all the room it had,
 * so the soft limit is raised by what the Go half takes, up to the hard
 * limit. Where that is not possible, the Go half is loaded only if it takes
 * at most a quarter of the room left (a 64 GiB h_vmem job records, taking
 * 2 of its ≈ 64 GiB, and rank 0 says so); else the process stays
 * unrecorded. Returns 0 (and sets go_why) when there is no room. */
static int room_for_go(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1;
	uint64_t soft = (uint64_t)rl.rlim_cur, hard = (uint64_t)rl.rlim_max, need = GCK_GO_ADDRESS_SPACE;
	if (rl.rlim_max != RLIM_INFINITY && (hard < soft || hard - soft < need)) {
		uint64_t used = mapped_bytes(), room = soft > used ? soft - used : 0;
		if (used > 0 && room >= 4 * need) {
			snprintf(go_note, sizeof go_note,
				 "the recorder's Go runtime takes %llu MiB of the address-space limit (ulimit -v: %llu MiB, "
				 "%llu MiB left before it loaded), which cannot be raised",
				 (unsigned long long)(need >> 20), (unsigned long long)(soft >> 20),
				 (unsigned long long)(room >> 20));
			gclock_go_note = go_note;
			return 1;
		}
		snprintf(go_why, sizeof go_why,
			 "the address-space limit (ulimit -v, RLIMIT_AS: soft %llu MiB, hard %llu MiB, %llu MiB left) "
			 "leaves too little room for the recorder's Go runtime, which takes %llu MiB of address space: "
			 "a hard limit that much above the soft one, or %llu MiB left, lets it record",
			 (unsigned long long)(soft >> 20), (unsigned long long)(hard >> 20),
			 (unsigned long long)(room >> 20), (unsigned long long)(need >> 20),
			 (unsigned long long)(4 * need >> 20));
		return 0;
	}
	rl.rlim_cur = (rlim_t)(soft + need);
	if (setrlimit(RLIMIT_AS, &rl) != 0) {
		snprintf(go_why, sizeof go_why, "cannot raise the address-space limit (ulimit -v) for the recorder's Go runtime: %s",
			 strerror(errno));
		return 0;
	}
	snprintf(go_note, sizeof go_note,
		 "the soft address-space limit (ulimit -v) was raised by %llu MiB, to %llu MiB, for the recorder's "
		 "Go runtime: the application keeps the room it had",
		 (unsigned long long)(need >> 20), (unsigned long long)((soft + need) >> 20));
	gclock_go_note = go_note;
	return 1;
}

/* go_path: libgclock-go.so beside this library, made absolute when the
 * library is loaded (LD_PRELOAD may name it relatively, and the program may
 * change its directory before MPI_Init). */
static char go_path[4200];

__attribute__((constructor)) static void gclock_go_locate(void)
{
	Dl_info di;
	char self[PATH_MAX];
	if (!dladdr((void *)&gclock_go_locate, &di) || di.dli_fname == NULL || realpath(di.dli_fname, self) == NULL)
		return;
	snprintf(go_path, sizeof go_path, "%s/libgclock-go.so", dirname(self));
}

/* GCK_GO_THREADS is how many threads the Go half may add to the process:
 * measured 2026-11-27, 4 with the rank bound to one core, 6 unbound on 2
 * cores (GOMAXPROCS, capped at 2 by pmpi/cgo.go), with room to spare. */
#define GCK_GO_THREADS 16

/* user_threads counts the threads of the real user (what RLIMIT_NPROC
 * counts) in /proc; -1 when it cannot. Only where the limit cannot be
 * raised: it reads one file per process of the machine. */
static long user_threads(void)
{
	DIR *d = opendir("/proc");
	if (d == NULL)
		return -1;
	uid_t me = getuid();
	long n = 0;
	struct dirent *e;
	char path[64], line[256];
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%.20s/status", e->d_name);
		FILE *f = fopen(path, "re");
		if (f == NULL)
			continue;
		long uid = -1, threads = 0;
		while (fgets(line, sizeof line, f) != NULL) {
			if (strncmp(line, "Uid:", 4) == 0)
				uid = strtol(line + 4, NULL, 10);
			else if (strncmp(line, "Threads:", 8) == 0)
				threads = strtol(line + 8, NULL, 10);
		}
		fclose(f);
		if (uid == (long)me)
			n += threads;
	}
	closedir(d);
	return n;
}

/* room_for_threads does for the thread limit (ulimit -u, RLIMIT_NPROC,
 * which counts every thread of the user) what room_for_go does for the
 * address space: the soft limit is raised by what the Go half adds, up to
 * the hard limit, so that the MPI library and the application keep the
 * threads they had (before, Open MPI's progress threads could not be made
 * in MPI_Init). Where it cannot be raised, the Go half is loaded only if
 * the user's threads leave room for every rank of a full node to add its
 * own (GCK_GO_ROOM). Root is not held to the limit. */
#define GCK_GO_ROOM 1024
static int room_for_threads(void)
{
	struct rlimit rl;
	if (geteuid() == 0 || getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1;
	if (rl.rlim_max != RLIM_INFINITY && (rl.rlim_max < rl.rlim_cur || rl.rlim_max - rl.rlim_cur < GCK_GO_THREADS)) {
		long used = user_threads();
		if (used >= 0 && (rlim_t)used + GCK_GO_ROOM <= rl.rlim_cur)
			return 1;
		snprintf(go_why, sizeof go_why,
			 "the thread limit (ulimit -u, RLIMIT_NPROC: soft %llu, hard %llu; %ld threads of this user "
			 "running) leaves no room for the recorder's Go runtime, which adds up to %d threads per rank: "
			 "a hard limit %d above the soft one, or a limit %d above the threads running, lets it record",
			 (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, used, GCK_GO_THREADS,
			 GCK_GO_THREADS, GCK_GO_ROOM);
		return 0;
	}
	rl.rlim_cur += GCK_GO_THREADS;
	if (setrlimit(RLIMIT_NPROC, &rl) != 0) {
		snprintf(go_why, sizeof go_why, "cannot raise the thread limit (ulimit -u) for the recorder's Go runtime: %s",
			 strerror(errno));
		return 0;
	}
	size_t k = strlen(go_note);
	snprintf(go_note + k, sizeof go_note - k, "%sthe soft thread limit (ulimit -u) was raised by %d, to %llu, for the "
		 "recorder's Go runtime: the application keeps the threads it had", k ? "; " : "", GCK_GO_THREADS,
		 (unsigned long long)rl.rlim_cur);
	gclock_go_note = go_note;
	return 1;
}

__attribute__((format(printf, 1, 2))) static int go_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(go_why, sizeof go_why, fmt, ap);
	va_end(ap);
	gclock_go_why = go_why;
	go_state = -1;
	free(go_before);
	go_before = NULL;
	go_nbefore = -1;
	return 0;
}

/* keep_nofile puts back the application's soft descriptor limit (ulimit
 * -n, RLIMIT_NOFILE), which the Go runtime's start raises to one below the
 * hard limit (Go's syscall package, for Go programs' own sake). The
 * application did not ask for it: it runs with the limit it was given (a
 * soft 1,024 under a hard 524,288, systemd's default, keeps descriptors
 * below select()'s FD_SETSIZE), and so do the children it starts. The
 * recorder needs no more descriptors than it had. */
static void keep_nofile(const struct rlimit *before)
{
	struct rlimit now;
	if (getrlimit(RLIMIT_NOFILE, &now) != 0 || now.rlim_cur == before->rlim_cur)
		return;
	now.rlim_cur = before->rlim_cur;
	(void)setrlimit(RLIMIT_NOFILE, &now);
}

/* ---- the Go runtime's own threads yield the rank's core --------------------
 * Each full buffer is handed to Go by a call from the rank's thread
 * (gclockGoFlush). The Go runtime answers every such call from C by waking
 * its monitor thread (sysmon sleeps deeply while no Go code runs), which
 * then takes back the P the call left behind and starts an idle M that
 * finds nothing to do: about six context switches per flush, each on the
 * rank's own core (the MPI library binds the rank, and the runtime's
 * threads inherit its CPU set), each preempting the rank (perf sched and
 * perf stat, AMG-like example, 2026-11-27: 2,430-2,750 switches per rank
 * against 1,470-1,960 with the hand-off dropped). The runtime's threads therefore
 * run at nice GCLOCK_GO_NICE (default 19): they still run, but no longer
 * preempt the rank when they wake (docs/explanation/recorder.md, "The Go runtime's
 * threads"). Which threads are the runtime's: those that appeared while the
 * Go half was loading and are blocked at an instruction of the Go half
 * (/proc/self/task/<tid>/syscall), so that a thread the application starts
 * meanwhile is never touched. Threads the runtime makes later inherit the
 * nice value of the thread that makes them: its own (sysmon, the template
 * thread) or, rarely, the rank's. Raising a nice value needs no privilege;
 * nothing here lowers one. */

#define GCK_GO_NICE_DEFAULT 19

/* go_nice_value reads GCLOCK_GO_NICE: 0 (leave the threads alone) to 19;
 * unset means the default; anything else is said in go_note and leaves
 * them alone. */
static int go_nice_value(void)
{
	const char *v = getenv("GCLOCK_GO_NICE");
	if (v == NULL || *v == '\0')
		return GCK_GO_NICE_DEFAULT;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno == 0 && end != v && *end == '\0' && n >= 0 && n <= 19)
		return (int)n;
	size_t k = strlen(go_note);
	snprintf(go_note + k, sizeof go_note - k,
		 "%sGCLOCK_GO_NICE=\"%.40s\": want a nice value from 0 (leave the Go runtime's threads at the "
		 "application's priority) to 19; they are left alone", k ? "; " : "", v);
	gclock_go_note = go_note;
	return 0;
}

/* task_ids lists the process's thread ids into *ids (malloc'ed, sorted
 * as read); returns their number, or -1. */
static int task_ids(pid_t **ids)
{
	*ids = NULL;
	DIR *d = opendir("/proc/self/task");
	if (d == NULL)
		return -1;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			pid_t *m = realloc(*ids, (size_t)cap * sizeof **ids);
			if (m == NULL) {
				free(*ids);
				*ids = NULL;
				closedir(d);
				return -1;
			}
			*ids = m;
		}
		(*ids)[n++] = (pid_t)strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	return n;
}

/* blocked_in says where thread tid is: 1 blocked in a system call made
 * from the object loaded at base, 0 blocked elsewhere (or gone), -1
 * running. The last field of /proc/self/task/<tid>/syscall is the
 * user-space instruction pointer of the call; the file reads "running"
 * while the thread runs. */
static int blocked_in(pid_t tid, const void *base)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return 0;
	char *got = fgets(line, sizeof line, f);
	fclose(f);
	if (got == NULL)
		return 0;
	if (strncmp(line, "running", 7) == 0)
		return -1;
	char *pc = strrchr(line, ' ');
	if (pc == NULL || strncmp(pc + 1, "0x", 2) != 0)
		return 0;
	Dl_info di;
	void *at = (void *)(uintptr_t)strtoull(pc + 1, NULL, 16);
	return dladdr(at, &di) != 0 && di.dli_fbase == base;
}

/* go_threads_nice gives nice to the threads that are not in before[0..nb)
 * and are blocked in the Go half (whose code holds the address in_go).
 * Threads still running are looked at again, up to 20 times 50 µs apart. */
static void go_threads_nice(int nice, const pid_t *before, int nb, const void *in_go)
{
	Dl_info di;
	if (nice <= 0 || nb < 0 || dladdr(in_go, &di) == 0)
		return;
	pid_t self = (pid_t)syscall(SYS_gettid);
	for (int round = 0; round < 20; round++) {
		pid_t *now;
		int n = task_ids(&now), pending = 0;
		for (int i = 0; i < n; i++) {
			pid_t t = now[i];
			int old = t == self;
			for (int j = 0; j < nb && !old; j++)
				old = before[j] == t;
			if (old)
				continue;
			errno = 0;
			int cur = getpriority(PRIO_PROCESS, (id_t)t);
			if (errno != 0 || cur >= nice)
				continue;
			int where = blocked_in(t, di.dli_fbase);
			pending += where < 0;
			if (where > 0)
				(void)setpriority(PRIO_PROCESS, (id_t)t, nice);
		}
		free(now);
		if (pending == 0)
			break;
		usleep(50);
	}
}

/* gclock_go_nice_again looks once more, at the end of MPI_Init, after the
 * recorder's start (epoch 0 ran the runtime hard), for runtime threads made
 * since the load, and forgets the list of the threads before it. Until
 * MPI_Init returns no other thread of the application can be in the Go
 * half (only MPI calls lead there), so a thread blocked in its code is one
 * of the runtime's. */
void gclock_go_nice_again(void)
{
	if (go_state > 0 && go_code != NULL)
		go_threads_nice(go_nice, go_before, go_nbefore, go_code);
	free(go_before);
	go_before = NULL;
	go_nbefore = -1;
}

int gclock_go_load(void)
{
	if (go_state != 0)
		return go_state > 0;
	if (__atomic_load_n(&go_registered, __ATOMIC_ACQUIRE)) {
		/* Linked together (the Go package's own tests): nothing to load. */
		gclock_go.ready();
		go_state = 1;
		return 1;
	}
	if (!room_for_go() || !room_for_threads()) {
		gclock_go_why = go_why;
		go_state = -1;
		return 0;
	}
	const char *path = go_path;
	if (*path == '\0')
		return go_fail("cannot find where libgclock.so is");
	struct rlimit nofile;
	int have_nofile = getrlimit(RLIMIT_NOFILE, &nofile) == 0;
	go_nice = go_nice_value();
	go_nbefore = go_nice > 0 ? task_ids(&go_before) : -1;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		return go_fail("cannot load the recorder's Go half: %s", dlerror());
	void (*ready)(void) = (void (*)(void))dlsym(h, "gclockGoReady");
	if (ready == NULL) {
		/* Not ours (a stale or foreign file): its constructors ran, and a
		 * Go runtime among them raised the descriptor limit. */
		if (have_nofile)
			keep_nofile(&nofile);
		return go_fail("%s has no gclockGoReady", path);
	}
	/* A call into Go waits until its runtime has started and its package
	 * initialisation, which registers the entry points, has run. */
	ready();
	go_code = (const void *)ready;
	go_threads_nice(go_nice, go_before, go_nbefore, go_code);
	if (have_nofile)
		keep_nofile(&nofile);
	if (!__atomic_load_n(&go_registered, __ATOMIC_ACQUIRE))
		return go_fail("%s did not register its entry points", path);
	go_state = 1;
	return 1;
}

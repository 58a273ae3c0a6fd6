/*
 * gonice.c: the nice value of every thread of a rank, by who runs it
 * (tests/gonice_test.go). An application thread started before MPI_Init and
 * one started after it wait on a pipe; after MPI_Init and STEPS barriers
 * (enough full buffers, with a small GCLOCK_BUFFER, for the recorder's Go
 * runtime to have woken all its threads) each rank prints one line per
 * thread:
 *
 *   thread RANK main NICE           the thread that called MPI_Init
 *   thread RANK app NICE            a thread this program started
 *   thread RANK in=OBJECT NICE      any other thread, by the object (file
 *                                   name) whose code made the system call
 *                                   it is blocked in, "running" if none
 *
 * usage: gonice [STEPS]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int wake[2];
static pid_t app_tid[2];

static void *waiter(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	char c;
	while (read(wake[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* object_of names the object whose code thread tid is blocked in. */
static void object_of(pid_t tid, char *out, size_t n)
{
	char path[64], line[512];
	snprintf(out, n, "running");
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;
	char *got = fgets(line, sizeof line, f);
	fclose(f);
	char *pc = got ? strrchr(line, ' ') : NULL;
	if (pc == NULL || strncmp(pc + 1, "0x", 2) != 0)
		return;
	Dl_info di;
	void *at = (void *)(uintptr_t)strtoull(pc + 1, NULL, 16);
	if (dladdr(at, &di) == 0 || di.dli_fname == NULL) {
		snprintf(out, n, "unknown");
		return;
	}
	const char *base = strrchr(di.dli_fname, '/');
	snprintf(out, n, "%s", base ? base + 1 : di.dli_fname);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 2000;
	pthread_t th[2];
	if (pipe(wake) != 0 || pthread_create(&th[0], NULL, waiter, &app_tid[0]) != 0)
		return 3;
	pid_t main_tid = (pid_t)syscall(SYS_gettid);
	MPI_Init(&argc, &argv);
	if (pthread_create(&th[1], NULL, waiter, &app_tid[1]) != 0)
		MPI_Abort(MPI_COMM_WORLD, 3);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < steps; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	usleep(20000); /* the runtime's threads back asleep */
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		pid_t t = (pid_t)atoi(e->d_name);
		errno = 0;
		int nice = getpriority(PRIO_PROCESS, (id_t)t);
		if (errno != 0)
			continue;
		char who[300];
		if (t == main_tid)
			snprintf(who, sizeof who, "main");
		else if (t == app_tid[0] || t == app_tid[1])
			snprintf(who, sizeof who, "app");
		else {
			char obj[256];
			object_of(t, obj, sizeof obj);
			snprintf(who, sizeof who, "in=%s", obj);
		}
		printf("thread %d %s %d\n", rank, who, nice);
	}
	if (d != NULL)
		closedir(d);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	if (write(wake[1], "xx", 2) != 2)
		MPI_Abort(MPI_COMM_WORLD, 3);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	MPI_Finalize();
	return 0;
}

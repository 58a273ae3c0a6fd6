/*
 * closefd.c: an application that closes file descriptors it does not own.
 * After MPI_Init each rank closes every descriptor that names a file in
 * GCLOCK_DIR (the recorder's rank file and sidecar, when preloaded) and
 * opens its own output files, which the kernel gives the lowest free
 * numbers: the ones just closed. It then writes its files while making
 * N 8-byte MPI_Allreduce calls (so the recorder flushes meanwhile) and
 * starts a thread that makes its own MPI calls (so the recorder makes a
 * thread buffer meanwhile), and checks that its files hold exactly what it
 * wrote. Rank 0 prints the result; how many descriptors each rank closed
 * goes to stderr ("closefd: rank R closed K").
 *
 * usage: closefd N   (GCLOCK_DIR set)
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NFILES 2

static void *thread_main(void *arg)
{
	long n = *(long *)arg;
	for (long i = 0; i < n; i++)
		MPI_Barrier(MPI_COMM_SELF);
	return NULL;
}

/* close_in_dir closes the descriptors naming files under dir. */
static int close_in_dir(const char *dir)
{
	int closed = 0;
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return 0;
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == self)
			continue;
		char link[64], target[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t k = readlink(link, target, sizeof target - 1);
		if (k <= 0)
			continue;
		target[k] = 0;
		if (strncmp(target, dir, strlen(dir)) == 0 && close(fd) == 0)
			closed++;
	}
	closedir(d);
	return closed;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	long n = argc > 1 ? atol(argv[1]) : 100000;
	const char *dir = getenv("GCLOCK_DIR");
	char own[4096];
	snprintf(own, sizeof own, "%s", dir != NULL ? dir : "/nonexistent");
	int closed = close_in_dir(own);
	fprintf(stderr, "closefd: rank %d closed %d\n", rank, closed);

	/* The application's own files: in the working directory. */
	int fds[NFILES];
	char names[NFILES][64];
	for (int f = 0; f < NFILES; f++) {
		snprintf(names[f], sizeof names[f], "own-%d-%d.txt", rank, f);
		fds[f] = open(names[f], O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fds[f] < 0) {
			perror(names[f]);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	pthread_t th;
	long tn = n / 10;
	if (provided == MPI_THREAD_MULTIPLE)
		pthread_create(&th, NULL, thread_main, &tn);
	int64_t in = rank + 1, out = 0, want = (int64_t)np * (np + 1) / 2;
	long ok = 0, lines = 0;
	for (long i = 0; i < n; i++) {
		MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		ok += out == want;
		if (i % 1000 == 0) {
			char line[64];
			int len = snprintf(line, sizeof line, "line %ld\n", i);
			for (int f = 0; f < NFILES; f++)
				if (write(fds[f], line, (size_t)len) != len)
					perror("write");
			lines++;
		}
	}
	if (provided == MPI_THREAD_MULTIPLE)
		pthread_join(th, NULL);

	/* Each file must hold exactly the lines written. */
	int intact = 1;
	for (int f = 0; f < NFILES; f++) {
		char want_line[64], got[64];
		off_t at = 0;
		for (long i = 0; i < n; i += 1000) {
			int len = snprintf(want_line, sizeof want_line, "line %ld\n", i);
			if (pread(fds[f], got, (size_t)len, at) != len || memcmp(got, want_line, (size_t)len) != 0)
				intact = 0;
			at += len;
		}
		if (lseek(fds[f], 0, SEEK_END) != at)
			intact = 0;
		close(fds[f]);
	}
	int all = 0;
	MPI_Allreduce(&intact, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (rank == 0)
		printf("sum %lld, %ld of %ld calls right, %ld lines per file, own files intact: %s\n",
		       (long long)out, ok, n, lines, all ? "yes" : "NO");
	MPI_Finalize();
	return 0;
}

/*
 * Durability test program (tests/durable_test.go, issue 12): every rank
 * calls MPI_Barrier(MPI_COMM_SELF) in a loop and, after each call has
 * returned, stores its count in a file it maps (count-<rank> in the
 * directory argv[1]: 8 bytes count, 8 bytes pid), so a test that kills
 * the process knows how many calls returned before the kill. argv[2]
 * selects the end: "loop" (until killed), "abort N" (rank 0 calls
 * MPI_Abort after N calls), "segv N" (the last rank dereferences NULL
 * after N calls).
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (argc < 3) {
		fprintf(stderr, "usage: killme DIR loop|abort N|segv N\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/count-%d", argv[1], rank);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 16) != 0) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	volatile int64_t *c = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED) {
		perror("mmap");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	c[1] = (int64_t)getpid();
	long n = argc > 3 ? atol(argv[3]) : 0;
	MPI_Barrier(MPI_COMM_WORLD); /* every counter file exists */
	for (int64_t i = 1;; i++) {
		MPI_Barrier(MPI_COMM_SELF);
		c[0] = i;
		if (n > 0 && i == n) {
			if (strcmp(argv[2], "abort") == 0 && rank == 0)
				MPI_Abort(MPI_COMM_WORLD, 3);
			if (strcmp(argv[2], "segv") == 0 && rank == np - 1) {
				volatile int *p = NULL;
				*p = 1;
			}
		}
	}
	MPI_Finalize();
	return 0;
}

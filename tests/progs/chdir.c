/*
 * chdir.c: changes its working directory to argv[1] right after MPI_Init
 * (or, with "before", right before it), then makes 100 8-byte MPI_Allreduce
 * calls; rank 0 prints the sum. With the default, relative GCLOCK_DIR the
 * trace must still land in (and be cleaned up in) the directory the
 * program started in; with a relative LD_PRELOAD the recorder must still
 * find its Go half.
 *
 * usage: chdir DIR [before]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int before = argc > 2 && strcmp(argv[2], "before") == 0;
	if (before && chdir(argv[1]) != 0) {
		perror("chdir");
		return 2;
	}
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 2 || (!before && chdir(argv[1]) != 0)) {
		perror("chdir");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double x = rank, y = 0;
	for (int i = 0; i < 100; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("sum %g\n", y);
	MPI_Finalize();
	return 0;
}

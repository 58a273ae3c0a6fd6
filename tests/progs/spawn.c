/*
 * spawn.c: the parent job makes N 8-byte MPI_Allreduce calls, spawns one
 * copy of this program (argument "child"), meets it in one MPI_Barrier on
 * the intercommunicator, disconnects, and makes N more; the child makes
 * N/2 calls on its own MPI_COMM_WORLD first. Rank 0 of each job prints one
 * line (parent and child lines may come in either order).
 *
 * usage: spawn N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm parent;
	MPI_Comm_get_parent(&parent);
	long n = argc > 1 ? atol(argv[1]) : 100;
	double x = rank, y = 0;
	if (parent == MPI_COMM_NULL) {
		for (long i = 0; i < n; i++)
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		char nbuf[32];
		snprintf(nbuf, sizeof nbuf, "%ld", n);
		char *cargv[] = {nbuf, "child", NULL};
		MPI_Comm inter;
		MPI_Comm_spawn(argv[0], cargv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
		MPI_Barrier(inter);
		MPI_Comm_disconnect(&inter);
		for (long i = 0; i < n; i++)
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (rank == 0)
			printf("parent sum %g\n", y);
	} else {
		for (long i = 0; i < n / 2; i++)
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(parent);
		MPI_Comm_disconnect(&parent);
		if (rank == 0)
			printf("child sum %g\n", y);
	}
	MPI_Finalize();
	return 0;
}

/*
 * pmpi_only.c: initialises MPI through PMPI_Init, as an MPI binding that
 * gclock does not wrap would (Open MPI's Fortran layer calls PMPI_* directly):
 * the recorder never sees MPI_Init and must say so at exit instead of
 * leaving nothing without a word.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (PMPI_Init(&argc, &argv) != MPI_SUCCESS)
		return 1;
	int rank;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Barrier(MPI_COMM_WORLD);
	printf("rank %d done\n", rank);
	PMPI_Finalize();
	return 0;
}

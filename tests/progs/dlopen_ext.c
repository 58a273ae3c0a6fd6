/*
 * dlopen_ext.c: a shared object linked against libmpi, loaded with dlopen
 * by dlopen_main.c after libmpi itself was dlopen'ed RTLD_GLOBAL, the way
 * Python's mpi4py (and Julia, R) use MPI. Its MPI calls bind to the
 * preloaded wrappers.
 */
#include <mpi.h>
#include <stdio.h>

int gclock_test_run(void)
{
	MPI_Init(NULL, NULL);
	int rank;
	double x = 1, y = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("sum %g\n", y);
	MPI_Finalize();
	return 0;
}

/*
 * apphandler.c: an application with its own SIGSEGV handler, installed
 * before MPI_Init (as codes that clean up or checkpoint on a crash do).
 * After one MPI_Allreduce, rank 1 writes through a null pointer; the handler prints
 * "apphandler: caught SIGSEGV" and ends the process with exit code 42.
 * Without the preload the MPI library keeps the application's handler;
 * the preload must not change that.
 *
 * usage: apphandler
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig)
{
	(void)sig;
	static const char m[] = "apphandler: caught SIGSEGV\n";
	if (write(2, m, sizeof m - 1) < 0)
		_exit(43);
	_exit(42);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double x = 1, y = 0;
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 1) {
		volatile int *volatile p = NULL; /* volatile: neither may be optimised away */
		*p = 1;
	}
	MPI_Finalize();
	return 0;
}

/*
 * nofile.c: prints the process's descriptor limit (RLIMIT_NOFILE) before
 * MPI_Init, after it and after MPI_Finalize, and the soft limit a child
 * started with system() sees (tests/limits_test.go).
 *
 * prints: "nofile before SOFT HARD", "nofile init SOFT HARD",
 * "nofile child SOFT", "nofile finalize SOFT HARD" (rank 0 only)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static void show(int rank, const char *when, const struct rlimit *r)
{
	if (rank == 0)
		printf("nofile %s %llu %llu\n", when, (unsigned long long)r->rlim_cur, (unsigned long long)r->rlim_max);
	fflush(stdout);
}

static void show_now(int rank, const char *when)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) == 0)
		show(rank, when, &r);
}

int main(int argc, char **argv)
{
	struct rlimit before;
	if (getrlimit(RLIMIT_NOFILE, &before) != 0)
		return 3;
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	show(rank, "before", &before);
	show_now(rank, "init");
	if (rank == 0 && system("printf 'nofile child %s\\n' \"$(ulimit -Sn)\"") != 0)
		return 2;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	show_now(rank, "finalize");
	return 0;
}

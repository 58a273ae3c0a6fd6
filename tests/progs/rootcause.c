/* rootcause: the propagated-delay program of docs/explanation/rootcause.md. Each
 * iteration: a balanced phase ending in an 8-byte MPI_Allreduce, a phase
 * SLOW times longer on rank SLOWRANK only ending in a ring halo exchange
 * (Irecv/Isend/Waitall), a balanced phase ending in a second Allreduce.
 * Ranks 1 and 3 wait for rank 2 in the Waitall and then arrive late at the
 * second Allreduce, where rank 0 waits for them: the only root cause is
 * rank 2's slow phase. Compute is nanosleep, so oversubscribed ranks
 * leave the cores to each other.
 *   rootcause [iterations] [phase-us] [slow-factor]   (slow-factor 1: balanced)
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOWRANK 2

static void compute(double us) {
    struct timespec ts = {(time_t)(us / 1e6), (long)((us - (double)(time_t)(us / 1e6) * 1e6) * 1e3)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static double balanced_phase(double us) { /* the first and third phase */
    compute(us);
    return 1.0;
}

static void slow_phase(int rank, double us, double slow) { /* rank 2's late work */
    compute(rank == SLOWRANK ? us * slow : us);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    double us = argc > 2 ? atof(argv[2]) : 1000;
    double slow = argc > 3 ? atof(argv[3]) : 4;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double sum = 0, halo[2] = {0, 0}, out[2];
    for (int it = 0; it < iters; it++) {
        double x = balanced_phase(us), y;
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        slow_phase(rank, us, slow);
        MPI_Request req[4];
        out[0] = out[1] = y + rank;
        MPI_Irecv(&halo[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&halo[1], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(&out[0], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(&out[1], 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        x = balanced_phase(us) * (halo[0] + halo[1]);
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sum += y;
    }
    if (rank == 0) {
        printf("rootcause: %d ranks, %d iterations, sum %.0f\n", size, iters, sum);
    }
    MPI_Finalize();
    return 0;
}

/* mpidl.h: MPI called through dlopen()/dlsym() at run time, for tracemerge
 * under mpirun (package mpirt). No mpi.h: the few functions needed are
 * declared here for the two ABIs in use, Open MPI (handles are pointers to
 * the ompi_mpi_* objects) and MPICH and its derivatives (handles are int
 * constants). */
#ifndef GCK_MPIDL_H
#define GCK_MPIDL_H

#include <stddef.h>

/* gck_mpidl_open loads lib (NULL: choose from the launcher's environment)
 * and resolves the functions and handles; 0 on success, else -1 with a
 * message in err. */
int gck_mpidl_open(const char *lib, char *err, size_t errlen);
/* gck_mpidl_init calls MPI_Init_thread(MPI_THREAD_FUNNELED) and returns
 * this process's rank and the world size. */
int gck_mpidl_init(int *rank, int *size);
int gck_mpidl_send(const void *buf, int n, int dest, int tag);
int gck_mpidl_recv(void *buf, int n, int src, int tag);
/* gck_mpidl_iprobe: MPI_Iprobe; *flag set when a message waits. */
int gck_mpidl_iprobe(int src, int tag, int *flag);
/* gck_mpidl_isend starts one nonblocking send (one at a time);
 * gck_mpidl_test sets *flag when it has completed. */
int gck_mpidl_isend(const void *buf, int n, int dest, int tag);
int gck_mpidl_test(int *flag);
int gck_mpidl_finalize(void);
int gck_mpidl_abort(int code);
/* gck_mpidl_impl: "openmpi" or "mpich" after a successful open. */
const char *gck_mpidl_impl(void);

#endif

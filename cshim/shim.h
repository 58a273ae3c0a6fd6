/*
 * shim.h: the library's shared state, defined in shim.c and used by the
 * files of the one translation unit cshim/libgclock.c (not by the Go
 * half): whether the Go half started and finished, the world's rank, size
 * and group, the communicator table's lock and counter, the thread
 * buffers' list, lock and size, the events dropped, the private
 * communicators of the transport and the predefined handles. Hidden, like
 * gclock.h's declarations.
 */
#ifndef GCK_SHIM_H
#define GCK_SHIM_H

#include <pthread.h>

#include "gclock.h"

#pragma GCC visibility push(hidden)

extern int started;  /* Go start ran: epoch 1 and finish are owed */
extern int finished; /* finish ran */
extern int world_rank, world_size;
extern MPI_Group world_group;
extern pthread_mutex_t comm_mu;   /* the communicator table's writers (comms.c) */
extern uint32_t next_local;       /* next communicator local index */
extern pthread_mutex_t buf_mu;    /* the thread buffers' list (buffers.c) */
extern gclock_tbuf *all_bufs;
extern int buffer_events;         /* events per buffer half */
extern uint64_t dropped;          /* events not recorded (no buffer) */

/* The transport's private communicators (goside.c); tcomm[0] duplicates
 * MPI_COMM_WORLD. */
#define GCK_MAX_TCOMM 64
extern MPI_Comm tcomm[GCK_MAX_TCOMM];
extern int ntcomm;

/* Predefined handles: Open MPI's are addresses of objects in libmpi,
 * reached like every PMPI_* function through pointers (pmpi_gen.h) that
 * are found wherever libmpi is loaded (resolve.c), also when it was
 * dlopen()ed after this library; MPICH's are constants. */
extern MPI_Comm h_world, h_self, h_null;
extern MPI_Datatype h_double, h_byte, h_int, h_int64;
extern MPI_Info h_info_null;

#pragma GCC visibility pop

/* handles_resolve looks up every PMPI pointer still unresolved and fills
 * the h_* handles; 0 if a predefined object cannot be found (shim.c). */
static int handles_resolve(void);

#endif

/*
 * gclock C shim, the hand-written core. The unity build cshim/libgclock.c
 * compiles these files in this order (after hotpath.c and bytes.c, the
 * hot path's static inline helpers); each includes the headers declaring
 * what it uses from the others (docs/explanation/cshim.md):
 *
 *   shim.c       state shared by all of them (shim.h), predefined handles,
 *                guard
 *   timer.c      timers: clock_gettime variants, the calibrated TSC,
 *                MPI_Wtime, the injected clock error
 *   buffers.c    thread buffers in the file-backed sidecar (durability)
 *   comms.c      the communicator table, the communicator wrappers,
 *                resync points
 *   lifecycle.c  MPI_Init/_thread, MPI_Finalize, MPI_Abort, crash
 *                signals, selective tracing (MPI_Pcontrol)
 *   goside.c     what the Go side (pmpi/) calls: PMPI helpers for its own
 *                traffic, the loaded objects
 *
 * The collective, point-to-point and one-sided wrappers are generated
 * into wrappers_gen.c from the tables (collectives.tbl, p2p.tbl, rma.tbl),
 * with their rules in bytes.c, reqtable.c, requests.c, p2p_rules.c and
 * rma.c; after them the unity build compiles polls.c, reqscan.c, the
 * Fortran wrappers (fortran.c, fortran_gen.c), the sync's ping-pong loop
 * (pingpong.c), the flush event (flush.c), the column split (encode.c) and
 * the datatype size cache (typesize.c). resolve.c, compiled before all of them, finds libmpi's
 * PMPI functions.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <math.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "gclock.h"
#include "shim.h"

#include <fcntl.h>
#include <sys/mman.h>

/* ---- state ---------------------------------------------------------------- */

int gclock_active;
int gclock_mt = 1; /* until MPI_Init says otherwise */
GCK_TLS int gclock_tl_guard;
GCK_TLS gclock_tbuf *gclock_tl_buf;
GCK_TLS gclock_msg_slot gclock_msgs[GCK_MSG_SLOTS]; /* p2p_rules.h: matched probes */
GCK_TLS uint32_t gclock_msg_next;
gclock_comm_slot gclock_comms[GCK_COMM_SLOTS];
int gclock_timer_kind = GCK_TIMER_MONOTONIC;
int gclock_fake_on;
int gclock_tsc_fast;
int64_t gclock_fake_off;
double gclock_fake_k;
uint64_t gclock_tsc0;
int64_t gclock_tsc_ns0;
uint64_t gclock_tsc_mult;

int started;
int finished;
int world_rank = -1, world_size;
MPI_Group world_group;
pthread_mutex_t comm_mu = PTHREAD_MUTEX_INITIALIZER;
uint32_t next_local;
pthread_mutex_t buf_mu = PTHREAD_MUTEX_INITIALIZER;
gclock_tbuf *all_bufs;
int buffer_events = 32768;
uint64_t dropped;

MPI_Comm tcomm[GCK_MAX_TCOMM];
int ntcomm;

/* ---- predefined handles ----------------------------------------------------
 *
 * Open MPI's predefined handles are addresses of objects in libmpi, reached
 * like every PMPI_* function through pointers (pmpi_gen.h) that are found
 * wherever libmpi is loaded (resolve.c), also when it was dlopen()ed after
 * this library (Python's mpi4py, Julia, R, ...). MPICH's are constants. */

MPI_Comm h_world, h_self, h_null;
MPI_Datatype h_double, h_byte, h_int, h_int64;
MPI_Info h_info_null;

static int handles_resolve(void)
{
	(void)gclock_pmpi_resolve_all();
#ifdef OPEN_MPI
	if (gck_p_ompi_mpi_comm_world == 0 || gck_p_ompi_mpi_comm_self == 0 || gck_p_ompi_mpi_comm_null == 0 ||
	    gck_p_ompi_mpi_double == 0 || gck_p_ompi_mpi_byte == 0 || gck_p_ompi_mpi_int == 0 ||
	    gck_p_ompi_mpi_int64_t == 0 || gck_p_ompi_mpi_info_null == 0)
		return 0;
#endif
	h_world = MPI_COMM_WORLD;
	h_self = MPI_COMM_SELF;
	h_null = MPI_COMM_NULL;
	h_double = MPI_DOUBLE;
	h_byte = MPI_BYTE;
	h_int = MPI_INT;
	h_int64 = MPI_INT64_T;
	h_info_null = MPI_INFO_NULL;
	return 1;
}

MPI_Datatype gclock_byte_type(void) { return h_byte; }

/* ---- guard --------------------------------------------------------------- */

void gclock_guard_enter(void) { gclock_tl_guard++; }
void gclock_guard_leave(void) { gclock_tl_guard--; }

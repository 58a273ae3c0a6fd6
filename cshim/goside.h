/*
 * goside.h: what goside.c offers the other files of the one translation
 * unit beyond gclock.h's prototypes (static: only for files of
 * cshim/libgclock.c).
 */
#ifndef GCK_GOSIDE_H
#define GCK_GOSIDE_H

#include <mpi.h>

/* tc_get is the transport's private communicator tc, MPI_COMM_NULL when
 * there is none. */
static MPI_Comm tc_get(int tc);

#endif

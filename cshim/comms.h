/*
 * comms.h: what the communicator table (comms.c) offers the other files of
 * the one translation unit beyond gclock.h's prototypes (static: only for
 * files of cshim/libgclock.c).
 */
#ifndef GCK_COMMS_H
#define GCK_COMMS_H

#include "gclock.h"

/* comm_register enters comm in the table: its agreed id from the parent's
 * id and counter (or fixed_id), its rank, size and members, and tells the
 * Go half (comms.c). */
static gclock_comm_slot *comm_register(MPI_Comm comm, gclock_comm_slot *parent,
				       uint32_t counter, const char *kind,
				       uint64_t fixed_id);

#endif

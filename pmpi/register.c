/* register.c: the Go half registers its entry points with the C library
 * (libgclock.so, cshim/gobridge.c) from its package initialisation. */
#include "_cgo_export.h"
#include "gclock.h"

void gclock_go_register_all(void)
{
	static const gclock_go_api api = {
		.ready = gclockGoReady,
		.start = gclockGoStart,
		.flush = gclockGoFlush,
		.flush_wait = gclockGoFlushWait,
		.comm = gclockGoComm,
		.comm_freed = gclockGoCommFreed,
		.finish = gclockGoFinish,
		.resync = gclockGoResync,
	};
	gclock_go_register(&api);
}

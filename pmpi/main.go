// Command pmpi is built with -buildmode=c-shared into libgclock-go.so, the
// Go half of the gclock MPI trace recorder. The user LD_PRELOADs the C
// library libgclock.so (cshim/) into an unmodified MPI program; its
// MPI_Init wrappers load this library from the same directory
// (cshim/gobridge.c), and it reads the GCLOCK_* configuration, runs the
// clock synchronisation over PMPI at MPI_Init and MPI_Finalize, and writes
// one trace file per rank (package trace).
//
// No Go runtime starts in processes that never call MPI_Init. See
// docs/explanation/recorder.md ("Two libraries") for the user-facing description.
//
// containermaxprocs=0: GOMAXPROCS follows the rank's CPU affinity only, as
// before Go 1.25; the cgroup-aware default keeps two cgroup files open for
// the whole run, two descriptors an application near its limit (ulimit -n)
// would miss (docs/explanation/recorder.md, "Descriptor limit").
//
//go:debug containermaxprocs=0
package main

func main() {}

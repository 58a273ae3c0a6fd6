// Command pmpi is built with -buildmode=c-shared into libgclock.so, the
// gclock MPI trace recorder. It is LD_PRELOADed into an unmodified MPI
// program: the C shim (cshim/) wraps MPI_Init/Finalize, communicator
// creation and every blocking collective; this Go side reads the GCLOCK_*
// configuration, runs the clock synchronisation over PMPI at MPI_Init and
// MPI_Finalize, and writes one trace file per rank (package trace).
//
// The library stays inert in processes that never call MPI_Init. See
// docs/recorder.md for the user-facing description.
package main

func main() {}

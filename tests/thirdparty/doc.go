// Package thirdparty runs MPI programs that gclock's authors did not write
// for it under the LD_PRELOADed recorder (build/libgclock.so) and checks
// that (1) the program's own results are unchanged and (2) the trace it
// leaves is consistent: every rank file complete, every collective instance
// matched on all members of its communicator, and no clock-condition
// violation larger than the measured clock error.
//
// Programs: hpcc (the HPC Challenge suite from Debian's hpcc package: HPL,
// PTRANS, RandomAccess, FFT, STREAM, DGEMM, b_eff; it calls Allreduce,
// Bcast, Reduce, Barrier, Alltoall(v), Allgather, Comm_split/dup among
// others), ScaLAPACK's LU test driver xdlu (Debian's scalapack-mpi-test: a
// Fortran program over BLACS, run on Open MPI with 4 ranks and on MPICH
// with 2) and the bundled examples/amglike (checked here the same way).
//
// The tests need Open MPI's mpirun and mpicc and MPICH's mpiexec.mpich; a
// missing MPI is a failure with the command that installs it, never a skip.
package thirdparty

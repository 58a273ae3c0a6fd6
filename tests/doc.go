// Package tests holds the recorder's integration tests: they build
// build/libgclock.so (make lib), compile the C programs in progs/ with
// mpicc, run them under real mpirun with and without the preload, and read
// the resulting traces with package trace. They need Open MPI and fail
// (never skip) when mpirun or mpicc is missing.
package tests

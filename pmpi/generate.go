package main

//go:generate go run ./internal/wrapgen -table ../cshim/collectives.tbl -c ../cshim/wrappers_gen.c -h ../cshim/ops_gen.h -resolve-h ../cshim/pmpi_gen.h -resolve-c ../cshim/pmpi_gen.c -fortran ../cshim/fortran_gen.c

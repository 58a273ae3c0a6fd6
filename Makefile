# gclock build. `make` builds build/libgclock.so and build/tracemerge.
# MPI=openmpi (default) or MPI=mpich selects the mpi.h the shim compiles
# against; the library never links libmpi (PMPI_* are weak references
# resolved inside the MPI program).
MPI      ?= openmpi
GO       ?= go
ifeq ($(MPI),openmpi)
BUILD    ?= build
MPI_PC   := ompi
else
BUILD    ?= build/$(MPI)
MPI_PC   := mpich
endif
MPI_CFLAGS = $(shell pkg-config --cflags $(MPI_PC) 2>/dev/null)
# tracemerge writes OTF2 (--formats otf2) when libotf2 is installed
# (Debian: libotf2-trace-dev); evaluated when used, i.e. after setup.
GO_TAGS   = $(shell pkg-config --exists otf2 2>/dev/null && echo otf2)
# What `make test` needs beyond MPI (scripts/setup.sh installs it as root);
# iproute2 and util-linux give ip, unshare and nsenter to the namespace
# hosts (scripts/netns-hosts.sh); gfortran compiles the Fortran tests;
# mpich and libmpich-dev: the core integration tests run on MPICH too
# (Open MPI keeps the higher alternatives priority: mpirun stays Open MPI's).
# scalapack-mpi-test: ScaLAPACK's Fortran test drivers, built for both MPIs.
# slurmctld slurmd slurm-client: tests/slurm_test.go starts a one-node cluster.
TEST_PKGS = chromium hpcc libotf2-trace-dev otf2-tools python3-mpi4py iproute2 util-linux gfortran mpich libmpich-dev scalapack-mpi-test slurmctld slurmd slurm-client
GO_SRC   := $(shell find . -name '*.go' -not -path './build/*' 2>/dev/null) go.mod go.sum
C_SRC    := $(wildcard cshim/*.c cshim/*.h cshim/*.tbl cshim/*.def)

export OMPI_ALLOW_RUN_AS_ROOT ?= 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM ?= 1
export OMPI_MCA_rmaps_base_oversubscribe ?= 1

.PHONY: all setup test-setup bench-setup lib tracemerge test test-unit test-mpi demo bench clean fmt vet

all: setup lib tracemerge

setup:
	@MPI=$(MPI) bash scripts/setup.sh

lib: $(BUILD)/libgclock.so $(BUILD)/libgclock-go.so
tracemerge: $(BUILD)/tracemerge

# The Go half's cgo code #includes cshim/*.h; Go's build cache does not see
# those files, so a hash of cshim/ goes into CGO_CFLAGS.
CSHIM_HASH = $(shell cat $(C_SRC) 2>/dev/null | sha1sum | cut -c1-16)

# The hand-written shim sources are inputs too: every PMPI_* name they
# call gets a resolution pointer in pmpi_gen.c/h (wrapgen/resolve.go).
SHIM_HAND = $(filter-out %_gen.c %_gen.h,$(wildcard cshim/*.c cshim/*.h))
cshim/wrappers_gen.c cshim/ops_gen.h cshim/fortran_gen.c cshim/pmpi_gen.c cshim/pmpi_gen.h &: cshim/collectives.tbl cshim/p2p.tbl cshim/rma.tbl cshim/largecount.tbl trace/ops.go $(wildcard pmpi/internal/wrapgen/*.go) $(SHIM_HAND)
	cd pmpi && $(GO) generate ./...

# Only the packages linked into the library are prerequisites. The library
# is built under a temporary name and renamed into place, so programs that
# are running with the old one (tests, benchmarks in parallel) keep a whole
# file.
LIB_SRC := $(shell find pmpi trace clocksync -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum

# libgclock.so, the preloaded library, is C only (cshim/libgclock.c, one
# translation unit); the recorder's Go half, libgclock-go.so, sits next to
# it and is loaded at MPI_Init (cshim/gobridge.c, docs/explanation/architecture.md).
CC       ?= cc
# No -g: the library is built as cgo built it before (section 10 of make bench
# parses callgrind_annotate, which splits a function by source file with it).
SHIM_CFLAGS = -std=gnu11 -O2 -Wall -Wextra -fPIC -pthread $(MPI_CFLAGS) -Icshim
$(BUILD)/libgclock.so: $(C_SRC) cshim/wrappers_gen.c cshim/ops_gen.h cshim/fortran_gen.c cshim/pmpi_gen.c cshim/pmpi_gen.h
	@mkdir -p $(BUILD)
	$(CC) $(SHIM_CFLAGS) -shared -Wl,-soname,libgclock.so -o $@.tmp$$$$ cshim/libgclock.c -ldl -lm && mv -f $@.tmp$$$$ $@

# The recorder without the call-in-flight marker (docs/guide/crash-hang.md), for
# make bench's side-by-side rows (sections 1 and 10); the Go half is the
# one beside $(BUILD)/libgclock.so.
$(BUILD)/noinflight/libgclock.so: $(C_SRC) cshim/wrappers_gen.c cshim/ops_gen.h cshim/fortran_gen.c cshim/pmpi_gen.c cshim/pmpi_gen.h
	@mkdir -p $(BUILD)/noinflight
	$(CC) $(SHIM_CFLAGS) -DGCK_NO_INFLIGHT -shared -Wl,-soname,libgclock.so -o $@.tmp$$$$ cshim/libgclock.c -ldl -lm && mv -f $@.tmp$$$$ $@
	ln -sf ../libgclock-go.so $(BUILD)/noinflight/libgclock-go.so

# Linked against $(BUILD)/libgclock.so; at run time it binds to
# the libgclock.so already loaded (same soname), whichever MPI's.
$(BUILD)/libgclock-go.so: $(LIB_SRC) $(C_SRC) $(BUILD)/libgclock.so
	@mkdir -p $(BUILD)
	CGO_CFLAGS="$(MPI_CFLAGS) -O2 -DGCK_CSHIM=$(CSHIM_HASH)" CGO_LDFLAGS="-L$(BUILD)" $(GO) build -buildmode=c-shared -o $@.tmp$$$$ ./pmpi && mv -f $@.tmp$$$$ $@
	@rm -f $(BUILD)/libgclock*.h

$(BUILD)/tracemerge: $(GO_SRC)
	@mkdir -p $(BUILD)
	$(GO) build -tags "$(GO_TAGS)" -o $@ ./cmd/tracemerge

# Every test: unit, simulated network, real mpirun integration, on Open MPI
# and (the core integration tests, tests/mpis_test.go) MPICH.
# The test suite also needs Chromium (report screenshot), hpcc (a
# third-party MPI program) and libotf2 with otf2-print (the OTF2 export is
# built and read back); test-setup installs them when running as root,
# before `all` builds tracemerge, so it is built with OTF2.
# -p 1: one test binary at a time. The accuracy tests time µs against
# injected truth with more ranks than cores; another package's benchmark
# running beside them (go test's default on 2 cores) once stretched the
# 8-rank init sync from 50 ms to 58 s and its model missed by 10.7 µs.
test: test-setup all
	$(MAKE) MPI=mpich lib
	$(GO) vet -tags otf2 ./...
	CGO_CFLAGS="-O2 -DGCK_CSHIM=$(CSHIM_HASH)" $(GO) test -tags otf2 -count=1 -p 1 -timeout 14m ./...

test-setup:
	@MPI=$(MPI) SETUP_EXTRA="$(TEST_PKGS)" bash scripts/setup.sh

demo: all
	bash scripts/demo.sh

# Section 10 of the benchmarks counts instructions under valgrind's callgrind.
bench: bench-setup all $(BUILD)/noinflight/libgclock.so
	bash scripts/bench.sh

bench-setup:
	@MPI=$(MPI) SETUP_EXTRA="valgrind" bash scripts/setup.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf build out gclock-trace

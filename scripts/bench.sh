#!/usr/bin/env bash
# `make bench`: runs gclock's benchmarks on this machine (bench/cmd/gclockbench),
# prints the table and records it, with date, machine and git revision, in
# docs/benchmarks.md (the section for this machine class is replaced).
#
#   BENCH_QUICK=1   ~1-minute smoke run; its table goes to $BUILD/bench-quick.md,
#                   never into docs/benchmarks.md
#   BENCH_ONLY=1,4  run only these sections (1-10), or steps of one (1:benchInflight);
#                   not recorded in docs/ either
#   BENCH_DOC=path  record into another file
# The full run takes about 17 minutes on the 2-core CI-class VM (16m57s, 2026-11-25),
# plus about 19 for section 5's simulated hour at 16,384 ranks (18m52s at load 5-11, 2026-11-28).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}"
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"
BUILD="${BUILD:-build}"
mkdir -p "$BUILD"
doc="${BENCH_DOC:-}"
if [ -z "$doc" ]; then
  if [ "${BENCH_QUICK:-0}" = 1 ] || [ -n "${BENCH_ONLY:-}" ]; then
    doc="$BUILD/bench-quick.md"
  else
    doc=docs/benchmarks.md
  fi
fi
${GO:-go} build -o "$BUILD/gclockbench" ./bench/cmd/gclockbench
# Section 9 runs the goal programs under MPICH too, with the library built
# for it (build/mpich/libgclock.so).
if command -v mpicc.mpich >/dev/null && [ "$BUILD" = build ]; then
  make MPI=mpich lib >&2
fi
export BUILD
"$BUILD/gclockbench" -doc "$doc"
echo "bench: table recorded in $doc" >&2

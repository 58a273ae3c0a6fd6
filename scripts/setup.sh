#!/usr/bin/env bash
# Installs what gclock needs on Debian when it is missing: Open MPI (default)
# or MPICH (MPI=mpich). As root it runs apt-get; otherwise it prints the one
# command to run and fails. Used by `make`, `make test`, `make demo`.
set -euo pipefail
MPI="${MPI:-openmpi}"
case "$MPI" in
  openmpi) pkgs=(openmpi-bin libopenmpi-dev); probe() { command -v mpirun >/dev/null && pkg-config --exists ompi; } ;;
  mpich)   pkgs=(mpich libmpich-dev);          probe() { pkg-config --exists mpich; } ;;
  *) echo "setup: MPI=$MPI is not supported (use openmpi or mpich)" >&2; exit 2 ;;
esac
need=()
probe || need+=("${pkgs[@]}")
command -v go >/dev/null || { echo "setup: Go is not installed (need Go >= 1.22 on PATH)" >&2; exit 1; }
command -v cc >/dev/null || need+=(gcc)
# Installed, not merely known: a removed package keeps its config files and
# `dpkg -s` still succeeds for it ("deinstall ok config-files").
installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
for extra in ${SETUP_EXTRA:-}; do installed "$extra" || need+=("$extra"); done
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "setup: installing ${need[*]} (Debian packages)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  probe || { echo "setup: ${pkgs[*]} installed but MPI still not found by pkg-config" >&2; exit 1; }
else
  echo "setup: missing ${need[*]}; run: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi

#!/usr/bin/env bash
# Quick isolated build of a few sources plus a test file, without CMake, for developing
# one component while the rest of the tree is in flux. Usage:
#   scripts/devbuild.sh OUT.exe file1.cpp file2.cpp ...   (paths relative to the repo root)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1; shift
srcs=()
for f in "$@"; do srcs+=("$root/$f"); done
mpicxx -std=c++17 -O1 -g -Wall -Wextra -I"$root/src" -I"$root" -I/usr/include/eigen3 \
  $(pkg-config --cflags PETSc yaml-cpp hdf5-openmpi) \
  -DOPTISTEP_SOURCE_DIR="\"$root\"" -DOPTISTEP_BINARY_DIR="\"/tmp\"" -DOPTISTEP_VERSION="\"dev\"" \
  "${srcs[@]}" "$root/tests/mpi_main.cpp" -o "$out" \
  $(pkg-config --libs PETSc yaml-cpp hdf5-openmpi) -lmetis -lgtest -lpthread

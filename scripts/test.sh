#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the whole test suite
# (GoogleTest suites on 1, 2 and 4 ranks, and the executable end to end) with ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
# Open MPI refuses to run as root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$root/build"
ctest --output-on-failure "$@"

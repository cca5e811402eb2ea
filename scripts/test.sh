#!/usr/bin/env bash
# README command 2: installs what is missing, builds, fetches the CGAL demo meshes the
# suites read (scripts/fetch-meshes.sh: elephant's surface and TetGen mesh, armadillo's
# surface, its coarse TetGen mesh and its CGAL Mesh_3 mesh; a few seconds the first time, plus
# a few minutes to build scripts/mesh-volume.cpp), and runs the whole test suite (GoogleTest
# suites on 1, 2 and 4 ranks, and the executable end to end) with ctest. The suites that
# read those meshes skip when they are absent; here they must be present, so
# OPTISTEP_REQUIRE_MESHES makes an absent mesh a failure rather than a skip.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
"$root/scripts/fetch-meshes.sh" elephant.off elephant.1.node armadillo.off armadillo_coarse.1.node armadillo_mesh3.1.node
export OPTISTEP_REQUIRE_MESHES=1
# Open MPI refuses to run as root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$root/build"
ctest --output-on-failure "$@"

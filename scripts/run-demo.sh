#!/usr/bin/env bash
# README command 1: the main job. Installs what is missing, builds, fetches CGAL's
# elephant from Debian's libcgal-demo and tetrahedralizes it, then drops it on the
# ground on 2 MPI ranks. Frames go to out/elephant_drop/ (open elephant_drop.xdmf in
# ParaView). Extra arguments go to optistep (e.g. --set time.frames=24 -log_view).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" --target optistep
"$root/scripts/fetch-meshes.sh" elephant.1.node
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$root"
mpiexec --oversubscribe -n 2 build/src/optistep run configs/elephant_drop.yaml "$@"

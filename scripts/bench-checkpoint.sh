#!/usr/bin/env bash
# Checkpoint benchmark: write and read throughput (GB/s) of the checkpoint of a
# 1M-particle MPM state on 2 ranks, and the checkpoint write as a fraction of a step's
# time. It prints figures and asserts nothing (tests live in tests/); run it on a quiet
# machine, timings on a shared one vary by a factor of 2 or more.
#
# bench/checkpoint_bench builds the state (a snow box of CELLS^3 cells with PPC particles
# per cell, thrown onto a floor), times STEPS steps, then REPS checkpoint writes
# (collective HDF5, row hashes, flush, fsync, rename) and REPS restarts from the file
# (read, hash check, particles back to their ranks). Reads follow the write, so they are
# served from the page cache where the file system keeps one.
#
# Usage: scripts/bench-checkpoint.sh   (about 10 minutes on 2 cores: the steps dominate)
# Environment: BUILD_DIR (default build), MPIEXEC (default mpiexec), RANKS (default 2),
#   CELLS (default 50), PPC (default 8: 50^3 x 8 = 1,000,000 particles), STEPS (default 1),
#   REPS (default 3).
# Output: the table on stdout and in out/bench/checkpoint.md; the checkpoint itself in
#   out/bench/checkpoint/out/checkpoints/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mpiexec=${MPIEXEC:-mpiexec}
ranks=${RANKS:-2}
out=$root/out/bench
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

cd "$root"
echo "bench-checkpoint: building checkpoint_bench in $build" >&2
cmake --build "$build" --target checkpoint_bench -- -j2 >/dev/null
mkdir -p "$out"
rm -rf "$out/checkpoint"
"$mpiexec" --oversubscribe --bind-to none -n "$ranks" "$build/bench/checkpoint_bench" \
  --cells "${CELLS:-50}" --ppc "${PPC:-8}" --steps "${STEPS:-1}" --reps "${REPS:-3}" \
  --dir "$out/checkpoint" | grep -v '^optistep: restarting' | tee "$out/checkpoint.md"

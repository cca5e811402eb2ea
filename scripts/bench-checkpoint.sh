#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench checkpoint` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench checkpoint --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   BUILD_DIR, MPIEXEC as before. CELLS, PPC, STEPS, REPS, RANKS are fixed in the declaration
#   (50^3 cells x 8 particles, 1 step, 3 repetitions, 2 ranks); other sizes: run
#   build/bench/checkpoint_bench as `scripts/bench checkpoint --dry-run` prints it.
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
[[ -n ${CELLS:-}${PPC:-}${STEPS:-}${REPS:-} ]] && echo "bench-checkpoint.sh: CELLS, PPC, STEPS, REPS are no longer read (see above)" >&2
exec "$here/bench" checkpoint ${args[@]+"${args[@]}"} "$@"

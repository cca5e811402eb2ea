#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench contact-squeeze` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench contact-squeeze --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   FRAMES -> --frames, STEPS (steps per frame) -> --only steps_per_frame=..., RANKS -> --ranks.
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
list() { echo "${1// /,}"; }
[[ -n ${FRAMES:-} ]] && args+=(--frames "$FRAMES")
[[ -n ${STEPS:-} ]] && args+=(--only "steps_per_frame=$(list "$STEPS")")
[[ -n ${RANKS:-} ]] && args+=(--ranks "$RANKS")
exec "$here/bench" contact-squeeze ${args[@]+"${args[@]}"} "$@"

#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench constraint` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench constraint --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   FRAMES -> --frames, RANKS -> --ranks, METHODS (penalty constraint) -> --only method=...
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
list() { echo "${1// /,}"; }
[[ -n ${FRAMES:-} ]] && args+=(--frames "$FRAMES")
[[ -n ${RANKS:-} ]] && args+=(--ranks "$RANKS")
[[ -n ${METHODS:-} ]] && args+=(--only "method=$(list "$METHODS")")
exec "$here/bench" constraint ${args[@]+"${args[@]}"} "$@"

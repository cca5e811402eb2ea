#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench fem` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench fem --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   RANKS -> --ranks, METHODS -> --only method=..., BAR_FRAMES / ELEPHANT_FRAMES -> --frames
#   with --only scene=twisted_bar / elephant_drop (one of them at a time), BUILD_DIR.
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
list() { echo "${1// /,}"; }
[[ -n ${RANKS:-} ]] && args+=(--ranks "$RANKS")
[[ -n ${METHODS:-} ]] && args+=(--only "method=$(list "$METHODS")")
if [[ -n ${BAR_FRAMES:-} ]]; then args+=(--only scene=twisted_bar --frames "$BAR_FRAMES"); fi
if [[ -n ${ELEPHANT_FRAMES:-} ]]; then args+=(--only scene=elephant_drop --frames "$ELEPHANT_FRAMES"); fi
exec "$here/bench" fem ${args[@]+"${args[@]}"} "$@"

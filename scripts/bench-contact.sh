#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench contact` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench contact --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   RANKS -> --ranks, REPEATS -> --repeats.
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
[[ -n ${RANKS:-} ]] && args+=(--ranks "$RANKS")
[[ -n ${REPEATS:-} ]] && args+=(--repeats "$REPEATS")
exec "$here/bench" contact ${args[@]+"${args[@]}"} "$@"

#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench fem-ladder` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench fem-ladder --dry-run` lists its
# commands). This wrapper keeps the old environment variables working:
#   RANKS -> --ranks; METHODS -> --only method=... (newton, newton_gamg, newton_mg, lbfgs,
#   lbfgs_vcycle, dot: the package's newton-jacobi, newton-gamg, newton-mg, lbfgs,
#   lbfgs-vcycle, dot); BUILD_DIR.
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run, --only scene=...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
[[ -n ${RANKS:-} ]] && args+=(--ranks "$RANKS")
if [[ -n ${METHODS:-} ]]; then
  methods=()
  for m in $METHODS; do
    case $m in
      newton) methods+=(newton-jacobi) ;;
      *) methods+=("${m//_/-}") ;;
    esac
  done
  joined=$(IFS=,; echo "${methods[*]}")
  args+=(--only "method=$joined")
fi
exec "$here/bench" fem-ladder ${args[@]+"${args[@]}"} "$@"

#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench dot` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench dot --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   RANKS -> --ranks, SCENES -> --only scene=..., METHODS -> --only method=... (pn-pcg,
#   pn-gamg, pn-direct, lbfgs-h, lbfgs-pd, dot-K, dot-K-ovN, dot-K-lagN, dot-K-ovN-lagN as
#   declared), FRAMES -> --frames, OUT_DIR -> --out, BUILD_DIR.
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
list() { echo "${1// /,}"; }
[[ -n ${RANKS:-} ]] && args+=(--ranks "$RANKS")
[[ -n ${SCENES:-} ]] && args+=(--only "scene=$(list "$SCENES")")
[[ -n ${METHODS:-} ]] && args+=(--only "method=$(list "$METHODS")")
[[ -n ${FRAMES:-} ]] && args+=(--frames "$FRAMES")
[[ -n ${OUT_DIR:-} ]] && args+=(--out "$OUT_DIR")
exec "$here/bench" dot ${args[@]+"${args[@]}"} "$@"

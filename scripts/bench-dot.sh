#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench dot` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench dot --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   RANKS -> --ranks, SCENES -> --only scene=... (twisted_bar, elephant_drop, bar17k,
#   bar84k, bar781k, each bar also _stiff, _fast, _stiff_fast), METHODS -> --only
#   method=... (pn-pcg, pn-gamg, pn-direct, lbfgs-h, lbfgs-pd, and DOT's
#   dot[-K][-nN][-ovN][-lagN][-kN][-1lvl][-avg][-norefresh], e.g. dot, dot-4, dot-n2000-ov1),
#   FRAMES -> --frames, OUT_DIR -> --out, MESH_DIR -> OPTISTEP_MESH_CACHE (bar84k's and
#   bar781k's TetGen meshes), BUILD_DIR.
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
[[ -n ${MESH_DIR:-} ]] && export OPTISTEP_MESH_CACHE=$MESH_DIR
exec "$here/bench" dot ${args[@]+"${args[@]}"} "$@"

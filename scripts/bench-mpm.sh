#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench mpm` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench mpm --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   RANKS -> --ranks, VARIANTS (pn pnmf pnmg lbfgsh hot hotx) -> --only method=(newton,
#   newton-mf, newton-mg, lbfgs, hot, hotx: HOT with the coarsest level by sparse Cholesky),
#   E_MIDS -> --only E_mid=..., DXS (0.015 0.0075 0.005) -> --only dx=..., BAR_FRAMES ->
#   --frames, TIME_LIMIT -> --time-limit, SETS -> --set each, HOT_FULL=1 -> then
#   scripts/bench mpm-full.
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
list() { echo "${1// /,}"; }
[[ -n ${RANKS:-} ]] && args+=(--ranks "$RANKS")
if [[ -n ${VARIANTS:-} ]]; then
  methods=$(sed "s/\bpnmf\b/newton-mf/; s/\bpnmg\b/newton-mg/; s/\bpn\b/newton/; s/\blbfgsh\b/lbfgs/" <<<"$VARIANTS")
  args+=(--only "method=$(list "$methods")")
fi
[[ -n ${E_MIDS:-} ]] && args+=(--only "E_mid=$(list "$E_MIDS")")
[[ -n ${DXS:-} ]] && args+=(--only "dx=$(list "$DXS")")
[[ -n ${BAR_FRAMES:-} ]] && args+=(--frames "$BAR_FRAMES")
[[ -n ${TIME_LIMIT:-} ]] && args+=(--time-limit "$TIME_LIMIT")
for s in ${SETS:-}; do args+=(--set "$s"); done
if [[ ${HOT_FULL:-0} == 1 ]]; then
  "$here/bench" mpm ${args[@]+"${args[@]}"} "$@"
  exec "$here/bench" mpm-full "$@"
fi
exec "$here/bench" mpm ${args[@]+"${args[@]}"} "$@"

#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench xpbd` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench xpbd --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   PARTS (chain projections particles elephant efficiency cloth order) -> the suite parts
#   xpbd-chain, xpbd-projections, xpbd-particles, xpbd-elephant (also efficiency),
#   xpbd-cloth, xpbd-order, run one after the other; FRAMES -> --frames of xpbd-elephant,
#   SUBSTEPS -> its --only substeps=..., SKIP_NEWTON=1 drops its newton run; ORDER_FRAMES
#   -> --frames of xpbd-order. RANKS_ELEPHANT is fixed (2 ranks, 1 for the efficiency).
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
parts=${PARTS:-chain projections particles elephant efficiency cloth order}
done_elephant=0
for part in $parts; do
  extra=()
  case $part in
    chain | projections | particles | cloth) name=xpbd-$part ;;
    elephant | efficiency)
      ((done_elephant)) && continue
      done_elephant=1
      name=xpbd-elephant
      [[ -n ${FRAMES:-} ]] && extra+=(--frames "$FRAMES")
      methods=""
      [[ ${SKIP_NEWTON:-0} == 1 ]] || methods="newton"
      for n in ${SUBSTEPS:-10 40 100 400}; do methods+="${methods:+,}xpbd-$n"; done
      extra+=(--only "method=$methods") ;;
    order)
      name=xpbd-order
      [[ -n ${ORDER_FRAMES:-} ]] && extra+=(--only scene=elephant_drop_xpbd --frames "$ORDER_FRAMES") ;;
    *) echo "bench-xpbd.sh: unknown part $part" >&2; exit 1 ;;
  esac
  "$here/bench" "$name" ${extra[@]+"${extra[@]}"} "$@"
done
exit 0
exec "$here/bench" xpbd ${args[@]+"${args[@]}"} "$@"

#!/usr/bin/env bash
# Moved to the benchmark package: `scripts/bench async` (declared in
# scripts/optistep_bench/benchmarks.py; `scripts/bench async --dry-run` lists its commands).
# This wrapper keeps the old environment variables working:
#   FRAMES -> --frames, RANKS -> --ranks, SCENES -> --only scene=..., INTEGRATORS (newton
#   semi_implicit async) and EPSILONS -> --only method=(newton, semi_implicit, async-eps<E>).
# Further arguments go to scripts/bench (e.g. --quick, --out DIR, --dry-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
list() { echo "${1// /,}"; }
[[ -n ${FRAMES:-} ]] && args+=(--frames "$FRAMES")
[[ -n ${RANKS:-} ]] && args+=(--ranks "$RANKS")
[[ -n ${SCENES:-} ]] && args+=(--only "scene=$(list "$SCENES")")
if [[ -n ${INTEGRATORS:-} || -n ${EPSILONS:-} ]]; then
  methods=()
  for i in ${INTEGRATORS:-newton semi_implicit async}; do
    if [[ $i == async ]]; then
      for e in ${EPSILONS:-0 0.25 0.5 0.75 1}; do methods+=("async-eps$e"); done
    else
      methods+=("$i")
    fi
  done
  args+=(--only "method=$(list "${methods[*]}")")
fi
exec "$here/bench" async ${args[@]+"${args[@]}"} "$@"

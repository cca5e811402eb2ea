#!/usr/bin/env bash
# Share of the step time spent in self/body-body contact detection (Gast et al. 2015,
# Sec. 5.3; fem/SelfContact) on configs/two_spheres.yaml, on 1 and 2 ranks: the sums over
# all steps of stats.csv's t_ContactDetection (tree rebuilds, point-in-tet and
# closest-feature queries, at new positions; not the gather of the positions, a collective
# whose time is mostly the wait for the slowest rank; the maximum over ranks per step) and
# t_ContactTree (the rebuilds alone) against wall_s, with the steps' contact_evaluations and contact_skips
# (the line search's guard, Sec. 3.3). The target: detection under 20% of the step
# time. Not a test: it asserts nothing. The machine's load (uptime) is printed with the
# figures: on a shared machine the wall times move with it.
#
# Usage: scripts/bench-contact.sh   (env: RANKS="1 2", REPEATS=3, BUILD=build)
# Writes out/bench/contact.md and prints it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/bench-lib.sh"
RANKS=${RANKS:-"1 2"}
REPEATS=${REPEATS:-3}
BUILD=${BUILD:-build}
exe="$root/$BUILD/src/optistep"
out="$root/out/bench/contact"
mkdir -p "$out"
{
  echo "| ranks | run | wall s (24 frames) | detection s (share) | tree rebuilds s | contact evaluations | skipped by the guard | load (uptime) |"
  echo "|---|---|---|---|---|---|---|---|"
  for n in $RANKS; do
    for r in $(seq 1 "$REPEATS"); do
      dir="$out/np$n-$r"
      rm -rf "$dir"
      mpirun -np "$n" "$exe" run "$root/configs/two_spheres.yaml" --quiet \
        --set output.directory="$dir" >/dev/null
      s="$dir/stats.csv"
      wall=$(sum_column "$s" wall_s)
      echo "| $n | $r | $wall | $(share "$(sum_column "$s" t_ContactDetection)" "$wall") |" \
           "$(sum_column "$s" t_ContactTree) | $(sum_column "$s" contact_evaluations) |" \
           "$(sum_column "$s" contact_skips) | $(uptime | sed 's/.*load average: //') |"
    done
  done
} | tee "$out.md"

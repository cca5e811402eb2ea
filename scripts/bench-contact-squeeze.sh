#!/usr/bin/env bash
# Gast, Schroeder, Stomakhin, Jiang, Teran 2015 ("Optimization Integrator for Large Time
# Steps"), Fig. 13 timings on our code: the armadillo squeezed between 32 rigid cubes
# (configs/armadillo_squeeze.yaml; its mesh is made by scripts/fetch-meshes.sh, called
# here) at 1, 2, 4 and 8 steps per frame (time.dt = (1/24 s) / steps), on 1 and 2 ranks.
# The paper reports 46, 58, 88 and 117 s per frame single-threaded on its (finer) mesh;
# ours has 6832 nodes and 25072 tets. Per run: wall seconds per frame (stats.csv wall_s
# summed over the steps, over the frames), Newton iterations per step (outer_iterations,
# mean and max), the share of the wall time in self-contact detection (t_ContactDetection,
# of which tree rebuilds t_ContactTree; Sec. 5.3; the target: under 20%; the
# cubes' penalty is part of the energy and its derivatives, not of detection), and
# penetration (scripts/contact-report.py: per frame the deepest node inside a cube and the
# deepest surface node inside another part's tet, relative to the body's largest extent;
# worst and mean over the frames; the target: under 1%).
# Not a test: it asserts nothing. The machine's load (uptime) is printed with every row:
# on a shared machine the wall times move with it.
#
# Usage: scripts/bench-contact-squeeze.sh   (env: FRAMES=8 frames per run (the cubes touch
#        the hands in frame 3, t = 0.125 s), STEPS="1 2 4 8", RANKS="1 2", BUILD=build)
# Writes out/bench/contact-squeeze.md and prints it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/bench-lib.sh"
FRAMES=${FRAMES:-8}
STEPS=${STEPS:-"1 2 4 8"}
RANKS=${RANKS:-"1 2"}
BUILD=${BUILD:-build}
exe="$root/$BUILD/src/optistep"
out="$root/out/bench/contact-squeeze"
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$root/scripts/fetch-meshes.sh" armadillo_coarse.1.node >/dev/null
# contact-report.py's frame rows -> "worst% mean%" of column $1 (3: object, 6: self/body).
depth_stats() {
  awk -v c="$2" '$1 ~ /^[0-9]+$/ && NF >= 7 { p = $(c + 1); sub(/%/, "", p); s += p; n++;
                                             if (p > m) m = p }
                 END { printf "%.2f%% / %.2f%%", m, n ? s / n : 0 }' "$1"
}
{
  echo "| ranks | steps/frame | s/frame | Newton its/step (mean, max) | detection s (share of wall) | tree rebuilds s | cube depth worst / mean | self depth worst / mean | load (uptime) at start |"
  echo "|---|---|---|---|---|---|---|---|---|"
} > "$out.md"
cat "$out.md"
for n in $RANKS; do
  for k in $STEPS; do
    dir="$out/np$n-spf$k"
    rm -rf "$dir"
    load=$(uptime | sed 's/.*load average: //')
    dt=$(awk -v k="$k" 'BEGIN { printf "%.17g", 1 / (24 * k) }')
    mpirun -np "$n" "$exe" run "$root/configs/armadillo_squeeze.yaml" --quiet \
      --set time.frames="$FRAMES" --set time.dt="$dt" --set output.directory="$dir" >/dev/null
    s="$dir/stats.csv"
    wall=$(sum_column "$s" wall_s)
    its_max=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "outer_iterations") c = i; next }
                       $c > m { m = $c } END { print m + 0 }' "$s")
    python3 "$root/scripts/contact-report.py" "$dir" > "$dir/contact-report.txt"
    row="| $n | $k | $(awk -v w="$wall" -v f="$FRAMES" 'BEGIN { printf "%.2f", w / f }') |"
    row+=" $(column_mean "$s" outer_iterations), $its_max |"
    row+=" $(share "$(sum_column "$s" t_ContactDetection)" "$wall") | $(sum_column "$s" t_ContactTree) |"
    row+=" $(depth_stats "$dir/contact-report.txt" 3) | $(depth_stats "$dir/contact-report.txt" 6) | $load |"
    echo "$row" | tee -a "$out.md"
  done
done

#!/usr/bin/env bash
# XPBD benchmark (issue 14): XPBD with small steps (Macklin et al. 2019) on our code. It
# prints figures and asserts nothing (tests live in tests/); every figure is printed with
# the machine's `uptime` load, since timings on a shared machine vary by 2x or more.
#
#  1. The paper's hanging chain (Sec. 6.1, Figs. 3-4; configs/hanging_chain.yaml), light
#     (bottom 1 kg) and heavy (bottom 1e5 kg), at equal work: n substeps x 100/n iterations
#     per 1/60 s frame for n = 1 .. 100, 2 s; the constraint error (max_strain: the largest
#     |C| / l0, mean over the second second) and the top constraint's force estimate over
#     the carried weight. chain.csv, and chain.png (scripts/plot-xpbd-chain.py, with
#     Debian's python3-matplotlib).
#  2. Distance-constraint projections per second per core: a chain of 100000 particles,
#     10 substeps x 1 iteration, 1 rank (every rank steps every particle: more ranks do not
#     share a chain).
#  3. The elephant drop (configs/elephant_drop.yaml, FRAMES frames of 1/24 s, RANKS_ELEPHANT
#     ranks): backward Euler (newton, PN-PCG) at the frame step against XPBD at 10, 40, 100
#     and 400 substeps: wall time per frame, the largest volume change max |J - 1| over the
#     tets of all frames written (h5dump of the frames' J), and for XPBD the tet-constraint
#     projections (2 per tet and pass) per second per rank (XpbdProject phase).
#  4. Parallel efficiency from 1 to 2 ranks: XPBD on the elephant at 400 substeps.
#
# Usage: scripts/bench-xpbd.sh
# Environment: BUILD_DIR (default build), MPIEXEC (default mpiexec), FRAMES (default 8),
#   RANKS_ELEPHANT (default 2), SUBSTEPS (default "10 40 100 400"), SKIP_NEWTON (1: no
#   backward-Euler run).
# Output: out/bench/xpbd/ (runs, chain.csv, elephant.csv, xpbd.md: the tables, also on stdout).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mpiexec=${MPIEXEC:-mpiexec}
frames=${FRAMES:-8}
ranks_elephant=${RANKS_ELEPHANT:-2}
substeps_list=${SUBSTEPS:-"10 40 100 400"}
out=$root/out/bench/xpbd
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
cd "$root"
echo "bench-xpbd: building optistep in $build" >&2
cmake --build "$build" --target optistep -- -j2 >/dev/null
scripts/fetch-meshes.sh elephant.1.node
mkdir -p "$out"
source "$root/scripts/bench-lib.sh"  # column_mean

load() { uptime | sed 's/.*load average: //'; }
optistep() { "$build/src/optistep" "$@"; }
report=$out/xpbd.md
: >"$report"
say() { echo "$*" | tee -a "$report"; }

# Mean of a stats.csv column over rows first..last (1-based, after the header).
column_mean_rows() {
  awk -F, -v name="$2" -v a="$3" -v b="$4" \
    'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next }
     NR - 1 >= a && NR - 1 <= b { s += $c; n++ } END { printf "%.6g", n ? s / n : 0 }' "$1"
}
column_sum() {
  awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next }
                        { s += $c } END { printf "%.6g", s }' "$1"
}
# max |J - 1| over the J datasets of every frame file in a folder.
max_volume_change() {
  for f in "$1"/frames/*.h5; do h5dump -d /J -y -w 0 "$f"; done |
    awk '/DATA \{/ { data = 1; next } /^ *\}/ { data = 0 }
         data { for (i = 1; i <= NF; ++i) { v = $i; sub(/,$/, "", v); d = v - 1; if (d < 0) d = -d; if (d > m) m = d } }
         END { printf "%.3g", m }'
}

# 1. The hanging chain at equal work.
say "## Hanging chain (Macklin et al. 2019, Sec. 6.1): n substeps x 100/n iterations per 1/60 s frame, 2 s"
say "load before: $(load)"
echo "bottom_kg,substeps,iterations,mean_max_strain,force_over_weight" >"$out/chain.csv"
say "| bottom mass (kg) | substeps x iterations | mean max |C|/l0 (1-2 s) | top force / weight (mean, 1-2 s) |"
say "|---|---|---|---|"
for bottom in 1 1e5; do
  weight=$(awk -v b="$bottom" 'BEGIN { printf "%.10g", (18 + b) * 9.81 }')
  for n in 1 2 5 10 20 50 100; do
    it=$((100 / n))
    dir=$out/chain_${bottom}_${n}x${it}
    rm -rf "$dir"
    optistep run configs/hanging_chain.yaml --set "chains.0.masses.0.mass=$bottom" \
      --set "xpbd.substeps=$n" --set "xpbd.iterations=$it" --set "output.directory=$dir" \
      --set output.every=1000 >"$dir.txt" 2>&1
    strain=$(column_mean_rows "$dir/stats.csv" max_strain 61 120)
    force=$(column_mean_rows "$dir/stats.csv" force_0 61 120)
    ratio=$(awk -v f="$force" -v w="$weight" 'BEGIN { printf "%.4f", f / w }')
    echo "$bottom,$n,$it,$strain,$ratio" >>"$out/chain.csv"
    say "| $bottom | $n x $it | $strain | $ratio |"
  done
done
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 scripts/plot-xpbd-chain.py "$out/chain.csv" "$out/chain.png" "$(load)"
  say "plot: $out/chain.png"
else
  say "plot: skipped (python3-matplotlib is not installed)"
fi

# 2. Distance-constraint projections per second per core.
say ""
say "## Distance-constraint projections per second per core (a 100000-particle chain, 10 substeps x 1, 1 rank)"
say "load before: $(load)"
dir=$out/long_chain
rm -rf "$dir"
optistep run configs/hanging_chain.yaml --set chains.0.count=100000 --set chains.0.masses=[] \
  --set xpbd.substeps=10 --set time.frames=20 --set "output.directory=$dir" --set output.every=1000 \
  >"$dir.txt" 2>&1
projections=$(column_sum "$dir/stats.csv" projections)
wall=$(column_sum "$dir/stats.csv" wall_s)
say "projections $projections in $wall s: $(awk -v p="$projections" -v w="$wall" 'BEGIN { printf "%.3g", p / w }') per second (target 1e7); load after: $(load)"

# 3. The elephant drop: backward Euler at the frame step against XPBD.
say ""
say "## Elephant drop, $frames frames of 1/24 s on $ranks_elephant ranks"
echo "method,ranks,wall_per_frame_s,max_volume_change,tet_projections_per_s_per_rank" >"$out/elephant.csv"
say "| method | wall per frame (s) | max \|J - 1\| over the frames | tet-constraint projections/s per rank | load before |"
say "|---|---|---|---|---|"
elephant() {  # name ranks extra-args...
  local name=$1 np=$2
  shift 2
  local before dir
  before=$(load)
  dir=$out/elephant_${name}_np$np
  rm -rf "$dir"  # frames of an earlier run would count in max |J - 1|
  "$mpiexec" -n "$np" --oversubscribe "$build/src/optistep" run configs/elephant_drop.yaml \
    --set "time.frames=$frames" --set "output.directory=$dir" "$@" >"$dir.txt" 2>&1 || true
  local wall change rate
  wall=$(column_mean "$dir/stats.csv" wall_s)
  change=$(max_volume_change "$dir")
  rate=-
  if grep -q XpbdProject "$dir/stats.csv"; then
    rate=$(awk -v p="$(column_sum "$dir/stats.csv" projections)" -v t="$(column_sum "$dir/stats.csv" t_XpbdProject)" \
      -v n="$np" 'BEGIN { printf "%.3g", (t > 0 ? p / n / t : 0) }')
  fi
  echo "$name,$np,$wall,$change,$rate" >>"$out/elephant.csv"
  say "| $name | $wall | $change | $rate | $before |"
}
[[ ${SKIP_NEWTON:-0} == 1 ]] || elephant newton "$ranks_elephant"
for n in $substeps_list; do
  elephant "xpbd-$n" "$ranks_elephant" --set integrator=xpbd --set "xpbd.substeps=$n" \
    --set bodies.0.material.model=stable_neo_hookean
done

# 4. 1 -> 2 ranks.
say ""
say "## Parallel efficiency, XPBD 400 substeps on the elephant"
elephant xpbd-400 1 --set integrator=xpbd --set xpbd.substeps=400 --set bodies.0.material.model=stable_neo_hookean
t1=$(awk -F, '$1 == "xpbd-400" && $2 == 1 { print $3 }' "$out/elephant.csv" | tail -1)
t2=$(awk -F, '$1 == "xpbd-400" && $2 == 2 { print $3 }' "$out/elephant.csv" | tail -1)
if [[ -n $t1 && -n $t2 ]]; then
  say "1 -> 2 ranks: $t1 s -> $t2 s per frame, efficiency $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", a / (2 * b) }'); load after: $(load)"
fi

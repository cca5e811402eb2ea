#!/usr/bin/env bash
# XPBD benchmark: XPBD with small steps (Macklin et al. 2019) on our code. It
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
#     10 substeps x 1 iteration, 1 rank.
#  3. The elephant drop (configs/elephant_drop.yaml, FRAMES frames of 1/24 s, RANKS_ELEPHANT
#     ranks): backward Euler (newton, PN-PCG) at the frame step against XPBD at 10, 40, 100
#     and 400 substeps: wall time per frame, the largest volume change max |J - 1| over the
#     tets of all frames written (h5dump of the frames' J), and for XPBD the tet-constraint
#     projections (2 per tet and pass) per second per rank (XpbdProject phase).
#  4. Parallel efficiency from 1 to 2 ranks: XPBD on the elephant at 400 substeps; and
#     (`particles`) on the chains and cloths, split by METIS: the 100000-particle chain of 2
#     and configs/hanging_cloth.yaml (441 particles, 6 colors x 40 substeps of halo exchanges
#     per frame), wall per frame on 1 and 2 ranks.
#  5. The paper's Fig. 6: the hanging cloth (configs/hanging_cloth.yaml, k = 1e7 N/m, started
#     horizontal so it swings down), 3 s,
#     1 substep x 40 iterations against 40 substeps x 1 iteration per 1/60 s frame: the total
#     energy over time (stats.csv total_energy: kinetic + gravitational + springs' C^2/(2 alpha)),
#     cloth_energy.png (scripts/plot-xpbd-energy.py: the total and its kinetic +
#     gravitational part).
#  6. xpbd.order coloring against jacobi: configs/elephant_drop_xpbd.yaml, ORDER_FRAMES frames
#     (free fall: the exact solution keeps every tet at J = 1, so max |J - 1| is the constraint
#     error) on 1 and 2 ranks, coloring at the scene's 400 substeps, Jacobi at 400 and 800, and configs/stretched_cube.yaml under XPBD (stable Neo-Hookean,
#     100 substeps, 1 s: the stretch to 150%) on 2 ranks: wall per frame, halo exchanges per
#     step (stats.csv halo_exchanges), max |J - 1|, and each order's 1 -> 2 rank efficiency.
#
# Usage: scripts/bench-xpbd.sh
# Environment: BUILD_DIR (default build), MPIEXEC (default mpiexec), FRAMES (default 8),
#   RANKS_ELEPHANT (default 2), SUBSTEPS (default "10 40 100 400"), SKIP_NEWTON (1: no
#   backward-Euler run), PARTS (the parts to run, default "chain projections particles
#   elephant efficiency cloth order"; e.g. PARTS=cloth runs the Fig. 6 study alone), ORDER_FRAMES
#   (default 4).
# Output: out/bench/xpbd/ (runs, chain.csv, elephant.csv, cloth.csv, xpbd.md: the tables,
#   also on stdout).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mpiexec=${MPIEXEC:-mpiexec}
frames=${FRAMES:-8}
ranks_elephant=${RANKS_ELEPHANT:-2}
substeps_list=${SUBSTEPS:-"10 40 100 400"}
parts=" ${PARTS:-chain projections particles elephant efficiency cloth order} "
wants() { [[ $parts == *" $1 "* ]]; }
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
if wants chain; then
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
fi

# 2. Distance-constraint projections per second per core.
if wants projections; then
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
fi

# 4b. 1 -> 2 ranks on particle scenes (chains and cloths split by METIS).
particle_run() {  # name ranks frames extra-args...; prints the mean wall per frame
  local name=$1 np=$2 nframes=$3
  shift 3
  local dir=$out/particles_${name}_np$np
  rm -rf "$dir"
  "$mpiexec" -n "$np" --oversubscribe "$build/src/optistep" run "$@" --set "time.frames=$nframes" \
    --set "output.directory=$dir" --set output.every=1000 >"$dir.txt" 2>&1 || true
  column_mean "$dir/stats.csv" wall_s
}
if wants particles; then
say ""
say "## Parallel efficiency on particle scenes (split by METIS, colored Gauss-Seidel)"
say "| scene | 1 rank: wall per frame (s) | 2 ranks | efficiency | load before |"
say "|---|---|---|---|---|"
for scene in long_chain cloth; do
  before=$(load)
  if [[ $scene == long_chain ]]; then
    args=(configs/hanging_chain.yaml --set chains.0.count=100000 --set chains.0.masses=[] --set xpbd.substeps=10)
    n=20
  else
    args=(configs/hanging_cloth.yaml)
    n=60
  fi
  t1=$(particle_run "$scene" 1 "$n" "${args[@]}")
  t2=$(particle_run "$scene" 2 "$n" "${args[@]}")
  say "| $scene | $t1 | $t2 | $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", a / (2 * b) }') | $before |"
done
say "load after: $(load)"
fi

# 3. The elephant drop: backward Euler at the frame step against XPBD.
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
if wants elephant || wants efficiency; then
echo "method,ranks,wall_per_frame_s,max_volume_change,tet_projections_per_s_per_rank" >"$out/elephant.csv"
fi
if wants elephant; then
say ""
say "## Elephant drop, $frames frames of 1/24 s on $ranks_elephant ranks"
say "| method | wall per frame (s) | max \|J - 1\| over the frames | tet-constraint projections/s per rank | load before |"
say "|---|---|---|---|---|"
[[ ${SKIP_NEWTON:-0} == 1 ]] || elephant newton "$ranks_elephant"
for n in $substeps_list; do
  elephant "xpbd-$n" "$ranks_elephant" --set integrator=xpbd --set "xpbd.substeps=$n" \
    --set bodies.0.material.model=stable_neo_hookean
done
fi

# 4. 1 -> 2 ranks.
if wants efficiency; then
say ""
say "## Parallel efficiency, XPBD 400 substeps on the elephant"
wants elephant && [[ $substeps_list == *400* && $ranks_elephant == 2 ]] ||
  elephant xpbd-400 2 --set integrator=xpbd --set xpbd.substeps=400 --set bodies.0.material.model=stable_neo_hookean
elephant xpbd-400 1 --set integrator=xpbd --set xpbd.substeps=400 --set bodies.0.material.model=stable_neo_hookean
t1=$(awk -F, '$1 == "xpbd-400" && $2 == 1 { print $3 }' "$out/elephant.csv" | tail -1)
t2=$(awk -F, '$1 == "xpbd-400" && $2 == 2 { print $3 }' "$out/elephant.csv" | tail -1)
if [[ -n $t1 && -n $t2 ]]; then
  say "1 -> 2 ranks: $t1 s -> $t2 s per frame, efficiency $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", a / (2 * b) }'); load after: $(load)"
fi
fi

# 5. The paper's Fig. 6: the hanging cloth's energy, iterations against substeps.
if wants cloth; then
say ""
say "## Hanging cloth energy (Macklin et al. 2019, Fig. 6; k = 1e7 N/m), 3 s of 1/60 s frames"
say "load before: $(load)"
# The cloth starts horizontal (turned 90 degrees about x: the paper's Fig. 5 set-up), at rest
# and unstretched, 1.5 m up, and swings down about its two pinned corners. E0, at t = 0: the
# gravitational energy of its 439 free vertices of 1 g, 439 * 0.001 * 9.81 * 1.5 J.
e0=$(awk 'BEGIN { printf "%.6g", 439 * 0.001 * 9.81 * 1.5 }')
say "E0 (t = 0, at rest, unstretched: gravitational only) = $e0 J"
echo "substeps,iterations,energy_1s_J,energy_3s_J,constraint_energy_3s_J,motion_energy_3s_J,max_strain_3s" >"$out/cloth.csv"
say "| substeps x iterations | total energy after 1 s (J) | after 3 s (J) | of it springs' C^2/(2 alpha) at 3 s (J) | kinetic + gravitational at 3 s (J; E0 = $e0) | max \|C\|/l0 at 3 s | wall (s) |"
say "|---|---|---|---|---|---|---|"
labels=()
row() {  # stats.csv column row
  awk -F, -v name="$2" -v r="$3" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next } NR - 1 == r { print $c }' "$1"
}
for split in 1x40 40x1; do
  n=${split%x*} it=${split#*x}
  dir=$out/cloth_$split
  rm -rf "$dir"
  optistep run configs/hanging_cloth.yaml --set "xpbd.substeps=$n" --set "xpbd.iterations=$it" \
    --set "cloths.0.transform.rotate={axis: [1, 0, 0], angle_deg: 90}" \
    --set "output.directory=$dir" --set output.every=1000 >"$dir.txt" 2>&1
  e1=$(row "$dir/stats.csv" total_energy 60)
  e3=$(row "$dir/stats.csv" total_energy 180)
  c3=$(row "$dir/stats.csv" constraint_energy 180)
  strain=$(row "$dir/stats.csv" max_strain 180)
  motion=$(awk -v a="$e3" -v b="$c3" 'BEGIN { printf "%.4g", a - b }')
  echo "$n,$it,$e1,$e3,$c3,$motion,$strain" >>"$out/cloth.csv"
  say "| $n x $it | $e1 | $e3 | $c3 | $motion | $strain | $(column_sum "$dir/stats.csv" wall_s) |"
  labels+=("$n x $it" "$dir/stats.csv")
done
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 scripts/plot-xpbd-energy.py "$out/cloth_energy.png" "$(load)" "$e0" "${labels[@]}"
  say "plot: $out/cloth_energy.png"
else
  say "plot: skipped (python3-matplotlib is not installed)"
fi
fi

# 6. Coloring against Jacobi.
if wants order; then
say ""
say "## xpbd.order: coloring against jacobi"
echo "scene,order,ranks,wall_per_frame_s,halo_exchanges_per_step,max_volume_change" >"$out/order.csv"
say "| scene | order | ranks | wall per frame (s) | halo exchanges per step | max \|J - 1\| | load before |"
say "|---|---|---|---|---|---|---|"
order_run() {  # scene order ranks extra-args...
  local scene=$1 order=$2 np=$3
  shift 3
  local before dir wall halo change
  before=$(load)
  dir=$out/order_${scene}_${order}_np$np
  rm -rf "$dir"
  "$mpiexec" -n "$np" --oversubscribe "$build/src/optistep" run "configs/$scene.yaml" --set integrator=xpbd \
    --set "xpbd.order=$order" --set "output.directory=$dir" --set output.every=1000 "$@" >"$dir.txt" 2>&1 || true
  wall=$(column_mean "$dir/stats.csv" wall_s)
  halo=$(column_mean "$dir/stats.csv" halo_exchanges)
  change=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "volume_change") c = i; next }
                    $c > m { m = $c } END { printf "%.3g", m }' "$dir/stats.csv")
  echo "$scene,$order,$np,$wall,$halo,$change" >>"$out/order.csv"
  say "| $scene $* | $order | $np | $wall | $halo | $change | $before |"
}
order_frames=${ORDER_FRAMES:-4}
# Jacobi also at 800 substeps: at the scene's 400 it does not hold the rest shape in free fall.
for variant in coloring:400 jacobi:400 jacobi:800; do
  order=${variant%:*} n=${variant#*:}
  for np in 1 2; do
    order_run elephant_drop_xpbd "$order" "$np" --set "time.frames=$order_frames" --set "xpbd.substeps=$n"
    sed -i '$ s/^elephant_drop_xpbd,/elephant_drop_xpbd_'"$n"',/' "$out/order.csv"
  done
done
for order in coloring jacobi; do
  order_run stretched_cube "$order" 2 --set time.frames=24 --set xpbd.substeps=100 \
    --set bodies.0.material.model=stable_neo_hookean
done
for variant in coloring:400 jacobi:400 jacobi:800; do
  order=${variant%:*} n=${variant#*:}
  t1=$(awk -F, -v s="elephant_drop_xpbd_$n" -v o="$order" '$1 == s && $2 == o && $3 == 1 { print $4 }' "$out/order.csv")
  t2=$(awk -F, -v s="elephant_drop_xpbd_$n" -v o="$order" '$1 == s && $2 == o && $3 == 2 { print $4 }' "$out/order.csv")
  say "$order, $n substeps, elephant 1 -> 2 ranks: $t1 s -> $t2 s per frame, efficiency $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", a / (2 * b) }')"
done
say "load after: $(load)"
fi

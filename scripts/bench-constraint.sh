#!/usr/bin/env bash
# Constraint collisions (gradient projection, Gast et al. 2015 Sec. 3.2) against the
# penalty ground (Sec. 5.2) on the same drop: configs/sphere_drop.yaml (4025 nodes, 16425
# tets) at one backward-Euler step per 1/24 s frame, with collision_objects[0].method
# penalty and constraint, on 1 and 2 ranks: seconds per frame, Newton iterations and CG
# iterations per step, and the lowest node at the end (m: the penalty's depth, 0 for the
# constraint). Not a test: it asserts nothing.
# The machine's load (uptime) is printed with every figure: on a shared machine the wall
# times move with it.
#
# Usage: scripts/bench-constraint.sh   (env: FRAMES=12 frames per run, RANKS="1 2",
#        METHODS="penalty constraint", BUILD=build). The ball meets the ground in frame 4.
# Writes out/bench/constraint.md and prints it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/bench-lib.sh"
FRAMES=${FRAMES:-12}
RANKS=${RANKS:-"1 2"}
METHODS=${METHODS:-"penalty constraint"}
BUILD=${BUILD:-build}
exe="$root/$BUILD/src/optistep"
out="$root/out/bench/constraint"
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
table="$root/out/bench/constraint.md"
{
  echo "# Penalty and constraint ground, configs/sphere_drop.yaml ($FRAMES frames at 24 Hz; $(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "| method | ranks | s/frame | Newton its/step | CG its/step | lowest node at the end (m) | load (1-min avg, uptime) at start |"
  echo "|---|---|---|---|---|---|---|"
} > "$table"
for ranks in $RANKS; do
  for method in $METHODS; do
    dir="$out/${method}_np${ranks}"
    rm -rf "$dir"
    load=$(uptime | sed 's/.*load average: //; s/,.*//')
    mpiexec --oversubscribe --bind-to none -n "$ranks" "$exe" run "$root/configs/sphere_drop.yaml" \
      --set "collision_objects.0.method=$method" --set "time.frames=$FRAMES" \
      --set "output.directory=$dir" >"$dir.log" 2>&1
    stats="$dir/stats.csv"
    wall=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "wall_s") c = i; next } { s += $c } END { printf "%.3f", s }' "$stats")
    per_frame=$(awk -v w="$wall" -v f="$FRAMES" 'BEGIN { printf "%.3f", w / f }')
    newton=$(column_mean "$stats" outer_iterations)
    cg=$(column_mean "$stats" inner_iterations)
    # The last frame's positions: the lowest y of the ball.
    last=$(ls "$dir"/frames/*.h5 | sort | tail -1)
    h5dump -d /positions -y -w 0 -o "$dir/positions.txt" "$last" >/dev/null
    lowest=$(python3 -c "import re, sys
v = [float(t) for t in re.split(r'[,\s]+', open(sys.argv[1]).read().strip()) if t]
print('%.3e' % min(v[1::3]))" "$dir/positions.txt")
    echo "| $method | $ranks | $per_frame | $newton | $cg | $lowest | $load |" >>"$table"
  done
done
cat "$table"

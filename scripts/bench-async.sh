#!/usr/bin/env bash
# Table 2 of Schroeder, Kwatra, Zheng, Fedkiw 2010 ("Asynchronous Evolution for
# Fully-Implicit and Semi-Implicit Time Integration") on our code: seconds per frame and
# steps (substeps) per frame of each integrator on the elastic sphere dropped on the ground
# (configs/sphere_drop.yaml), the same sphere with one sliver tet
# (configs/sphere_drop_sliver.yaml) and the armadillo dropped on the ground
# (configs/armadillo_drop.yaml; its mesh is made by scripts/fetch-meshes.sh, called here),
# on 1 and 2 ranks. Not a test: it asserts nothing.
# Where the time goes: per frame, the seconds in the substeps (phase AsyncSubsteps; for
# semi_implicit all of it) and in the implicit solve (the rest: newton's step, async's
# coupled step), Newton iterations and CG iterations (stats.csv outer/inner_iterations).
#
# Integrators (INTEGRATORS): newton (backward_euler, one Newton-minimized step per frame at
# 24 Hz), semi_implicit (Sec. 3.1, at its CFL step) and async (Secs. 4-5, one async step
# per frame: surface-layer substeps at their CFL step, then the coupled Newton step; with
# async.epsilon in EPSILONS). steps/frame: the substeps for async.
# The machine's load (uptime) is printed with every figure: on a shared machine the wall
# times move with it.
#
# Usage: scripts/bench-async.sh   (env: FRAMES=1 frames per run, RANKS="1 2",
#        SCENES="sphere_drop sphere_drop_sliver armadillo_drop", INTEGRATORS="newton semi_implicit async",
#        EPSILONS="0 0.25 0.5 0.75 1", BUILD=build). FRAMES=6 takes the ball through impact
#        (t = 0.143 s); the first frame is free fall.
# Writes out/bench/async.md and prints it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/bench-lib.sh"
FRAMES=${FRAMES:-1}
RANKS=${RANKS:-"1 2"}
SCENES=${SCENES:-"sphere_drop sphere_drop_sliver armadillo_drop"}
INTEGRATORS=${INTEGRATORS:-"newton semi_implicit async"}
EPSILONS=${EPSILONS:-"0 0.25 0.5 0.75 1"}
BUILD=${BUILD:-build}
exe="$root/$BUILD/src/optistep"
out="$root/out/bench/async"
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[[ " $SCENES " == *" armadillo_drop "* ]] && "$root/scripts/fetch-meshes.sh" armadillo_mesh3.1.node >/dev/null
table="$root/out/bench/async.md"
{
  echo "# Schroeder et al. 2010, Table 2, on optistep ($FRAMES frame(s) at 24 Hz per run; $(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "| scene | integrator | ranks | s/frame | steps/frame | substeps s/frame | implicit s/frame | Newton its/frame | CG its/frame | load (1-min avg, uptime) at start |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
for scene in $SCENES; do
  for ranks in $RANKS; do
    for name in $INTEGRATORS; do
      runs=("$name")
      [[ $name == async ]] && runs=($(for e in $EPSILONS; do echo "async:$e"; done))
      for run in "${runs[@]}"; do
        integrator=${run%%:*}
        [[ $integrator == newton ]] && integrator=backward_euler
        extra=()
        label=$name
        if [[ $run == async:* ]]; then
          extra=(--set "async.epsilon=${run#async:}")
          label="async (epsilon ${run#async:})"
        fi
        dir="$out/${scene}_${run/:/_eps}_np${ranks}"
        rm -rf "$dir"
        load=$(uptime | sed 's/.*load average: //; s/,.*//')
        mpiexec --oversubscribe --bind-to none -n "$ranks" "$exe" run "$root/configs/$scene.yaml" \
          --set "integrator=$integrator" --set "time.frames=$FRAMES" --set "output.directory=$dir" \
          "${extra[@]}" >"$dir.log" 2>&1
        stats="$dir/stats.csv"
        steps=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "substeps") c = i; next }
                         { s += (c ? $c : 1) } END { print s }' "$stats")
        wall=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "wall_s") c = i; next } { s += $c } END { printf "%.3f", s }' "$stats")
        per_frame=$(awk -v w="$wall" -v f="$FRAMES" 'BEGIN { printf "%.3f", w / f }')
        # Per frame: substeps' seconds (semi_implicit: all), the implicit solve's (the
        # rest), Newton and CG iterations.
        split=$(awk -F, -v f="$FRAMES" -v m="$integrator" '
          NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
          { w += $c["wall_s"]; s += (m == "semi_implicit") ? $c["wall_s"] : $c["t_AsyncSubsteps"]
            o += (m == "semi_implicit") ? 0 : $c["outer_iterations"]; n += $c["inner_iterations"] }
          END { printf "%.3f | %.3f | %.1f | %.1f", s / f, (w - s) / f, o / f, n / f }' "$stats")
        echo "| $scene | $label | $ranks | $per_frame | $((steps / FRAMES)) | $split | $load |" >>"$table"
      done
    done
  done
done
cat "$table"

#!/usr/bin/env bash
# FEM size ladder: how the time per step grows with the mesh, per method, on 1 and 2 ranks.
# It prints figures and asserts nothing (tests live in tests/); run it on a quiet machine.
#
# Scenes (the twisted bar of configs/twisted_bar.yaml on finer TetGen meshes of
# configs/meshes/bar_4x1x1.poly, made here with `tetgen -pq1.4a<V>` and kept in
# out/bench/ladder/meshes/, never committed):
#   bar_fast   E 1e5 Pa, nu 0.4, the ends at -/+pi rad/s
#   bar_stiff  E 1e7 Pa, nu 0.45, the ends at -/+0.1 pi rad/s
# Rungs (TetGen's maximum tet volume V, m^3, and the tets it gives):
#   1e-3 (10,307)  1e-4 (83,741)  1e-5 (781,257)  2e-6 (about 3.8M)
# Methods (same mesh, dt, steps and CN tolerance):
#   newton        PN-PCG, Jacobi (the default)
#   newton_gamg   PN-PCG, PETSc's GAMG (-newton_pc_type gamg)
#   newton_mg     PN-PCG, one V-cycle of the embedded-grid multigrid (solver.method: newton_mg)
#   lbfgs         LBFGS-H
#   lbfgs_vcycle  L-BFGS initialized by one V-cycle of the embedded-grid multigrid
#                 (solver.initializer: vcycle)
#   dot           DOT
# Per run (out/bench/ladder/<scene>_<V>_<method>_np<N>/: run.txt, stats.csv,
# log_view.txt, time.txt) one CSV row: unknowns, steps, wall seconds per step (stats.csv),
# CPU seconds of the whole run over all ranks and its peak resident memory of the largest
# rank (/usr/bin/time around mpiexec), outer and inner iterations and initializer
# applications per step, dt halvings, hierarchy set-up and V-cycle seconds per step, and
# MPI messages and reductions per step (PETSc's -log_view totals over the run / steps).
#
# Usage: scripts/bench-fem-ladder.sh    (all rungs: hours; the two small ones: minutes)
# Environment: BUILD_DIR (default build), MPIEXEC (default mpiexec), RANKS (default "1 2"),
#   SCENES (default "bar_fast bar_stiff"), VOLUMES (default "1e-3 1e-4 1e-5 2e-6"),
#   METHODS (default "newton newton_mg lbfgs_vcycle"), FAST_FRAMES (default 8),
#   STIFF_FRAMES (default 4), EXTRA (more arguments for every run, e.g. -newton_mg_grid_ratio 3).
# Output: out/bench/ladder/ladder.csv, ladder.md, ladder.png (log-log time per step
#   against unknowns, one line per scene, method and rank count; needs python3-matplotlib).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mpiexec=${MPIEXEC:-mpiexec}
ranks=${RANKS:-"1 2"}
scenes=${SCENES:-"bar_fast bar_stiff"}
volumes=${VOLUMES:-"1e-3 1e-4 1e-5 2e-6"}
methods=${METHODS:-"newton newton_mg lbfgs_vcycle"}
fast_frames=${FAST_FRAMES:-8}
stiff_frames=${STIFF_FRAMES:-4}
read -r -a extra <<<"${EXTRA:-}"
out=$root/out/bench/ladder
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

cd "$root"
source "$root/scripts/bench-lib.sh"
echo "bench-fem-ladder: building optistep in $build" >&2
cmake --build "$build" --target optistep -- -j2 >/dev/null
mkdir -p "$out/meshes"

# The bar's mesh of maximum tet volume $1, made once.
bar_mesh() {
  local base=$out/meshes/bar_a$1
  if [[ ! -f $base.node ]]; then
    echo "bench-fem-ladder: tetgen -pq1.4a$1 bar_4x1x1.poly" >&2
    cp configs/meshes/bar_4x1x1.poly "$base.poly"
    tetgen -pq1.4a"$1"Q "$base.poly" >/dev/null
    mv "$base.1.node" "$base.node"
    mv "$base.1.ele" "$base.ele"
    rm -f "$base.1.face" "$base.1.edge" "$base.poly"
  fi
  echo "$base.node"
}

# Scene overrides of configs/twisted_bar.yaml for a scene name.
scene_args() {
  local w E nu frames
  case $1 in
    bar_fast) w=3.141592653589793 E=1e5 nu=0.4 frames=$fast_frames ;;
    bar_stiff) w=0.3141592653589793 E=1e7 nu=0.45 frames=$stiff_frames ;;
    *) echo "bench-fem-ladder: unknown scene '$1' (bar_fast, bar_stiff)" >&2; exit 1 ;;
  esac
  echo "--set time.frames=$frames --set bodies.0.material.E=$E --set bodies.0.material.nu=$nu" \
       "--set boundary_conditions.0.motion.0.rotate.angular_velocity=-$w" \
       "--set boundary_conditions.1.motion.0.rotate.angular_velocity=$w"
}

# Method name -> optistep arguments.
method_args() {
  case $1 in
    newton) echo "--set solver.method=newton" ;;
    newton_gamg) echo "--set solver.method=newton -newton_pc_type gamg" ;;
    newton_mg) echo "--set solver.method=newton_mg" ;;
    lbfgs) echo "--set solver.method=lbfgs" ;;
    lbfgs_vcycle) echo "--set solver.method=lbfgs --set solver.initializer=vcycle" ;;
    dot) echo "--set solver.method=dot" ;;
    *) echo "bench-fem-ladder: unknown method '$1'" >&2; exit 1 ;;
  esac
}

# PETSc -log_view: the total of a summary line ("MPI Msg Count:", "MPI Reductions:").
log_total() {
  awk -v key="$2" 'index($0, key) == 1 { v = $(NF); if (key ~ /Reductions/) v = $(NF - 1); print v; exit }' "$1"
}

csv=$out/ladder.csv
echo "scene,V,nodes,tets,unknowns,method,ranks,steps,s_per_step,cpu_s,max_rss_mb,outer_per_step,inner_per_step,init_per_step,halvings,hierarchy_s_per_step,vcycle_s_per_step,messages_per_step,reductions_per_step,load" >"$csv"
for scene in $scenes; do
  for V in $volumes; do
    mesh=$(bar_mesh "$V")
    for method in $methods; do
      for np in $ranks; do
        dir=$out/${scene}_${V}_${method}_np$np
        rm -rf "$dir"
        mkdir -p "$dir"
        echo "bench-fem-ladder: $scene, V $V, $method, $np rank(s)" >&2
        load=$(cut -d' ' -f1 /proc/loadavg)
        # shellcheck disable=SC2046
        if ! /usr/bin/time -f "%U %S %M" -o "$dir/time.txt" \
          "$mpiexec" --oversubscribe -n "$np" "$build/src/optistep" run configs/twisted_bar.yaml --quiet \
          --set "bodies.0.mesh=$mesh" $(scene_args "$scene") $(method_args "$method") \
          --set "output={directory: $dir, every: 1000000}" "${extra[@]}" \
          -log_view ":$dir/log_view.txt" >"$dir/run.txt" 2>&1; then
          echo "bench-fem-ladder: failed, see $dir/run.txt" >&2
          continue
        fi
        stats=$dir/stats.csv
        read -r nodes tets < <(awk '/ nodes, / { print $3, $5; exit }' "$dir/run.txt" | tr -d ,)
        steps=$(($(wc -l <"$stats") - 1))
        read -r user sys rss <"$dir/time.txt"
        messages=$(log_total "$dir/log_view.txt" "MPI Msg Count:")
        reductions=$(log_total "$dir/log_view.txt" "MPI Reductions:")
        echo "$scene,$V,$nodes,$tets,$((3 * nodes)),$method,$np,$steps,$(column_mean "$stats" wall_s)," \
             "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }'),$((rss / 1024))," \
             "$(column_mean "$stats" outer_iterations),$(column_mean "$stats" inner_iterations)," \
             "$(column_mean "$stats" initializer_applications),$(sum_column "$stats" halvings)," \
             "$(column_mean "$stats" t_HierarchyBuild),$(column_mean "$stats" t_VCycle)," \
             "$(awk -v m="$messages" -v n="$steps" 'BEGIN { printf "%.0f", m / n }')," \
             "$(awk -v r="$reductions" -v n="$steps" 'BEGIN { printf "%.0f", r / n }'),$load" |
          tr -d ' ' >>"$csv"
      done
    done
  done
done

{
  echo "## FEM size ladder ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), BLAS $(blas_name))"
  echo
  echo "s/step: mean wall seconds per step (stats.csv); cpu: user + system seconds of the whole run"
  echo "(set-up included) over all ranks; rss: peak of the largest rank; outer, inner, init: per step;"
  echo "msgs, reds: PETSc's MPI message and reduction totals over the run, per step."
  echo
  echo "| scene | tets | method | ranks | steps | s/step | cpu s | rss MB | outer | inner | init | halvings | hierarchy s | V-cycle s | msgs | reds | load |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s | %.3f | %s | %s | %.2f | %.1f | %.1f | %s | %.3f | %.3f | %s | %s | %s |\n",
                    $1, $4, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20 }' "$csv"
} >"$out/ladder.md"
cat "$out/ladder.md"

python3 - "$csv" "$out/ladder.png" <<'PY' || echo "bench-fem-ladder: no plot (python3-matplotlib?)" >&2
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
lines = {}
for r in rows:
    lines.setdefault((r["scene"], r["method"], r["ranks"]), []).append((int(r["unknowns"]), float(r["s_per_step"])))
fig, ax = plt.subplots(figsize=(7, 5))
for (scene, method, np), points in sorted(lines.items()):
    points.sort()
    ax.loglog(*zip(*points), marker="o", label=f"{scene} {method} np{np}")
ax.set_xlabel("unknowns (3 x nodes)")
ax.set_ylabel("wall seconds per step")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=7)
fig.savefig(sys.argv[2], dpi=120, bbox_inches="tight")
PY

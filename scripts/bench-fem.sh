#!/usr/bin/env bash
# FEM benchmark: where a time step's time goes, PN-PCG against LBFGS-H, on 1 and 2 ranks.
# It prints figures and asserts nothing (tests live in tests/); run it on a quiet machine,
# timings on a shared one vary by a factor of 2 or more.
#
# For configs/twisted_bar.yaml and configs/elephant_drop.yaml, a shortened run (--set
# time.frames=N) per method and rank count reports time per step, outer (Newton or
# L-BFGS) and inner (CG) iterations per step, L-BFGS initializer applications, and the
# time split by phase from stats.csv (the Os* PetscLogEvents; their -log_view is kept next
# to it). Methods (same mesh, dt, steps and CN tolerance):
#   newton  PN-PCG: projected Newton, Jacobi-PCG (the default)
#   lbfgs   LBFGS-H: L-BFGS (window 5) initialized by the projected Hessian at the step's
#           start, solved by Jacobi-PCG to relative tolerance 1/2 (--set solver.method=lbfgs)
# bench/fem_kernel_bench gives the element kernel throughput (energy + gradient +
# projected Hessian) in tets/s on one core.
#
# Usage: scripts/bench-fem.sh   (about 8 minutes on 2 cores)
# Environment: BUILD_DIR (default build), MPIEXEC (default mpiexec), RANKS (default
#   "1 2"), METHODS (default "newton lbfgs"), BAR_FRAMES (default 40 of 200),
#   ELEPHANT_FRAMES (default 12 of 48: 6 frames of free fall, then the impact).
# Output: out/bench/<scene>_<method>_np<N>/ (stats.csv, log_view.txt, run.txt), and the
#   table, as markdown, on stdout and in out/bench/fem.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mpiexec=${MPIEXEC:-mpiexec}
ranks=${RANKS:-"1 2"}
methods=${METHODS:-"newton lbfgs"}
bar_frames=${BAR_FRAMES:-40}
elephant_frames=${ELEPHANT_FRAMES:-12}
out=$root/out/bench
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

cd "$root"
echo "bench-fem: building optistep and fem_kernel_bench in $build" >&2
cmake --build "$build" --target optistep fem_kernel_bench -- -j2 >/dev/null
scripts/fetch-meshes.sh elephant.1.node
mkdir -p "$out"

# column_mean, share, blas_name
source "$root/scripts/bench-lib.sh"

runs_md=$out/runs.md
{
  echo "| scene | nodes / tets | method | ranks | steps | s/step | outer/step | inner/step" \
       "| init/step | halvings | Energy | Gradient | Hessian | Assembly | LinearSolve" \
       "| LineSearch | InitializerSetUp | InitializerApply | Hessian tets/s/core |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$runs_md"

for spec in "twisted_bar:$bar_frames" "elephant_drop:$elephant_frames"; do
  scene=${spec%%:*}
  frames=${spec##*:}
  for method in $methods; do
  for np in $ranks; do
    dir=$out/${scene}_${method}_np$np
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "bench-fem: $scene, $method, $frames frames, $np rank(s)" >&2
    "$mpiexec" --oversubscribe -n "$np" "$build/src/optistep" run "configs/$scene.yaml" --quiet \
      --set time.frames="$frames" --set solver.method="$method" \
      --set "output={directory: $dir, every: 1000000}" \
      -log_view ":$dir/log_view.txt" >"$dir/run.txt" 2>&1
    csv=$dir/stats.csv
    mesh=$(awk '/ nodes, / { print $3 " / " $5; exit }' "$dir/run.txt")
    steps=$(($(wc -l <"$csv") - 1))
    wall=$(column_mean "$csv" wall_s)
    halvings=$(awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$csv")
    row="| $scene | $mesh | $method | $np | $steps | $(printf %.3f "$wall")"
    row+=" | $(printf %.1f "$(column_mean "$csv" outer_iterations)")"
    row+=" | $(printf %.0f "$(column_mean "$csv" inner_iterations)")"
    row+=" | $(printf %.1f "$(column_mean "$csv" initializer_applications)") | $halvings"
    for phase in Energy Gradient Hessian Assembly LinearSolve LineSearch InitializerSetUp \
                 InitializerApply; do
      row+=" | $(share "$(column_mean "$csv" "t_$phase")" "$wall")"
    done
    # Hessians per step: one per Newton iteration; L-BFGS-H forms one per step (its
    # initializer). Over about tets/np tets per rank (ghost-layer duplicates left out),
    # element kernel and MatSetValuesBlockedLocal together.
    hessians=1
    [[ $method == newton ]] && hessians=$(column_mean "$csv" outer_iterations)
    t_hessian=$(column_mean "$csv" t_Hessian)
    row+=" | $(awk -v tets="${mesh##* }" -v np="$np" -v its="$hessians" -v t="$t_hessian" \
      'BEGIN { printf "%.3g", (t > 0 ? tets / np * its / t : 0) }')"
    echo "$row |" >>"$runs_md"
  done
  done
done

kernel_md=$out/kernel.md
{
  echo "| mesh | tets | energy+gradient tets/s | projected Hessian tets/s | total tets/s |"
  echo "|---|---|---|---|---|"
} >"$kernel_md"
for scene in twisted_bar elephant_drop; do
  echo "bench-fem: fem_kernel_bench $scene" >&2
  log=$out/kernel_$scene.txt
  "$build/bench/fem_kernel_bench" "configs/$scene.yaml" --reps 10 >"$log"
  awk -v scene="$scene" '
    /^fem_kernel_bench:/ { tets = $5 }
    /^energy\+gradient/  { eg = $(NF - 1) }
    /^projected Hessian/ { h = $(NF - 1) }
    /^total/             { t = $(NF - 1) }
    END { printf "| %s | %s | %.3g | %.3g | %.3g |\n", scene, tets, eg, h, t }' "$log" >>"$kernel_md"
done

{
  echo "## FEM benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), BLAS $(blas_name))"
  echo
  echo "Shortened runs: twisted_bar $bar_frames frames, elephant_drop $elephant_frames frames." \
       "Phase columns: mean seconds per step (share of the step's wall time), each the" \
       "maximum over ranks; Energy and Gradient include the calls made inside LineSearch;" \
       "InitializerSetUp (L-BFGS-H: the Hessian at the step's start) includes its Hessian" \
       "and Assembly; InitializerApply holds L-BFGS's inner CG. Hessian tets/s/core: tets" \
       "per rank x Hessians per step / Hessian time, in the run."
  echo
  cat "$runs_md"
  echo
  echo "Element kernels (bench/fem_kernel_bench, one core, best of 10, deformed state):"
  echo
  cat "$kernel_md"
} >"$out/fem.md"
cat "$out/fem.md"

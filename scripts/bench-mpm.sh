#!/usr/bin/env bash
# MPM benchmark: where an implicit MPM step's time goes, PN-PCG against PN-PCG(MF),
# PN-MGPCG, LBFGS-H and HOT, on 1 and 2 ranks. It prints figures and asserts nothing (tests live in tests/); run it on a
# quiet machine, timings on a shared one vary by a factor of 2 or more.
#
# Scene: HOT's twisting bar (Wang et al. 2020, Fig. 20) at dx = 0.015 m,
# configs/hot_twisting_bar_coarse.yaml (30720 particles; its solver.kappa = 1e-6, see
# there), with the middle box's Young's modulus E_mid in {1e5, 1e7, 1e9} Pa
# (--set bodies.1.material.E=...), for
#   PN-PCG      projected Newton, CG on the assembled BAIJ Hessian preconditioned by its
#               inverse 3x3 diagonal blocks, HOT's inexact-CG forcing (the defaults)
#   PN-PCG(MF)  the same with the Hessian applied matrix-free (--set mpm.matrix_free=true)
#   LBFGS-H     L-BFGS (window 8, HOT Sec. 7.1) initialized by the projected Hessian at the
#               step's start, solved by the same PCG to relative tolerance 1/2 (HOT's
#               baseline; --set solver.method=lbfgs)
#   PN-MGPCG    projected Newton whose CG is preconditioned by HOT's grid multigrid,
#               rebuilt every Newton iteration (HOT Sec. 7's baseline; --set
#               solver.method=newton_mg)
#   HOT         L-BFGS (window 8) initialized by one V-cycle of the Galerkin multigrid on
#               the grid, built once per step (Wang et al. 2020, Alg. 3; --set
#               solver.method=hot)
#   HOT-exact   HOT with the coarsest level solved exactly: a sparse Cholesky
#               factorization, redundant on every rank (-hot_mg_coarse_pc_type redundant
#               -hot_mg_coarse_redundant_pc_type cholesky; variant hotx, not in the default
#               list)
# Each run is SHORTENED to the first BAR_FRAMES frames (--set time.frames=N) of the
# scene's 48: the table is per step, not for the whole scene. Reported from stats.csv:
# time per step, outer (Newton or L-BFGS) and inner (CG; for HOT the coarsest level's CG)
# iterations per step, H0^-1 applications (V-cycles for HOT), halvings, the peak resident
# memory (max over ranks, /usr/bin/time), and the split by phase (the Os* PetscLogEvents, maximum over ranks; their -log_view is
# kept next to it). bench/mpm_transfer_bench also times mpm::P2G and mpm::G2P (and the
# stencil build) alone on a box of particles on one core, in particles per second, at
# dx = 0.015 and 0.0075 m.
#
# HOT's reference code takes 358.4 s with its PN-PCG for the whole scene (E_mid = 1e8,
# dx = 0.015, 48 frames) on a 2-core machine. HOT_FULL=1 also runs that scene in full on 2
# ranks and prints optistep's total next to it (about 4 minutes more on a quiet 2-core
# machine).
#
# Usage: scripts/bench-mpm.sh   (about 5 minutes on a quiet 2-core machine with the
#   defaults)
# Environment: BUILD_DIR (default build), MPIEXEC (default mpiexec), RANKS (default
#   "1 2"), VARIANTS (default "pn pnmf pnmg lbfgsh hot"; also hotx), E_MIDS (default
#   "1e5 1e7 1e9"), DXS (grid spacings in m, default 0.015; the size ladder of issue 28:
#   DXS="0.015 0.0075 0.005", about 30k, 245k and 830k particles, each run SHORTENED to
#   BAR_FRAMES frames as well; with more than one dx the runs' seconds per step are also
#   plotted against the particle count, out/bench/mpm_ladder.png), BAR_FRAMES (default 4 of 48: 8 steps, the
#   first 30 degrees of the twist), TIME_LIMIT (seconds per run, default 150; a run cut
#   off is reported with the steps it finished), HOT_FULL (default 0), SETS (further
#   --set overrides for every run, space-separated; e.g. the reference code's step for
#   the side-by-side with the reference code: SETS="time.dt=0.004166666666666667" BAR_FRAMES=12
#   E_MIDS=1e8 VARIANTS="pnmf hot" RANKS=2).
#   HOT's Fig. 20 sweep: E_MIDS="1e5 1e6 1e7 1e8 1e9 1e10" (iterations and time against
#   stiffness, plotted as below).
# Output: out/bench/mpm_<variant>_E<E>_np<N>/ (stats.csv, log_view.txt, run.txt),
#   out/bench/mpm_transfer_dx*.txt, the tables, as markdown, on stdout and in
#   out/bench/mpm.md, the runs' rows as out/bench/mpm_runs.csv and, when E_MIDS has more
#   than one value and python3-matplotlib is installed, their plot against E_mid
#   (scripts/plot-mpm-sweep.py) as out/bench/mpm_sweep.png.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mpiexec=${MPIEXEC:-mpiexec}
ranks=${RANKS:-"1 2"}
variants=${VARIANTS:-"pn pnmf pnmg lbfgsh hot"}
e_mids=${E_MIDS:-"1e5 1e7 1e9"}
dxs=${DXS:-0.015}
bar_frames=${BAR_FRAMES:-4}
time_limit=${TIME_LIMIT:-150}
hot_full=${HOT_FULL:-0}
extra_sets=()
for s in ${SETS:-}; do extra_sets+=(--set "$s"); done
scene=configs/hot_twisting_bar_coarse.yaml
out=$root/out/bench
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

cd "$root"
echo "bench-mpm: building optistep and mpm_transfer_bench in $build" >&2
cmake --build "$build" --target optistep mpm_transfer_bench -- -j2 >/dev/null
mkdir -p "$out"
# Particles of the scene at each dx.
declare -A particles_at
for dx in $dxs; do
  particles_at[$dx]=$("$build/src/optistep" check "$scene" --set mpm.dx="$dx" | awk '/ particles, / { print $3; exit }')
done

# column_mean, share, blas_name
source "$root/scripts/bench-lib.sh"

runs_md=$out/mpm_runs.md
{
  echo "| method | E_mid (Pa) | dx (m) | particles | ranks | steps | s/step | us/step/particle" \
       "| outer/step | inner/step | init/step" \
       "| halvings | max RSS (MB) | Hessian | Assembly | LinearSolve | LineSearch | InitializerSetUp" \
       "| HierarchyBuild | GalerkinProduct | InitializerApply | VCycle | P2G | G2P | rest | note |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$runs_md"
phases="Hessian Assembly LinearSolve LineSearch InitializerSetUp HierarchyBuild GalerkinProduct InitializerApply VCycle P2G G2P"
runs_csv=$out/mpm_runs.csv
echo "method,E_mid,dx,particles,ranks,steps,s_per_step,outer_per_step,inner_per_step,init_per_step,halvings,max_rss_mb,$(echo $phases | sed 's/\([A-Za-z0-9]*\)/t_\1/g; s/ /,/g'),note" >"$runs_csv"

for variant in $variants; do
  case $variant in
    pn) method="PN-PCG"; mf=false; solver=newton ;;
    pnmf) method="PN-PCG(MF)"; mf=true; solver=newton ;;
    pnmg) method="PN-MGPCG"; mf=false; solver=newton_mg ;;
    lbfgsh) method="LBFGS-H"; mf=false; solver=lbfgs ;;
    hot) method="HOT"; mf=false; solver=hot ;;
    hotx) method="HOT-exact"; mf=false; solver=hot
          options=(-hot_mg_coarse_ksp_type preonly -hot_mg_coarse_pc_type redundant
                   -hot_mg_coarse_redundant_pc_type cholesky) ;;
    *) echo "bench-mpm: unknown variant $variant (pn, pnmf, pnmg, lbfgsh, hot, hotx)" >&2; exit 1 ;;
  esac
  [[ $variant == hotx ]] || options=()
  for dx in $dxs; do
  particles=${particles_at[$dx]}
  for e_mid in $e_mids; do
    for np in $ranks; do
      dir=$out/mpm_${variant}_E${e_mid}_dx${dx}_np$np
      rm -rf "$dir"
      mkdir -p "$dir"
      echo "bench-mpm: $method, E_mid $e_mid, dx $dx ($particles particles), $bar_frames frame(s), $np rank(s)" >&2
      status=0
      # Each rank appends its peak resident set (kB) to rss.txt.
      timeout "$time_limit" "$mpiexec" --oversubscribe -n "$np" \
        /usr/bin/time -a -o "$dir/rss.txt" -f "%M" "$build/src/optistep" run "$scene" \
        --quiet --set time.frames="$bar_frames" --set bodies.1.material.E="$e_mid" \
        --set mpm.matrix_free="$mf" --set solver.method="$solver" --set mpm.dx="$dx" \
        ${extra_sets[@]+"${extra_sets[@]}"} \
        --set "output={directory: $dir, every: 1000000}" ${options[@]+"${options[@]}"} \
        -log_view ":$dir/log_view.txt" >"$dir/run.txt" 2>&1 || status=$?
      note=""
      if [[ $status -eq 124 ]]; then note="cut off at ${time_limit} s";
      elif [[ $status -ne 0 ]]; then note="exit $status (see run.txt)"; fi
      csv=$dir/stats.csv
      steps=0
      [[ -s $csv ]] && steps=$(($(wc -l <"$csv") - 1))
      if [[ $steps -le 0 ]]; then
        echo "| $method | $e_mid | $dx | $particles | $np | 0 | | | | | | | | | | | | | | | | | | | | ${note:-no step} |" >>"$runs_md"
        echo "$method,$e_mid,$dx,$particles,$np,0,,,,,,,,,,,,,,,,,,${note:-no step}" >>"$runs_csv"
        continue
      fi
      rss=$(awk '$1 ~ /^[0-9]+$/ && $1 > m { m = $1 } END { printf "%.0f", m / 1024 }' "$dir/rss.txt" 2>/dev/null || true)
      wall=$(column_mean "$csv" wall_s)
      halvings=$(awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$csv")
      row="| $method | $e_mid | $dx | $particles | $np | $steps | $(printf %.3f "$wall")"
      row+=" | $(awk -v w="$wall" -v n="$particles" 'BEGIN { printf "%.2f", 1e6 * w / n }')"
      row+=" | $(printf %.1f "$(column_mean "$csv" outer_iterations)")"
      row+=" | $(printf %.0f "$(column_mean "$csv" inner_iterations)")"
      row+=" | $(printf %.1f "$(column_mean "$csv" initializer_applications)") | $halvings | $rss"
      csv_row="$method,$e_mid,$dx,$particles,$np,$steps,$wall,$(column_mean "$csv" outer_iterations)"
      csv_row+=",$(column_mean "$csv" inner_iterations),$(column_mean "$csv" initializer_applications)"
      csv_row+=",$halvings,$rss"
      for phase in $phases; do
        row+=" | $(share "$(column_mean "$csv" "t_$phase")" "$wall")"
        csv_row+=",$(column_mean "$csv" "t_$phase")"
      done
      # Top-level phases only: Hessian holds its Assembly; InitializerSetUp holds its
      # Hessian and HierarchyBuild (HOT), InitializerApply the V-cycles; HierarchyBuild is
      # top-level for PN-MGPCG.
      rest=$(awk -v w="$wall" -v h="$(column_mean "$csv" t_Hessian)" \
        -v l="$(column_mean "$csv" t_LinearSolve)" \
        -v s="$(column_mean "$csv" t_LineSearch)" -v ia="$(column_mean "$csv" t_InitializerApply)" \
        -v hb="$(column_mean "$csv" t_HierarchyBuild)" \
        -v p="$(column_mean "$csv" t_P2G)" -v g="$(column_mean "$csv" t_G2P)" \
        'BEGIN { r = w - h - l - s - ia - hb - p - g; print (r > 0 ? r : 0) }')
      row+=" | $(share "$rest" "$wall") | $note"
      echo "$row |" >>"$runs_md"
      echo "$csv_row,$note" >>"$runs_csv"
    done
  done
  done
done

transfer_md=$out/mpm_transfer.md
{
  echo "| dx (m) | particles | grid nodes | stencil particles/s | P2G particles/s | G2P particles/s |"
  echo "|---|---|---|---|---|---|"
} >"$transfer_md"
for dx in 0.015 0.0075; do
  echo "bench-mpm: mpm_transfer_bench dx $dx" >&2
  log=$out/mpm_transfer_dx$dx.txt
  "$build/bench/mpm_transfer_bench" --dx "$dx" --reps 10 >"$log"
  awk -v dx="$dx" '
    /^mpm_transfer_bench:/     { for (i = 2; i <= NF; ++i) { if ($i == "particles,") n = $(i - 1)
                                                             if ($i == "grid") nodes = $(i - 1) } }
    /^stencil_particles_per_s/ { s = $2 }
    /^p2g_particles_per_s/     { p = $2 }
    /^g2p_particles_per_s/     { g = $2 }
    END { printf "| %s | %s | %s | %.3g | %.3g | %.3g |\n", dx, n, nodes, s, p, g }' "$log" \
    >>"$transfer_md"
done

full_md=""
if [[ $hot_full == 1 ]]; then
  dir=$out/mpm_hot_full_np2
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "bench-mpm: the whole scene (48 frames, E_mid 1e8), PN-PCG, 2 ranks" >&2
  start=$(date +%s.%N)
  status=0
  "$mpiexec" --oversubscribe -n 2 "$build/src/optistep" run "$scene" --quiet \
    --set "output={directory: $dir, every: 1000000}" >"$dir/run.txt" 2>&1 || status=$?
  total=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  steps=$(($(wc -l <"$dir/stats.csv") - 1))
  full_md="Whole scene (E_mid = 1e8, 48 frames), PN-PCG on 2 ranks: optistep $total s"
  full_md+=" ($steps steps, exit $status); HOT's reference PN-PCG: 358.4 s."
fi

{
  echo "## MPM benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), BLAS $(blas_name))"
  echo
  echo "Twisting bar (HOT Fig. 20), dx = $dxs m, SHORTENED to" \
       "$bar_frames of 48 frames${SETS:+, with --set $SETS}. Phase columns: mean seconds per step (share of the step's" \
       "wall time), each the maximum over ranks; Energy and Gradient calls are inside" \
       "LineSearch or rest; Hessian contains its Assembly (MatAssemblyEnd, with the wait" \
       "for the slowest rank); InitializerSetUp (LBFGS-H's and HOT's Hessian at the step's" \
       "start) contains that Hessian, its Assembly and HOT's HierarchyBuild (levels," \
       "prolongations, coarse patterns, smoother set-up), which contains the GalerkinProduct" \
       "(the coarse operators' values); InitializerApply contains HOT's VCycle;" \
       "PN-MGPCG's HierarchyBuild (every Newton iteration) is top-level. max RSS: peak" \
       "resident memory of the busiest rank. rest = wall - Hessian -" \
       "LinearSolve - LineSearch - InitializerApply - HierarchyBuild - P2G - G2P: halo exchange," \
       "constraints, the start's energy and gradients, F update, migration. For" \
       "PN-PCG(MF), Hessian is the per-particle dP/dF precompute and the products are in" \
       "LinearSolve."
  echo
  cat "$runs_md"
  echo
  echo "Transfers (bench/mpm_transfer_bench: the twisting bar's 0.12 x 0.9 x 0.12 m box," \
       "8 particles per cell, one core, best of 10):"
  echo
  cat "$transfer_md"
  if [[ -n $full_md ]]; then
    echo
    echo "$full_md"
  fi
} >"$out/mpm.md"
cat "$out/mpm.md"
if [[ $(echo $e_mids | wc -w) -gt 1 || $(echo $dxs | wc -w) -gt 1 ]]; then
  # Debian's python3 (python3-matplotlib), not one a PATH (pyenv, venv) may put first.
  if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
    if [[ $(echo $e_mids | wc -w) -gt 1 ]]; then
      /usr/bin/python3 "$root/scripts/plot-mpm-sweep.py" "$runs_csv" "$out/mpm_sweep.png" &&
        echo "bench-mpm: the sweep plotted in $out/mpm_sweep.png" >&2
    fi
    if [[ $(echo $dxs | wc -w) -gt 1 ]]; then
      /usr/bin/python3 "$root/scripts/plot-mpm-sweep.py" --ladder "$runs_csv" "$out/mpm_ladder.png" &&
        echo "bench-mpm: the size ladder plotted in $out/mpm_ladder.png" >&2
    fi
  else
    echo "bench-mpm: no python3-matplotlib (apt-get install python3-matplotlib): no plot" >&2
  fi
fi

#!/usr/bin/env bash
# DOT benchmark: DOT (Li et al. 2019) against PN-PCG (Jacobi and GAMG), PN with a
# direct solve, LBFGS-H and LBFGS-PD, on 1 and 2 ranks; DOT also with 1, 2, 4 and 8
# subdomains in all. It prints figures and asserts nothing (tests live in tests/); run it
# on a quiet machine, timings on a shared one vary by a factor of 2 or more.
#
# Per scene, method and rank count, a shortened run (--set time.frames=N) reports time per
# step, outer and inner iterations per step, the time split (Hessian, SubdomainFactor:
# extraction and Cholesky of the subdomain matrices, SubdomainSolve: back-solves,
# SubdomainMerge, LineSearch, and LinearSolve for Newton) from stats.csv, and the peak
# resident memory of the largest rank (GNU time's maximum RSS).
# Methods (same mesh, dt, steps and CN tolerance):
#   pn-pcg       newton, Jacobi-PCG (the default)
#   pn-gamg      newton, -newton_pc_type gamg
#   pn-direct    newton, -newton_ksp_type preonly -newton_pc_type cholesky (MUMPS): the DOT
#                paper's PN baseline
#   lbfgs-h      lbfgs, the lagged Hessian by Jacobi-PCG to 1/2
#   lbfgs-pd     lbfgs, solver.initializer projective_dynamics (Liu et al. 2017)
#   dot          dot with its defaults: sized subdomains (dot.subdomain_nodes), the coarse
#                space, the refresh
#   dot-K        dot with K subdomains in all (K / ranks per rank; K >= ranks)
#   dot[-K]-...  suffixes, in any order: -nN -dot_subdomain_nodes N, -ovN -dot_overlap N,
#                -lagN -dot_refactor_every N, -kN -dot_krylov_its N, -1lvl -dot_coarse none,
#                -avg -dot_merge average, -norefresh (no refresh of any kind)
#                (e.g. dot-n2000-ov1, dot-2-1lvl-avg-norefresh: DOT as issue 12 left it)
#
# Usage: scripts/bench-dot.sh
# Environment: BUILD_DIR (default build), MPIEXEC (default mpiexec), RANKS (default "1 2"),
#   SCENES (default "twisted_bar elephant_drop"; also bar17k, bar17k_stiff: the DOT
#   reference code's bar17K twist at E = 1e5, nu = 0.4 and at E = 1e7, nu = 0.45;
#   bar84k, bar781k: configs/twisted_bar.yaml on TetGen meshes of
#   configs/meshes/bar_4x1x1.poly (-pq1.4a1e-4, a1e-5), made in MESH_DIR (default
#   /tmp/optistep-bar-meshes) when missing; with the suffix _stiff E = 1e7, nu = 0.45, _fast
#   the handles at -/+pi rad/s),
#   METHODS (default "pn-pcg pn-gamg pn-direct lbfgs-h lbfgs-pd dot-1 dot-2 dot-4 dot-8"),
#   FRAMES (default 12; frames of each scene's own frame rate).
#   OUT_DIR (default out/bench/dot).
# Output: out/bench/dot/<scene>_<method>_np<N>/ (stats.csv, run.txt, time.txt), dot.csv
#   (one row per run), dot.md (the table, also on stdout) and, with python3-matplotlib,
#   iterations.png (iterations per step against subdomains in all:
#   scripts/plot-dot-iterations.py).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mpiexec=${MPIEXEC:-mpiexec}
ranks=${RANKS:-"1 2"}
scenes=${SCENES:-"twisted_bar elephant_drop"}
methods=${METHODS:-"pn-pcg pn-gamg pn-direct lbfgs-h lbfgs-pd dot-1 dot-2 dot-4 dot-8"}
frames=${FRAMES:-12}
out=${OUT_DIR:-$root/out/bench/dot}
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

cd "$root"
echo "bench-dot: building optistep in $build" >&2
cmake --build "$build" --target optistep -- -j2 >/dev/null
[[ " $scenes " == *" elephant_drop "* ]] && scripts/fetch-meshes.sh elephant.1.node
mkdir -p "$out"

# column_mean, share, blas_name
source "$root/scripts/bench-lib.sh"

mesh_dir=${MESH_DIR:-/tmp/optistep-bar-meshes}
# A TetGen mesh of the 4 x 1 x 1 bar with the given maximum tet volume, made once.
bar_mesh() {
  local volume=$1 name=bar_$1
  if [[ ! -f $mesh_dir/$name.1.node ]]; then
    mkdir -p "$mesh_dir"
    cp "$root/configs/meshes/bar_4x1x1.poly" "$mesh_dir/$name.poly"
    (cd "$mesh_dir" && tetgen -pq1.4a"$volume" "$name.poly" >/dev/null)
  fi
  echo "$mesh_dir/$name.1.node"
}

# Scene name -> the config and its --set overrides.
scene_args() {
  local base=${1%%_stiff*} args=""
  base=${base%%_fast*}
  case $base in
    twisted_bar | elephant_drop) args="configs/$base.yaml" ;;
    bar17k) args="configs/dot_bar17k_twist.yaml" ;;
    bar84k) args="configs/twisted_bar.yaml --set bodies.0.mesh=$(bar_mesh 1e-4)" ;;
    bar781k) args="configs/twisted_bar.yaml --set bodies.0.mesh=$(bar_mesh 1e-5)" ;;
    *) echo "bench-dot: unknown scene $1" >&2; exit 1 ;;
  esac
  [[ $1 == *_stiff* ]] && args+=" --set bodies.0.material.E=1e7 --set bodies.0.material.nu=0.45"
  [[ $1 == *_fast* ]] && args+=" --set boundary_conditions.0.motion.0.rotate.angular_velocity=-3.141592653589793 --set boundary_conditions.1.motion.0.rotate.angular_velocity=3.141592653589793"
  echo "$args"
}

# Method label and rank count -> optistep arguments ("" when the pair does not fit).
method_args() {
  local method=$1 np=$2
  case $method in
    pn-pcg) echo "--set solver.method=newton" ;;
    pn-gamg) echo "--set solver.method=newton -newton_pc_type gamg" ;;
    pn-direct) echo "--set solver.method=newton -newton_ksp_type preonly -newton_pc_type cholesky -newton_pc_factor_mat_solver_type mumps" ;;
    lbfgs-h) echo "--set solver.method=lbfgs" ;;
    lbfgs-pd) echo "--set solver.method=lbfgs --set solver.initializer=projective_dynamics" ;;
    dot | dot-*)
      # dot[-K][-nN][-ovN][-lagN][-kN][-1lvl][-avg][-norefresh] (header comment).
      local rest=-${method#dot} extra="" all=""
      rest=${rest#-}
      [[ $rest =~ ^([0-9]+) ]] && all=${BASH_REMATCH[1]}
      [[ $rest =~ (^|-)n([0-9]+) ]] && extra+=" -dot_subdomain_nodes ${BASH_REMATCH[2]}"
      [[ $rest =~ (^|-)ov([0-9]+) ]] && extra+=" -dot_overlap ${BASH_REMATCH[2]}"
      [[ $rest =~ (^|-)lag([0-9]+) ]] && extra+=" -dot_refactor_every ${BASH_REMATCH[2]}"
      [[ $rest =~ (^|-)k([0-9]+) ]] && extra+=" -dot_krylov_its ${BASH_REMATCH[2]}"
      [[ $rest =~ (^|-)1lvl ]] && extra+=" -dot_coarse none"
      [[ $rest =~ (^|-)avg ]] && extra+=" -dot_merge average"
      [[ $rest =~ (^|-)norefresh ]] && extra+=" -dot_refresh_contacts 0 -dot_refresh_stall 0 -dot_refresh_at_cap 0"
      if [[ -n $all ]]; then
        if ((all % np != 0)); then echo ""; return; fi
        extra+=" --set dot.subdomains_per_rank=$((all / np))"
      fi
      echo "--set solver.method=dot$extra" ;;
    *) echo "bench-dot: unknown method $method" >&2; exit 1 ;;
  esac
}

csv=$out/dot.csv
echo "scene,method,ranks,subdomains_in_all,steps,halvings,s_per_step,outer_per_step,inner_per_step,refreshes_per_step,t_Hessian,t_SubdomainFactor,t_CoarseFactor,t_SubdomainSolve,t_SubdomainMerge,t_CoarseSolve,t_LineSearch,t_LinearSolve,cpu_s,peak_rss_mb" >"$csv"

for scene in $scenes; do
  read -r -a sargs <<<"$(scene_args "$scene")"
  for method in $methods; do
    for np in $ranks; do
      margs=$(method_args "$method" "$np")
      [[ -z $margs ]] && continue
      read -r -a margs <<<"$margs"
      dir=$out/${scene}_${method}_np$np
      rm -rf "$dir"
      mkdir -p "$dir"
      echo "bench-dot: $scene, $method, $frames frames, $np rank(s)" >&2
      status=0
      "$mpiexec" --oversubscribe -n "$np" /usr/bin/time -a -o "$dir/time.txt" -f "%M %U %S" \
        "$build/src/optistep" run "${sargs[@]}" --quiet --set time.frames="$frames" "${margs[@]}" \
        --set "output={directory: $dir, every: 1000000}" >"$dir/run.txt" 2>&1 || status=$?
      if ((status != 0)); then
        echo "bench-dot: $scene $method np$np failed (exit $status), see $dir/run.txt" >&2
        continue
      fi
      stats=$dir/stats.csv
      steps=$(($(wc -l <"$stats") - 1))
      halvings=$(awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$stats")
      subdomains=""
      [[ $method =~ ^dot-([0-9]+) ]] && subdomains=${BASH_REMATCH[1]}
      row="$scene,$method,$np,$subdomains,$steps,$halvings,$(column_mean "$stats" wall_s)"
      row+=",$(column_mean "$stats" outer_iterations),$(column_mean "$stats" inner_iterations)"
      row+=",$(column_mean "$stats" refreshes)"
      for phase in Hessian SubdomainFactor CoarseFactor SubdomainSolve SubdomainMerge CoarseSolve LineSearch LinearSolve; do
        row+=",$(column_mean "$stats" "t_$phase")"
      done
      row+=",$(awk '{ s += $2 + $3 } END { printf "%.1f", s }' "$dir/time.txt")"
      row+=",$(sort -n "$dir/time.txt" | tail -1 | awk '{ printf "%.0f", $1 / 1024 }')"
      echo "$row" >>"$csv"
    done
  done
done

{
  echo "## DOT benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc --all) cores, load $(cut -d' ' -f1-3 /proc/loadavg), BLAS $(blas_name))"
  echo
  echo "$frames frames per scene. Seconds per step: means over the steps, phases the maximum" \
       "over ranks; peak RSS: the largest rank's, MB."
  echo
  echo "| scene | method | ranks | subdomains | steps | halvings | s/step | outer/step | inner/step | refreshes/step | Hessian | SubdomainFactor | CoarseFactor | SubdomainSolve | SubdomainMerge | CoarseSolve | LineSearch | LinearSolve | CPU s | peak MB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F, 'NR > 1 { printf "|"; for (i = 1; i <= NF; ++i) printf " %s |", ($i ~ /^[0-9.e+-]+$/ && $i ~ /\./ ? sprintf("%.3g", $i) : $i); printf "\n" }' "$csv"
} >"$out/dot.md"
cat "$out/dot.md"
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null && [[ $(id -u) -eq 0 ]]; then
  echo "bench-dot: installing python3-matplotlib for the plot" >&2
  apt-get install -y -q python3-matplotlib >/dev/null 2>&1 || true
fi
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 "$root/scripts/plot-dot-iterations.py" "$csv" "$out/iterations.png" &&
    echo "bench-dot: iterations against subdomain count in $out/iterations.png" >&2
else
  echo "bench-dot: no plot (apt-get install python3-matplotlib)" >&2
fi

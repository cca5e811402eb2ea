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
#   dot-K        dot with K subdomains in all (K / ranks per rank; K >= ranks)
#   dot-K-ovN    the same with -dot_overlap N; dot-K-lagN with -dot_refactor_every N
#                (also dot-K-ovN-lagN)
#
# Usage: scripts/bench-dot.sh
# Environment: BUILD_DIR (default build), MPIEXEC (default mpiexec), RANKS (default "1 2"),
#   SCENES (default "twisted_bar elephant_drop"; also bar17k, bar17k_stiff: the DOT
#   reference code's bar17K twist at E = 1e5, nu = 0.4 and at E = 1e7, nu = 0.45),
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

# Scene name -> the config and its --set overrides.
scene_args() {
  case $1 in
    twisted_bar | elephant_drop) echo "configs/$1.yaml" ;;
    bar17k) echo "configs/dot_bar17k_twist.yaml" ;;
    bar17k_stiff) echo "configs/dot_bar17k_twist.yaml --set bodies.0.material.E=1e7 --set bodies.0.material.nu=0.45" ;;
    *) echo "bench-dot: unknown scene $1" >&2; exit 1 ;;
  esac
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
    dot-*)
      # dot-K[-ovN][-lagN]: K subdomains in all, -dot_overlap N, -dot_refactor_every N.
      local rest=${method#dot-} extra=""
      local all=${rest%%-*}
      [[ $rest == *-ov* ]] && extra+=" -dot_overlap $(sed 's/.*-ov\([0-9]*\).*/\1/' <<<"$rest")"
      [[ $rest == *-lag* ]] && extra+=" -dot_refactor_every $(sed 's/.*-lag\([0-9]*\).*/\1/' <<<"$rest")"
      if ((all % np != 0)); then echo ""; return; fi
      echo "--set solver.method=dot --set dot.subdomains_per_rank=$((all / np))$extra" ;;
    *) echo "bench-dot: unknown method $method" >&2; exit 1 ;;
  esac
}

csv=$out/dot.csv
echo "scene,method,ranks,subdomains_in_all,steps,halvings,s_per_step,outer_per_step,inner_per_step,t_Hessian,t_SubdomainFactor,t_SubdomainSolve,t_SubdomainMerge,t_LineSearch,t_LinearSolve,peak_rss_mb" >"$csv"

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
      "$mpiexec" --oversubscribe -n "$np" /usr/bin/time -a -o "$dir/time.txt" -f "%M" \
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
      if [[ $method == dot-* ]]; then subdomains=${method#dot-}; subdomains=${subdomains%%-*}; fi
      row="$scene,$method,$np,$subdomains,$steps,$halvings,$(column_mean "$stats" wall_s)"
      row+=",$(column_mean "$stats" outer_iterations),$(column_mean "$stats" inner_iterations)"
      for phase in Hessian SubdomainFactor SubdomainSolve SubdomainMerge LineSearch LinearSolve; do
        row+=",$(column_mean "$stats" "t_$phase")"
      done
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
  echo "| scene | method | ranks | subdomains | steps | halvings | s/step | outer/step | inner/step | Hessian | SubdomainFactor | SubdomainSolve | SubdomainMerge | LineSearch | LinearSolve | peak MB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
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

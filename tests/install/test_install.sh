#!/usr/bin/env bash
# Installation as a user of a shared prefix meets it (ctest install_run.np1):
# `cmake --install BUILD --prefix TMP`, then, from outside the source tree and with nothing
# of it on the paths, the installed layout (docs/user/install.md), `optistep --version`
# (the version and a commit), a short scene of the installed examples on 1 rank (2
# frames: its frames, stats.csv and exit code 0), the installed report on that run, and
# the other installed tools' start-up (imports, usage).
#
# usage: test_install.sh CMAKE BUILD_DIR
set -euo pipefail
cmake=$1
build=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "test_install: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log" || {
  cat "$work/install.log"; fail "cmake --install failed"; }

share=$prefix/share/optistep
for f in bin/optistep bin/optistep-report bin/optistep-scaling-study \
         share/optistep/scripts/report share/optistep/scripts/scaling-study \
         share/optistep/scripts/slurm-job.sh share/optistep/scripts/slurm-scaling-array.sh \
         share/optistep/scripts/render_frames.py; do
  [[ -x $prefix/$f ]] || fail "$f is not installed as an executable"
done
for f in share/optistep/scripts/optistep_perf.py share/optistep/configs/two_spheres.yaml \
         share/optistep/configs/meshes/sphere.node share/doc/optistep/README.md \
         share/doc/optistep/CHANGELOG.md share/doc/optistep/docs/index.md \
         share/doc/optistep/docs/user/install.md; do
  [[ -f $prefix/$f ]] || fail "$f is not installed"
done
[[ ! -e $prefix/share/doc/optistep/docs/pending ]] || fail "docs/pending/ was installed"

# Away from the source tree, with a PATH that holds the prefix and the system only.
cd "$work"
export PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
unset OPTISTEP || true

version=$(optistep --version)
[[ $version =~ ^optistep\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [^\)]+\)$ ]] ||
  fail "optistep --version printed '$version', expected 'optistep X.Y.Z (commit ...)'"
echo "test_install: $version"

mpiexec -n 1 optistep run "$share/configs/two_spheres.yaml" --set time.frames=2 \
  --set output.directory="$work/run" --quiet > "$work/run.log" 2>&1 || {
  cat "$work/run.log"; fail "the installed two_spheres.yaml did not run"; }
frames=$(ls "$work/run/frames" | wc -l)
[[ $frames -eq 3 ]] || fail "expected 3 frame files (the initial state and 2 frames), found $frames"
[[ $(wc -l < "$work/run/stats.csv") -ge 3 ]] || fail "stats.csv has no steps"
[[ -f $work/run/two_spheres.xdmf ]] || fail "no two_spheres.xdmf"

optistep-report "$work/run" > "$work/report.log" 2>&1 || {
  cat "$work/report.log"; fail "optistep-report failed on the run"; }
[[ -f $work/run/report.txt && -f $work/run/report_time.png ]] ||
  fail "optistep-report wrote no report.txt or report_time.png"
optistep-scaling-study --help > /dev/null || fail "optistep-scaling-study --help failed"
for s in slurm-job.sh slurm-scaling-array.sh; do
  bash -n "$share/scripts/$s" || fail "$s does not parse"
  out=$(bash "$share/scripts/$s" 2>&1) && fail "$s without arguments did not fail"
  [[ $out == *usage* ]] || fail "$s without arguments printed no usage: $out"
done
echo "test_install: installed into $prefix and ran two_spheres (2 frames) from there"

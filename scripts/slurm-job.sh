#!/usr/bin/env bash
# SLURM job template for a long optistep run in walltime-limited slices.
#
#   sbatch scripts/slurm-job.sh SCENE.yaml [optistep run options, e.g. --set ... -log_view]
#
# 120 s before the walltime SLURM sends SIGUSR1 to every task of the job step
# (--signal=USR1@120; no "B:", which would signal only this batch shell and leave the
# forwarding to it). optistep finishes the step under way, writes a checkpoint to
# <output.directory>/checkpoints, prints "... resume with --restart latest" and exits 0.
# This script then submits itself again with --restart latest, slice after slice, until
# a slice ends without that line (the run is done) or fails (exit code != 0: it stops, and
# the log says why). Pick the margin above a step plus a checkpoint write (stats.csv
# columns wall_s and t_Checkpoint); with output.checkpoint_every_seconds set as well, a
# node failure costs at most that much work.
#
# SIGTERM (scancel, or the walltime if the margin was too short) reaches the tasks
# directly, with SIGKILL KillWait seconds later (`scontrol show config | grep KillWait`,
# 30 by default): optistep is told that grace period (--sigterm-grace), finishes the step
# under way if it ends within half of it, else abandons it and checkpoints the step before,
# and exits 0. This shell waits for that and does not resubmit (scancel means stop):
# resume by hand with the line it prints. Launch with srun, as here: Open MPI's mpirun
# would turn SIGTERM into its own SIGTERM-then-SIGKILL with a 1 s default grace
# (docs/user/running.md, "Signals and SLURM").
#
# Environment: OPTISTEP (default build/src/optistep, relative to the submit directory, or
#   else the optistep on PATH, as a module of an installed optistep sets it),
#   OPTISTEP_MAX_SLICES (default 100), OPTISTEP_SIGTERM_GRACE (default 30, SLURM's
#   default KillWait). Set by the script itself: OPTISTEP_SLICE.
#SBATCH --job-name=optistep
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=32
#SBATCH --time=24:00:00
#SBATCH --signal=USR1@120
#SBATCH --output=optistep-%j.log
set -uo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: sbatch $0 SCENE.yaml [optistep run options]" >&2
  exit 1
fi
cd "${SLURM_SUBMIT_DIR:-.}"
optistep=${OPTISTEP:-build/src/optistep}
if [[ -z ${OPTISTEP:-} && ! -x $optistep ]] && command -v optistep > /dev/null; then
  optistep=$(command -v optistep)
fi
slice=${OPTISTEP_SLICE:-1}
max_slices=${OPTISTEP_MAX_SLICES:-100}
grace=${OPTISTEP_SIGTERM_GRACE:-30}
restart=()
[[ $slice -gt 1 ]] && restart=(--restart latest)

# A SIGTERM to this shell waits until srun is done (bash runs the trap then).
terminated=0
trap 'terminated=1' TERM
log=$(mktemp "optistep-slice${slice}-XXXXXX.log")
echo "slurm-job: slice $slice of at most $max_slices: $optistep run $* ${restart[*]} (output: $log)"
# No pipe to tee: a SIGTERM would end tee, and srun writing on would get SIGPIPE.
srun "$optistep" run --sigterm-grace "$grace" "$@" "${restart[@]}" > "$log" 2>&1
status=$?
cat "$log"
if [[ $status -ne 0 ]]; then
  echo "slurm-job: optistep exited with $status; not resubmitting (see above)"
  exit "$status"
fi
if grep -q "resume with --restart latest" "$log"; then
  rm -f "$log"
  if [[ $terminated -eq 1 ]]; then
    echo "slurm-job: stopped by SIGTERM (scancel?); not resubmitting. To go on:"
    echo "  OPTISTEP_SLICE=$((slice + 1)) sbatch $0 $*"
    exit 0
  fi
  if [[ $slice -ge $max_slices ]]; then
    echo "slurm-job: $max_slices slices done and the run is not finished; resubmit by hand:"
    echo "  OPTISTEP_SLICE=$((slice + 1)) sbatch $0 $*"
    exit 1
  fi
  # sbatch copies the script at submission, so the job's own copy ($0) can be reused.
  OPTISTEP_SLICE=$((slice + 1)) sbatch --export=ALL "$0" "$@"
  exit 0
fi
rm -f "$log"
echo "slurm-job: the run is complete"

#!/usr/bin/env bash
# SLURM job-array variant of scripts/slurm-job.sh: a strong scaling study, one rank count
# per array task, in the run-folder layout scripts/scaling-study reads.
#
#   sbatch --array=0-3 --ntasks=8 scripts/slurm-scaling-array.sh SCENE.yaml "1 2 4 8" STUDY_DIR \
#          [optistep run options, e.g. --set solver.method=lbfgs --set time.frames=12]
#   # when every task is done (or: sbatch --dependency=afterok:<jobid> ...):
#   scripts/scaling-study --collect STUDY_DIR
#
# Task i runs the i-th rank count of the list (srun -n R, so --ntasks must be at least the
# largest) into STUDY_DIR/strong/np<R>/: out/ (frames, stats.csv), log.csv (PETSc's
# per-rank event log, ascii_csv, through -optistep_log_csv), log_view.txt (-log_view's
# table), run.txt, mem.<rank> (peak resident kB from GNU time) and meta.json. Runs are
# single slices: give the job a walltime that holds the run (or use fewer frames); a run
# stopped by the walltime leaves a checkpoint but no log.csv, and the collector skips it.
#
# Environment: OPTISTEP (default build/src/optistep, relative to the submit directory, or
# else the optistep on PATH, as a module of an installed optistep sets it).
#SBATCH --job-name=optistep-scaling
#SBATCH --nodes=1
#SBATCH --ntasks=8
#SBATCH --time=02:00:00
#SBATCH --output=optistep-scaling-%A_%a.log
set -uo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: sbatch --array=0-N $0 SCENE.yaml \"RANKS...\" STUDY_DIR [optistep run options]" >&2
  exit 1
fi
cd "${SLURM_SUBMIT_DIR:-.}"
scene=$1
read -r -a ranks_list <<< "$2"
study_dir=$3
shift 3
task=${SLURM_ARRAY_TASK_ID:-0}
if [[ $task -ge ${#ranks_list[@]} ]]; then
  echo "slurm-scaling-array: task $task has no rank count in \"${ranks_list[*]}\"" >&2
  exit 1
fi
ranks=${ranks_list[$task]}
optistep=${OPTISTEP:-build/src/optistep}
if [[ -z ${OPTISTEP:-} && ! -x $optistep ]] && command -v optistep > /dev/null; then
  optistep=$(command -v optistep)
fi
optistep=$(readlink -f "$optistep")
run_dir=$(readlink -m "$study_dir/strong/np$ranks")
mkdir -p "$run_dir"
cores=${SLURM_CPUS_ON_NODE:-$(nproc)}
method=$(printf '%s\n' "$@" | sed -n 's/^solver\.method=//p' | tail -1)
printf '{"study": "strong", "scene": "%s", "method": "%s", "ranks": %d, "cores": %d}\n' \
  "$scene" "${method:-(scene)}" "$ranks" "$cores" > "$run_dir/meta.json"
echo "slurm-scaling-array: task $task: $ranks ranks -> $run_dir"
# Each rank's peak resident memory through GNU time, into mem.<rank> (SLURM_PROCID).
srun -n "$ranks" sh -c 'exec /usr/bin/time -f %M -o "$0/mem.${SLURM_PROCID:-0}" "$@"' \
  "$run_dir" "$optistep" run "$scene" "$@" --set "output.directory=$run_dir/out" \
  -optistep_log_csv "$run_dir/log.csv" -log_view ":$run_dir/log_view.txt" \
  > "$run_dir/run.txt" 2>&1
status=$?
echo "slurm-scaling-array: optistep exited with $status (output: $run_dir/run.txt)"
exit "$status"

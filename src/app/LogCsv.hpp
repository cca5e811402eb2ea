#pragma once
// -optistep_log_csv FILE: PETSc's per-rank event log (PetscLogView in the ascii_csv format:
// one row per stage, event and rank with count, time, messages, message length,
// reductions and flop) written at the end of the run, alongside whatever -log_view prints.
// PETSc 3.18 takes one -log_view viewer; with this option a run gives both the
// human-readable table (-log_view) and the machine-readable file from the same log, which
// scripts/optistep_perf.py reads (scripts/scaling-study, scripts/report).
#include <petscsys.h>

namespace optistep {

/// Collective on PETSC_COMM_WORLD; call after PetscInitialize, before the events to log.
/// Reads -optistep_log_csv (listed by -help) and, when it is set, starts PETSc's default
/// logging if -log_view has not already. Returns whether the file is requested. Throws
/// InputError (on every rank) when the file's folder cannot be written.
bool StartLogCsv();

/// Collective; call before PetscFinalize. Writes the file requested by -optistep_log_csv
/// (nothing when unset). Errors: PETSc's (an unwritable path) are thrown as PetscError.
void WriteLogCsv();

}  // namespace optistep

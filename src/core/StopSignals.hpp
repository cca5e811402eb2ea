#pragma once
// How a run learns that it must stop (docs/user/running.md, "Signals and SLURM"):
//  - SIGUSR1 is a warning ahead of time (SLURM's `--signal=USR1@120`): the step under way
//    is finished, a checkpoint written, and the run ends;
//  - SIGTERM says that SIGKILL follows after the launcher's grace period (scancel and the
//    walltime under SLURM; Open MPI's mpirun, when it gets SIGTERM itself, sends the ranks
//    SIGTERM and, odls_base_sigkill_timeout seconds later, SIGKILL). A step can outlast
//    that, so the step under way is finished only if it ends within half the grace
//    period (the `--sigterm-grace` the run is told); otherwise it is abandoned and the
//    checkpoint holds the last completed step, written in the other half.
//
// The handlers only record which signal came and when (lock-free atomics and
// clock_gettime, both async-signal-safe). The ranks poll them collectively, so that all
// stop at the same point even when the signal reaches them at different times or one
// rank only: after every step (CheckpointSchedule), and inside a step
// (StepMustBeAbandoned: once per outer iteration of a minimizer and every 16 Krylov
// iterations, solvers/Minimizer.hpp). An integrator changes its state only when a step is
// accepted (integrators/Integrator.hpp), so an abandoned step leaves the state before it.
#include <mpi.h>

namespace optistep {

class StopSignals {
 public:
  /// Installs the SIGTERM and SIGUSR1 handlers; the previous ones come back, and what was
  /// recorded is forgotten, on destruction. grace: the seconds from SIGTERM to SIGKILL the
  /// launcher allows (>= 0; 0 abandons the step under way at once).
  explicit StopSignals(double grace);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// Not collective: SIGTERM if this rank has had it, else SIGUSR1 if it has had that,
  /// else 0.
  static int Received();
  /// Collective on comm, which must hold every rank of the run (once true, later calls
  /// skip the reduction), while a StopSignals exists (else false, at no cost): whether the
  /// step under way must be abandoned, that is, some rank has had SIGTERM for half the
  /// grace period. Once true it stays true, without further communication.
  static bool StepMustBeAbandoned(MPI_Comm comm);
  /// Not collective: whether StepMustBeAbandoned has said so (the same on every rank).
  static bool Abandoning();
  /// Name of a signal for messages ("SIGTERM").
  static const char* Name(int signal);
};

}  // namespace optistep

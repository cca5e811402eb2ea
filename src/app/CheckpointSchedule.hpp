#pragma once
// When a run writes a checkpoint and when it stops early: every N accepted steps and/or
// every T wall-clock seconds (the scene's output.checkpoint_every_*), and on SIGTERM or
// SIGUSR1 (what SLURM sends before the walltime, e.g. `#SBATCH --signal=USR1@120`):
// the current step is finished, a checkpoint is written and the run exits 0.
//
// The signal handler only sets a std::sig_atomic_t flag. Ranks agree once per step, by an
// MPI_Allreduce(MAX), on the flag and on whether the wall-clock interval has passed, so a
// signal delivered to one rank only (or at slightly different times) stops every rank
// after the same step.
#include <mpi.h>

#include <csignal>

#include "io/SceneConfig.hpp"

namespace optistep {

class CheckpointSchedule {
 public:
  struct Decision {
    bool checkpoint = false;  ///< write a checkpoint after this step
    bool stop = false;        ///< then stop: a signal came
    int signal = 0;           ///< which (SIGTERM or SIGUSR1), when stop
  };

  /// Collective. Installs the SIGTERM and SIGUSR1 handlers; the previous ones come back on
  /// destruction. steps: the accepted-step count the run starts from (0, or a restart's).
  CheckpointSchedule(MPI_Comm comm, const OutputConfig& output, long steps);
  ~CheckpointSchedule();
  CheckpointSchedule(const CheckpointSchedule&) = delete;
  CheckpointSchedule& operator=(const CheckpointSchedule&) = delete;

  /// Collective, after every step; steps is the accepted-step count after it.
  Decision AfterStep(long steps);
  /// A checkpoint was written after `steps` steps: both intervals start again.
  void Checkpointed(long steps);

  /// Name of a signal for messages ("SIGTERM").
  static const char* SignalName(int signal);

 private:
  MPI_Comm comm_;
  OutputConfig output_;
  long last_steps_;
  double last_wall_;
  struct sigaction previous_term_ {};
  struct sigaction previous_usr1_ {};
};

}  // namespace optistep

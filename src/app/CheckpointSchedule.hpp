#pragma once
// When a run writes a checkpoint and when it stops early: every N accepted steps and/or
// every T wall-clock seconds (the scene's output.checkpoint_every_*), and after a stop
// signal (SIGTERM or SIGUSR1, core/StopSignals.hpp, which a run watches while it steps):
// a checkpoint is written and the run ends, exit code 0.
//
// Ranks agree once per step, by an MPI_Allreduce(MAX), on the signals received and on
// whether the wall-clock interval has passed, so a signal delivered to one rank only (or
// at slightly different times) stops every rank after the same step.
#include <mpi.h>

#include "app/SceneConfig.hpp"

namespace optistep {

class CheckpointSchedule {
 public:
  struct Decision {
    bool checkpoint = false;  ///< write a checkpoint after this step
    bool stop = false;        ///< then stop: a signal came
    int signal = 0;           ///< which (SIGTERM or SIGUSR1), when stop
  };

  /// steps: the accepted-step count the run starts from (0, or a restart's).
  CheckpointSchedule(MPI_Comm comm, const OutputConfig& output, long steps);

  /// Collective, after every step; steps is the accepted-step count after it.
  Decision AfterStep(long steps);
  /// A checkpoint was written after `steps` steps: both intervals start again.
  void Checkpointed(long steps);

 private:
  MPI_Comm comm_;
  OutputConfig output_;
  long last_steps_;
  double last_wall_;
};

}  // namespace optistep

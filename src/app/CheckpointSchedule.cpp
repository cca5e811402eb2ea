#include "app/CheckpointSchedule.hpp"

#include "core/StopSignals.hpp"

namespace optistep {

CheckpointSchedule::CheckpointSchedule(MPI_Comm comm, const OutputConfig& output, long steps)
    : comm_(comm), output_(output), last_steps_(steps), last_wall_(MPI_Wtime()) {}

CheckpointSchedule::Decision CheckpointSchedule::AfterStep(long steps) {
  const bool by_steps = output_.checkpoint_every_steps > 0 &&
                        steps - last_steps_ >= output_.checkpoint_every_steps;
  const bool by_time = output_.checkpoint_every_seconds > 0.0 &&
                       MPI_Wtime() - last_wall_ >= output_.checkpoint_every_seconds;
  int local[2] = {StopSignals::Received(), by_time ? 1 : 0}, agreed[2] = {0, 0};
  MPI_Allreduce(local, agreed, 2, MPI_INT, MPI_MAX, comm_);
  Decision decision;
  decision.signal = agreed[0];
  decision.stop = agreed[0] != 0;
  decision.checkpoint = decision.stop || by_steps || agreed[1] != 0;
  return decision;
}

void CheckpointSchedule::Checkpointed(long steps) {
  last_steps_ = steps;
  last_wall_ = MPI_Wtime();
}

}  // namespace optistep

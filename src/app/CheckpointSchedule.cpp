#include "app/CheckpointSchedule.hpp"

namespace optistep {
namespace {

/// The last stop signal received, 0 for none. Written only by the handler (and cleared
/// when a schedule ends), read once per step.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void RecordStopSignal(int signal) { g_stop_signal = signal; }

}  // namespace

CheckpointSchedule::CheckpointSchedule(MPI_Comm comm, const OutputConfig& output, long steps)
    : comm_(comm), output_(output), last_steps_(steps), last_wall_(MPI_Wtime()) {
  struct sigaction action {};
  action.sa_handler = RecordStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a signal must not fail a system call in MPI or HDF5
  sigaction(SIGTERM, &action, &previous_term_);
  sigaction(SIGUSR1, &action, &previous_usr1_);
}

CheckpointSchedule::~CheckpointSchedule() {
  sigaction(SIGTERM, &previous_term_, nullptr);
  sigaction(SIGUSR1, &previous_usr1_, nullptr);
  g_stop_signal = 0;
}

CheckpointSchedule::Decision CheckpointSchedule::AfterStep(long steps) {
  const bool by_steps = output_.checkpoint_every_steps > 0 &&
                        steps - last_steps_ >= output_.checkpoint_every_steps;
  const bool by_time = output_.checkpoint_every_seconds > 0.0 &&
                       MPI_Wtime() - last_wall_ >= output_.checkpoint_every_seconds;
  int local[2] = {static_cast<int>(g_stop_signal), by_time ? 1 : 0}, agreed[2] = {0, 0};
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

const char* CheckpointSchedule::SignalName(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: return "a signal";
  }
}

}  // namespace optistep

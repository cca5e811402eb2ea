#include "app/Simulation.hpp"

#include <filesystem>

#include "app/CheckpointSchedule.hpp"
#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "io/RunOutput.hpp"

namespace optistep {

Simulation::Simulation(MPI_Comm comm, const SceneConfig& scene) : comm_(comm), scene_(scene) {}

Simulation::~Simulation() = default;

bool Simulation::IsOutputFrame(int frame) const {
  return frame % scene_.output.every == 0 || frame == scene_.time.frames;
}

void Simulation::SetIntegrator(std::unique_ptr<Integrator> integrator) {
  integrator_ = std::move(integrator);
  controller_ = std::make_unique<StepController>(comm_, scene_.time, *integrator_);
}

void Simulation::AdvanceStep(StepStats* stats) {
  const bool frame_done = controller_->AdvanceStep(frame_, [&](const StepRecord& record) {
    if (stats) stats->Record(ToStepRow(record));
  });
  if (frame_done) ++frame_;
}

void Simulation::AdvanceFrame(StepStats* stats) {
  const int next = frame_ + 1;
  while (frame_ < next) AdvanceStep(stats);
}

RunOutcome Simulation::Run(const RunOptions& options) {
  long resumed_step = -1;
  if (!options.restart.empty())
    resumed_step = static_cast<long>(Restart(options.restart, options.allow_scene_change).step);
  std::unique_ptr<StepStats> stats;
  if (options.write_output) {
    frames_ = OpenRunOutput(comm_, scene_);
    StartFrames();
    stats = std::make_unique<StepStats>(comm_, scene_.output.directory + "/stats.csv",
                                        options.print, integrator_->StatsColumns(), resumed_step);
    if (resumed_step >= 0)
      ReseedFrames();
    else
      WriteFrame();
  } else {
    stats = std::make_unique<StepStats>(comm_, "", options.print, integrator_->StatsColumns());
  }
  CheckpointSchedule schedule(comm_, scene_.output, steps());
  while (frame_ < scene_.time.frames) {
    const int before = frame_;
    AdvanceStep(stats.get());
    if (options.write_output && frame_ != before && IsOutputFrame(frame_)) WriteFrame();
    if (options.after_step) options.after_step(steps());
    const CheckpointSchedule::Decision decision = schedule.AfterStep(steps());
    std::string checkpoint = "none (no output)";
    if (options.write_output && decision.checkpoint) {
      checkpoint = WriteCheckpoint();
      schedule.Checkpointed(steps());
    }
    if (decision.stop) {
      PetscPrintf(comm_,
                  "optistep: stopped by %s after step %ld (t = %.9g s, frame %d of %d); "
                  "checkpoint %s; resume with --restart latest\n",
                  CheckpointSchedule::SignalName(decision.signal), steps(), time(), frame_,
                  scene_.time.frames, checkpoint.c_str());
      return RunOutcome::kStopped;
    }
  }
  if (options.write_output)
    PetscPrintf(comm_, "optistep: %d frames written to %s (open %s in ParaView)\n",
                scene_.time.frames, scene_.output.directory.c_str(), frames_->XdmfPath().c_str());
  return RunOutcome::kFinished;
}

void Simulation::ReseedFrames() {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::vector<int> on_disk(frame_ + 1, 0);
  if (rank == 0)
    for (int f = 0; f <= frame_; ++f) {
      std::error_code ignored;
      on_disk[f] = IsOutputFrame(f) && std::filesystem::exists(frames_->FramePath(f), ignored);
    }
  MPI_Bcast(on_disk.data(), frame_ + 1, MPI_INT, 0, comm_);
  for (int f = 0; f <= frame_; ++f)
    if (on_disk[f])
      frames_->AddExistingFrame(f, f * scene_.time.frame_dt, FramePoints(), FrameCells());
}

std::string Simulation::WriteCheckpoint() {
  ScopedPhase phase(kCheckpointPhase);
  int size = 1;
  MPI_Comm_size(comm_, &size);
  CheckpointHeader header;
  header.optistep_version = OPTISTEP_VERSION;
  header.discretization = scene_.discretization;
  header.time = time();
  header.step = steps();
  header.frame = frame_;
  header.ranks = size;
  header.scene_text = scene_.text;
  header.scene_hash = SceneHash(scene_.text);
  CheckpointWriter out(comm_, CheckpointDirectory(scene_.output.directory), header);
  SaveState(out);
  return out.Commit(scene_.output.checkpoints_kept);
}

CheckpointHeader Simulation::Restart(const std::string& spec, bool allow_scene_change) {
  ScopedPhase phase(kCheckpointPhase);
  const std::string hash = SceneHash(scene_.text);
  std::string loaded;
  bool partition_kept = false;
  const CheckpointHeader header = LoadCheckpoint(
      comm_, spec, CheckpointDirectory(scene_.output.directory), [&](const CheckpointReader& in) {
        const CheckpointHeader& h = in.header();
        if (h.discretization != scene_.discretization)
          throw InputError(in.path() + ": a checkpoint of a '" + h.discretization +
                           "' run; scene " + scene_.path + " is '" + scene_.discretization + "'");
        if (h.scene_hash != hash && !allow_scene_change)
          throw InputError(in.path() + ": written for another scene text than " + scene_.path +
                           " (scene hash " + h.scene_hash + ", now " + hash +
                           "; the checkpoint holds the original text as the attribute "
                           "scene_text); pass --allow-scene-change to continue with the new one");
        partition_kept = LoadState(in);
        loaded = in.path();
      });
  frame_ = static_cast<int>(header.frame);
  PetscPrintf(comm_,
              "optistep: restarting from %s: step %lld, t = %.9g s, frame %lld, written on "
              "%lld rank%s%s\n",
              loaded.c_str(),
              static_cast<long long>(header.step), header.time,
              static_cast<long long>(header.frame), static_cast<long long>(header.ranks),
              header.ranks == 1 ? "" : "s",
              !partition_kept              ? " (repartitioned)"
              : header.scene_hash == hash ? " (continues bitwise)"
                                          : " (partition kept; the scene text changed)");
  return header;
}

}  // namespace optistep

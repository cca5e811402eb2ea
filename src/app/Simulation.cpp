#include "app/Simulation.hpp"

#include <climits>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "app/CheckpointSchedule.hpp"
#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "core/StopSignals.hpp"
#include "io/OutputLock.hpp"
#include "io/RunOutput.hpp"

namespace optistep {

Simulation::Simulation(MPI_Comm comm, const SceneConfig& scene) : comm_(comm), scene_(scene) {}

namespace {

/// -step_reject_inverted and -step_max_det_f, inside their own options block so -help
/// lists them.
PetscErrorCode ReadStateCheckOptions(MPI_Comm comm, double* max_det_f, PetscBool* reject_inverted) {
  PetscOptionsBegin(comm, "step_", "Judging the state after each step", "Simulation");
  PetscCall(PetscOptionsBool("-reject_inverted",
                             "A step that leaves a tet or MPM particle inverted or flat (det F <= 0) is a "
                             "failed step, retried with dt/2 (MPM and semi_implicit, CFL-limited: the run "
                             "ends); false accepts it as before (no scene key)",
                             "", *reject_inverted, reject_inverted, nullptr));
  PetscCall(PetscOptionsReal("-max_det_f",
                             "A step that leaves a tet or MPM particle with det F above this is a failed "
                             "step, as for -step_reject_inverted (default: no bound; det F <= 0, an "
                             "inverted element, always fails) (no scene key)",
                             "", *max_det_f, max_det_f, nullptr));
  PetscOptionsEnd();
  return 0;
}

}  // namespace

void Simulation::InstallStateCheck(std::function<std::string()> check) {
  PetscBool reject_inverted = PETSC_TRUE;
  OPTISTEP_PETSC(ReadStateCheckOptions(comm_, &max_det_f_, &reject_inverted));
  min_det_f_ = reject_inverted ? 0.0 : -INFINITY;
  controller_->SetStateCheck(std::move(check));
}

std::string Simulation::JudgeState(const std::vector<double>& det_f, const std::vector<long long>& ids,
                                   const std::vector<char>& finite, const std::string& element,
                                   const std::string& not_finite) const {
  // The smallest and largest det F (NaN counts as both) with their elements, the elements
  // outside the bounds and those not finite otherwise.
  double lowest = INFINITY, highest = -INFINITY;
  long long lowest_id = -1, highest_id = -1;
  double counts[2] = {0.0, 0.0};
  for (std::size_t k = 0; k < det_f.size(); ++k) {
    const double j = det_f[k];
    if (!(j >= lowest)) std::tie(lowest, lowest_id) = std::make_pair(std::isnan(j) ? -INFINITY : j, ids[k]);
    if (!(j <= highest)) std::tie(highest, highest_id) = std::make_pair(std::isnan(j) ? INFINITY : j, ids[k]);
    if (!(j > min_det_f_ && j <= max_det_f_)) counts[0] += 1.0;
    if (!finite[k]) counts[1] += 1.0;
  }
  // Each extreme's element: the lowest id among the ranks that hold the extreme value.
  const auto extreme = [this](double* value, long long* id, MPI_Op op) {
    const double mine = *value;
    MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, op, comm_);
    long long candidate = mine == *value ? *id : LLONG_MAX;
    MPI_Allreduce(&candidate, id, 1, MPI_LONG_LONG, MPI_MIN, comm_);
  };
  extreme(&lowest, &lowest_id, MPI_MIN);
  extreme(&highest, &highest_id, MPI_MAX);
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_DOUBLE, MPI_SUM, comm_);
  if (counts[0] == 0.0 && counts[1] == 0.0) return "";
  std::ostringstream what;
  what.precision(4);
  what << "integrator " << integrator_->Name() << " left ";
  if (counts[0] > 0.0) {
    const bool inverted = lowest <= min_det_f_;
    what << static_cast<long long>(counts[0]) << " " << element << (counts[0] == 1.0 ? "" : "s")
         << (inverted ? " inverted or flat (det F <= 0; " : " stretched beyond -step_max_det_f (") << element
         << " " << (inverted ? lowest_id : highest_id) << " has det F = " << (inverted ? lowest : highest)
         << ", det F ranges from " << lowest << " to " << highest << ")";
  } else {
    what << static_cast<long long>(counts[1]) << " " << element << (counts[1] == 1.0 ? "" : "s") << " with "
         << not_finite << " (det F from " << lowest << " to " << highest << ")";
  }
  return what.str();
}

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
  try {
    return RunSteps(options);
  } catch (const IoError& e) {
    if (newest_checkpoint_.empty()) throw;
    throw IoError(std::string(e.what()) + " (the newest checkpoint, " + newest_checkpoint_ +
                  ", is kept: resume with --restart latest once the folder can be written)");
  }
}

RunOutcome Simulation::RunSteps(const RunOptions& options) {
  // A signal from here on ends the run with a checkpoint, also during a restart or frame 0.
  const StopSignals signals(options.sigterm_grace);
  std::optional<OutputFolderLock> lock;  // before anything in the folder is touched
  if (options.write_output) lock.emplace(comm_, scene_.output.directory);
  long resumed_step = -1;
  if (!options.restart.empty())
    resumed_step = static_cast<long>(Restart(options.restart, options.allow_scene_change).step);
  std::unique_ptr<StepStats> stats;
  if (options.write_output) {
    frames_ = OpenRunOutput(comm_, scene_.output, scene_.name, scene_.text);
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
    try {
      AdvanceStep(stats.get());
    } catch (const StepAbandoned&) {
      const std::string checkpoint = options.write_output ? WriteCheckpoint() : "none (no output)";
      PetscPrintf(comm_,
                  "optistep: stopped by SIGTERM during step %ld, which was abandoned (the "
                  "state is that of step %ld, t = %.9g s, frame %d of %d); checkpoint %s; "
                  "resume with --restart latest\n",
                  steps() + 1, steps(), time(), frame_, scene_.time.frames, checkpoint.c_str());
      return RunOutcome::kStopped;
    }
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
                  StopSignals::Name(decision.signal), steps(), time(), frame_,
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
  header.discretization = ToString(scene_.discretization);
  header.time = time();
  header.step = steps();
  header.frame = frame_;
  header.ranks = size;
  header.scene_text = scene_.text;
  header.scene_hash = SceneHash(scene_.text);
  CheckpointWriter out(comm_, CheckpointDirectory(scene_.output.directory), header);
  SaveState(out);
  newest_checkpoint_ = out.Commit(scene_.output.checkpoints_kept);
  return newest_checkpoint_;
}

CheckpointHeader Simulation::Restart(const std::string& spec, bool allow_scene_change) {
  ScopedPhase phase(kCheckpointPhase);
  std::string loaded, change;
  bool partition_kept = false;
  const CheckpointHeader header = LoadCheckpoint(
      comm_, spec, CheckpointDirectory(scene_.output.directory), [&](const CheckpointReader& in) {
        const CheckpointHeader& h = in.header();
        if (h.discretization != ToString(scene_.discretization))
          throw InputError(in.path() + ": a checkpoint of a '" + h.discretization +
                           "' run; scene " + scene_.path + " is '" + ToString(scene_.discretization) + "'");
        change = SceneDifference(h.scene_text, scene_.text);
        if (!change.empty() && !allow_scene_change)
          throw InputError(in.path() + ": written for another scene than " + scene_.path + " (" +
                           change + "; the checkpoint holds its scene as the attribute "
                           "scene_text); pass --allow-scene-change to continue with the new one");
        partition_kept = LoadState(in);
        loaded = in.path();
      });
  newest_checkpoint_ = loaded;
  frame_ = static_cast<int>(header.frame);
  int size = 1;
  MPI_Comm_size(comm_, &size);
  std::string how;
  if (header.ranks != size)
    how = "repartitioned for " + std::to_string(size) + " rank" + (size == 1 ? "" : "s") +
          ": results agree with an uninterrupted run to solver tolerance";
  else if (!partition_kept)
    how = "repartitioned for the new grid: results agree with an uninterrupted run to solver "
          "tolerance";
  if (!change.empty())
    how += (how.empty() ? "" : "; ") + std::string("the scene changed at ") + change +
           ": the run goes on with the new scene";
  PetscPrintf(comm_,
              "optistep: restarting from %s: step %lld, t = %.9g s, frame %lld, written on "
              "%lld rank%s (%s)\n",
              loaded.c_str(),
              static_cast<long long>(header.step), header.time,
              static_cast<long long>(header.frame), static_cast<long long>(header.ranks),
              header.ranks == 1 ? "" : "s", how.empty() ? "continues bitwise" : how.c_str());
  return header;
}

}  // namespace optistep

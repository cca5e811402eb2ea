#pragma once
// What every run shares, whatever the discretization: the loop over steps and frames
// (an Integrator driven by the StepController, integrators/), frames (XDMF + HDF5) and
// stats.csv, checkpoints (io/Checkpoint.hpp) on a schedule and on SIGTERM/SIGUSR1
// (app/CheckpointSchedule.hpp, core/StopSignals.hpp), and restart from a checkpoint. A discretization
// (FemSimulation, MpmSimulation) supplies its state, its integrator, its frame and its
// checkpoint datasets.
#include <mpi.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "integrators/Integrator.hpp"
#include "integrators/StepController.hpp"
#include "io/Checkpoint.hpp"
#include "app/SceneConfig.hpp"
#include "io/StepStats.hpp"
#include "io/XdmfWriter.hpp"

namespace optistep {

struct RunOptions {
  bool write_output = true;  ///< frames, stats.csv and checkpoints in output.directory
  bool print = true;         ///< one line per step on rank 0
  /// "" starts at t = 0; "latest" or a checkpoint file resumes (Simulation::Restart).
  std::string restart;
  bool allow_scene_change = false;  ///< resume although the scene's text changed
  /// Seconds from SIGTERM to SIGKILL that the launcher allows (core/StopSignals.hpp): the
  /// step under way is finished if it ends within half of them, else abandoned.
  double sigterm_grace = 0.0;
  /// Called on every rank after each step with the accepted-step count (tests send
  /// themselves a signal here).
  std::function<void(long steps)> after_step;
};

enum class RunOutcome {
  kFinished,  ///< every frame was run
  /// A signal stopped the run after a checkpoint (of the step under way, or of the one
  /// before it if that was abandoned); resume with --restart latest.
  kStopped,
};

class Simulation {
 public:
  virtual ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  /// Collective. Locks the output folder for the length of the run (io/OutputLock.hpp;
  /// OutputLocked if another run holds it), restarts if asked, writes frame 0 (a restart
  /// instead lists the frames already on disk up to the checkpoint's, and keeps the rows
  /// of stats.csv up to its step), then steps until the last frame or a stop signal.
  /// IoError on every rank if the folder cannot be written (naming the newest checkpoint,
  /// which is kept).
  RunOutcome Run(const RunOptions& options);
  /// Collective: steps until the end of the current frame.
  void AdvanceFrame(StepStats* stats);
  /// Collective: one step (halved and retried on failure; StepController); frame() grows
  /// by one when the step ends a frame.
  void AdvanceStep(StepStats* stats);

  /// Collective: writes a checkpoint of the current state to
  /// <output.directory>/checkpoints and keeps the newest output.checkpoints_kept.
  /// Returns its path.
  std::string WriteCheckpoint();
  /// Collective: replaces the state by a checkpoint's: spec is "latest" (damaged ones are
  /// reported and skipped) or a file. On the rank count that wrote it the partition is
  /// restored and the run continues bitwise as if never interrupted (with a scene changed
  /// in a key that can change the trajectory, as a run of the changed scene from that state
  /// would; an MPM scene of another dx is repartitioned); on another rank count, to solver
  /// tolerance (MPM particles are distributed afresh). Output keys (SceneDifference) are no
  /// change. InputError if no checkpoint loads, or it was written for another
  /// discretization, or (unless allow_scene_change) for a scene that differs in a key that
  /// can change the trajectory.
  CheckpointHeader Restart(const std::string& spec, bool allow_scene_change);

  int frame() const { return frame_; }
  double time() const { return integrator_->time(); }  ///< s
  long steps() const { return integrator_->steps(); }  ///< accepted steps so far
  Integrator& integrator() { return *integrator_; }

 protected:
  Simulation(MPI_Comm comm, const SceneConfig& scene);

  /// Collective: installs the integrator (the discretization's, by the scene's
  /// integrator key) and its step controller. Called once by the constructor.
  void SetIntegrator(std::unique_ptr<Integrator> integrator);
  /// Called once frames_ exists, before any frame is written (a mesh's topology).
  virtual void StartFrames() {}
  /// Collective: writes frame frame_ to frames_.
  virtual void WriteFrame() = 0;
  /// Rows of a frame's positions and cells (tets, or the points again for a point cloud).
  virtual int64_t FramePoints() const = 0;
  virtual int64_t FrameCells() const = 0;
  /// Collective: the discretization's datasets and attributes.
  virtual void SaveState(CheckpointWriter& out) = 0;
  /// Collective: reads everything from in, then installs it (time, steps and all state but
  /// frame_). Returns whether each rank got back the part of the state it held when the
  /// checkpoint was written (the same rank count, and for MPM a block map that fits this
  /// scene's grid), so that sums run in the same order and the steps continue bitwise;
  /// false when the state was partitioned afresh. InputError if the checkpoint does not
  /// fit the scene (sizes).
  virtual bool LoadState(const CheckpointReader& in) = 0;

  /// Collective: reads -step_reject_inverted and -step_max_det_f (both listed in -help)
  /// and installs JudgeState-based `check` as the controller's state check. Called by a
  /// discretization with elements (tets, MPM particles) once SetIntegrator has run.
  void InstallStateCheck(std::function<std::string()> check);
  /// Collective: the verdict of the state check on this rank's elements: det_f[k] (det F of
  /// element k, its original id ids[k]) must lie in (min, -step_max_det_f] (min 0, or -inf
  /// with -step_reject_inverted false) and finite[k] must be true. Returns "" or one line
  /// naming the integrator, the count of `element`s ("tet", "particle") outside, the worst
  /// with its det F, the range, and what to change; elements that fail only finite[k] are
  /// named "with " + not_finite ("a non-finite von Mises stress").
  std::string JudgeState(const std::vector<double>& det_f, const std::vector<long long>& ids,
                         const std::vector<char>& finite, const std::string& element,
                         const std::string& not_finite) const;

  MPI_Comm comm_;
  SceneConfig scene_;
  std::unique_ptr<XdmfTimeSeries> frames_;
  int frame_ = 0;
  std::unique_ptr<Integrator> integrator_;
  std::unique_ptr<StepController> controller_;

 private:
  std::string newest_checkpoint_;  ///< written or loaded by this run; "" if none
  double max_det_f_ = INFINITY;    ///< -step_max_det_f
  double min_det_f_ = 0.0;         ///< 0, or -inf with -step_reject_inverted false
  RunOutcome RunSteps(const RunOptions& options);
  /// Lists the frame files up to frame_ that the output rule wrote and that are on disk.
  void ReseedFrames();
  bool IsOutputFrame(int frame) const;
};

}  // namespace optistep

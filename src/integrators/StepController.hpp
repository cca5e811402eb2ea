#pragma once
// The step controller every integrator shares (docs/dev/ARCHITECTURE.md): frame splitting,
// the integrator's step limit (MPM's CFL condition), and dt halving with retry.
//
//  - Without a step limit (FEM backward Euler), each frame of length frame_dt is cut into
//    n = ceil(frame_dt / dt) equal steps of frame_dt / n (time.dt is the requested step);
//    the count of steps taken in the current frame is state (FEM checkpoints save it).
//  - With one (MPM), after every step the rest of the frame is cut again into equal steps
//    no longer than min(time.dt, MaxStep()) (Gast et al. 2015 Sec. 6.3; HOT Sec. 7.1: the
//    limit changes with the state, and one full step plus a short remainder would cost
//    more than equal steps, since the solve's work grows with dt); the last step ends on
//    the frame boundary.
//  - A step that fails (no decrease, NaN, iteration cap) is retried as two steps of half
//    the size, recursively, up to time.max_dt_halvings times; then StepFailure.
//  - A step that a stop signal abandons (SolveReport::abandoned) is given up: StepAbandoned,
//    with the state of the last whole step (Integrator::KeepState).
#include <mpi.h>

#include <functional>
#include <string>

#include "integrators/Integrator.hpp"
#include "io/SceneSections.hpp"
#include "io/StepStats.hpp"

namespace optistep {

/// The stats.csv row and step line of an accepted step.
StepRow ToStepRow(const StepRecord& record);

class StepController {
 public:
  StepController(MPI_Comm comm, const TimeConfig& time, Integrator& integrator);

  /// Collective: one step of the current frame `frame` (0-based), halved and retried on
  /// failure; on_step is called after each accepted (sub)step. Returns true when the step
  /// ended the frame. Throws StepFailure naming the time and the reason, or StepAbandoned.
  bool AdvanceStep(int frame, const std::function<void(const StepRecord&)>& on_step);

  /// Steps of the current frame already taken (fixed split only; 0 with a step limit).
  int frame_step() const { return frame_step_; }
  /// A restart's value of frame_step(); InputError-free: the caller checks the range.
  void set_frame_step(int steps) { frame_step_ = steps; }
  /// ceil(frame_dt / dt): the steps of a frame without a step limit.
  int StepsPerFrame() const;

  /// Collective: judges the state after each converged try; "" accepts it, otherwise the
  /// reason ("tet 12 inverted: det F = -0.3 ..."). A rejected state is a failed step:
  /// without a step limit the whole step goes back to its start (Integrator::KeepState)
  /// and is taken again in twice as many pieces, up to time.max_dt_halvings; with one
  /// (no state to go back to) the run ends with StepFailure.
  void SetStateCheck(std::function<std::string()> check) { check_ = std::move(check); }

 private:
  /// Tries a step of dt, halving on failure; below min_depth it splits without trying.
  void Advance(double dt, int depth, int min_depth, double start_wall,
               const std::function<void(const StepRecord&)>& on_step);

  MPI_Comm comm_;
  TimeConfig time_;
  Integrator& integrator_;
  int frame_step_ = 0;
  bool kept_ = false;  ///< the integrator keeps the state at the start of this step
  std::function<std::string()> check_;
};

}  // namespace optistep

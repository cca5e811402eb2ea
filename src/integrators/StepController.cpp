#include "integrators/StepController.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <petscsys.h>

namespace optistep {

StepRow ToStepRow(const StepRecord& r) {
  StepRow row;
  row.step = r.step;
  row.t = r.t;
  row.dt = r.dt;
  row.halvings = r.halvings;
  row.method = r.method;
  row.outer_iterations = r.solve.iterations;
  row.inner_iterations = r.solve.linear_iterations;
  row.initializer_applications = r.solve.initializer_applications;
  row.cn_residual = r.solve.cn_residual;
  row.energy = r.solve.energy;
  row.gradient_norm = r.solve.gradient_norm;
  row.wall = r.wall;
  row.extra = r.extra;
  return row;
}

StepController::StepController(MPI_Comm comm, const TimeConfig& time, Integrator& integrator)
    : comm_(comm), time_(time), integrator_(integrator) {}

int StepController::StepsPerFrame() const {
  return static_cast<int>(std::ceil(time_.frame_dt / time_.dt - 1e-9));
}

namespace {

/// A converged try whose state the state check refused, at this depth of halving.
struct StateRejected {
  std::string reason;
  int depth;
};

}  // namespace

bool StepController::AdvanceStep(int frame, const std::function<void(const StepRecord&)>& on_step) {
  if (!integrator_.HasStepLimit()) {
    const int n_steps = StepsPerFrame();
    const double dt = time_.frame_dt / n_steps;
    kept_ = false;
    // With a state check, the accepted pieces of a step are reported once the whole step
    // stands: a rejected piece sends the step back to its start.
    std::vector<StepRecord> pieces;
    const std::function<void(const StepRecord&)> report = [&](const StepRecord& r) { pieces.push_back(r); };
    if (check_) {
      integrator_.KeepState();
      kept_ = true;
    }
    const double start_wall = MPI_Wtime();
    for (int min_depth = 0;;) {
      try {
        Advance(dt, 0, min_depth, start_wall, check_ ? report : on_step);
        break;
      } catch (const StepAbandoned&) {
        // Halves of the step may have been accepted; the frame's fixed split resumes only
        // from whole steps.
        if (kept_) integrator_.RestoreKeptState();
        throw;
      } catch (const StateRejected& rejected) {
        integrator_.RestoreKeptState();
        pieces.clear();
        const double piece = dt / std::pow(2.0, rejected.depth);
        if (rejected.depth >= time_.max_dt_halvings) {
          std::ostringstream msg;
          msg << "step at t = " << integrator_.time() << " s with dt = " << piece << " s failed after "
              << rejected.depth << " halvings of dt: " << rejected.reason;
          throw StepFailure(msg.str(), integrator_.SmallerStepRemedy(true));
        }
        PetscPrintf(comm_, "  step at t = %g s, dt = %g s failed (%s); retrying the step from t = %g s "
                    "with dt = %g s\n", integrator_.time(), piece, rejected.reason.c_str(),
                    integrator_.time(), 0.5 * piece);
        min_depth = rejected.depth + 1;
      }
    }
    for (const StepRecord& r : pieces) on_step(r);
    if (++frame_step_ < n_steps) return false;
    frame_step_ = 0;
    return true;
  }
  const double frame_end = (frame + 1) * time_.frame_dt;
  const double rest = frame_end - integrator_.time();
  const double dt_max = std::min(time_.dt, integrator_.MaxStep());
  const double steps = std::max(1.0, std::ceil(rest / dt_max - 1e-9));
  try {
    Advance(rest / steps, 0, 0, MPI_Wtime(), on_step);
  } catch (const StateRejected& rejected) {  // no earlier state to go back to
    std::ostringstream msg;
    msg << "step ending at t = " << integrator_.time() << " s: " << rejected.reason;
    throw StepFailure(msg.str(), integrator_.SmallerStepRemedy(false));
  }
  if (integrator_.time() < frame_end - 1e-12 * time_.frame_dt) return false;
  // Steps end on the frame boundary; remove round-off drift.
  integrator_.SetClock(frame_end, integrator_.steps());
  return true;
}

void StepController::Advance(double dt, int depth, int min_depth, double start_wall,
                             const std::function<void(const StepRecord&)>& on_step) {
  if (depth < min_depth) {
    Advance(0.5 * dt, depth + 1, min_depth, start_wall, on_step);
    Advance(0.5 * dt, depth + 1, min_depth, MPI_Wtime(), on_step);
    return;
  }
  const SolveReport report = integrator_.TryStep(dt);
  if (report.abandoned) {
    std::ostringstream msg;
    msg << "step at t = " << integrator_.time() << " s with dt = " << dt << " s: "
        << report.reason;
    throw StepAbandoned(msg.str());
  }
  if (report.converged) {
    if (check_) {
      const std::string reason = check_();
      if (!reason.empty()) throw StateRejected{reason, depth};
    }
    StepRecord record;
    record.step = integrator_.steps();
    record.t = integrator_.time();
    record.dt = dt;
    record.halvings = depth;
    record.method = integrator_.Method();
    record.solve = report;
    record.wall = MPI_Wtime() - start_wall;
    record.extra = integrator_.StatsValues();
    on_step(record);
    return;
  }
  if (depth >= time_.max_dt_halvings) {
    std::ostringstream msg;
    msg << "step at t = " << integrator_.time() << " s with dt = " << dt << " s failed after "
        << depth << " halvings of dt: " << report.reason << " (" << report.iterations
        << " iterations, CN residual " << report.cn_residual << ")";
    throw StepFailure(msg.str(), integrator_.SmallerStepRemedy(true));
  }
  PetscPrintf(comm_, "  step at t = %g s, dt = %g s failed (%s); retrying with dt/2\n",
              integrator_.time(), dt, report.reason.c_str());
  if (depth == 0 && !integrator_.HasStepLimit() && !kept_) {
    integrator_.KeepState();
    kept_ = true;
  }
  Advance(0.5 * dt, depth + 1, min_depth, start_wall, on_step);
  Advance(0.5 * dt, depth + 1, min_depth, MPI_Wtime(), on_step);
}

}  // namespace optistep

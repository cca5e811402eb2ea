#include "integrators/StepController.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

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

bool StepController::AdvanceStep(int frame, const std::function<void(const StepRecord&)>& on_step) {
  if (!integrator_.HasStepLimit()) {
    const int n_steps = StepsPerFrame();
    kept_ = false;
    try {
      Advance(time_.frame_dt / n_steps, 0, MPI_Wtime(), on_step);
    } catch (const StepAbandoned&) {
      // Halves of the step may have been accepted; the frame's fixed split resumes only
      // from whole steps.
      if (kept_) integrator_.RestoreKeptState();
      throw;
    }
    if (++frame_step_ < n_steps) return false;
    frame_step_ = 0;
    return true;
  }
  const double frame_end = (frame + 1) * time_.frame_dt;
  const double rest = frame_end - integrator_.time();
  const double dt_max = std::min(time_.dt, integrator_.MaxStep());
  const double steps = std::max(1.0, std::ceil(rest / dt_max - 1e-9));
  Advance(rest / steps, 0, MPI_Wtime(), on_step);
  if (integrator_.time() < frame_end - 1e-12 * time_.frame_dt) return false;
  // Steps end on the frame boundary; remove round-off drift.
  integrator_.SetClock(frame_end, integrator_.steps());
  return true;
}

void StepController::Advance(double dt, int depth, double start_wall,
                             const std::function<void(const StepRecord&)>& on_step) {
  const SolveReport report = integrator_.TryStep(dt);
  if (report.abandoned) {
    std::ostringstream msg;
    msg << "step at t = " << integrator_.time() << " s with dt = " << dt << " s: "
        << report.reason;
    throw StepAbandoned(msg.str());
  }
  if (report.converged) {
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
    throw StepFailure(msg.str());
  }
  PetscPrintf(comm_, "  step at t = %g s, dt = %g s failed (%s); retrying with dt/2\n",
              integrator_.time(), dt, report.reason.c_str());
  if (depth == 0 && !integrator_.HasStepLimit()) {
    integrator_.KeepState();
    kept_ = true;
  }
  Advance(0.5 * dt, depth + 1, start_wall, on_step);
  Advance(0.5 * dt, depth + 1, MPI_Wtime(), on_step);
}

}  // namespace optistep

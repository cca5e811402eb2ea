#include "integrators/FemQuasiStatic.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/Error.hpp"
#include "core/FiniteVector.hpp"
#include "solvers/MinimizerFactory.hpp"

namespace optistep {
namespace {

/// The scene's solver block with the load-relative test: termination absolute, tau given.
SolverConfig LoadRelative(const SolverConfig& solver, double tau) {
  SolverConfig config = solver;
  config.termination = Termination::kAbsolute;
  config.tau = tau;
  return config;
}

}  // namespace

FemQuasiStatic::FemQuasiStatic(const IntegratorConfig& config, FemModel& model, Vec x, Vec v)
    : config_(config), model_(model), x_(x), v_(v), potential_(model, config.damping.stiffness_beta) {
  const IntegratorConfig& scene = config;
  tau_ = scene.quasi_static.tolerance * potential_.ExternalLoadNorm();
  if (!(tau_ > 0.0))
    throw InputError(scene.path + ": integrator: quasi_static needs a load: gravity is zero "
                     "and no loads: entry has a nonzero force on a free node");
  minimizer_ = CreateMinimizer(model.comm(), LoadRelative(scene.solver, tau_), model.SolverDefaults(),
                               scene.path);
  potential_.SetProjectHessian(scene.solver.hessian_projection == HessianProjection::kElement);
  OPTISTEP_PETSC(VecDuplicate(x_, u_.out()));
  OPTISTEP_PETSC(VecDuplicate(x_, zero_.out()));
  OPTISTEP_PETSC(VecSet(zero_, 0.0));
  OPTISTEP_PETSC(VecSet(v_, 0.0));
}

FemQuasiStatic::~FemQuasiStatic() = default;

std::string FemQuasiStatic::Describe() const {
  std::ostringstream s;
  s << Name() << " (" << (config_.quasi_static.ramp ? "gravity ramped" : "full gravity")
    << ", |g| <= " << config_.quasi_static.tolerance << " |f_ext| = " << tau_
    << " N), minimizer " << minimizer_->Describe();
  return s.str();
}

double FemQuasiStatic::LoadScale(double t) const {
  const IntegratorConfig& scene = config_;
  if (!scene.quasi_static.ramp) return 1.0;
  const double ramp_time = scene.quasi_static.ramp_time > 0.0
                               ? scene.quasi_static.ramp_time
                               : scene.time.frames * scene.time.frame_dt;
  return std::min(1.0, t / ramp_time);
}

void FemQuasiStatic::KeepState() {
  if (!x_kept_) OPTISTEP_PETSC(VecDuplicate(x_, x_kept_.out()));
  OPTISTEP_PETSC(VecCopy(x_, x_kept_));
  t_kept_ = t_;
  steps_kept_ = steps_;
}

void FemQuasiStatic::RestoreKeptState() {
  OPTISTEP_PETSC(VecCopy(x_kept_, x_));
  t_ = t_kept_;
  steps_ = steps_kept_;
}

SolveReport FemQuasiStatic::TryStep(double dt) {
  const double t_next = t_ + dt;
  potential_.SetInertiaAndLoadScale(0.0, LoadScale(t_next));
  potential_.BeginStep(x_, zero_, dt, t_next);
  OPTISTEP_PETSC(VecCopy(x_, u_));
  potential_.ApplyDirichlet(u_);
  SolveReport report = minimizer_->Minimize(potential_, u_);
  if (!report.converged) return report;
  if (!AllFinite(u_)) {
    report.converged = false;
    report.reason = "NaN in the new positions";
    return report;
  }
  OPTISTEP_PETSC(VecCopy(u_, x_));
  OPTISTEP_PETSC(VecSet(v_, 0.0));
  t_ = t_next;
  ++steps_;
  return report;
}

}  // namespace optistep

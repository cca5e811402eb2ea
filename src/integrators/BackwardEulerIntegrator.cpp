#include "integrators/BackwardEulerIntegrator.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/Error.hpp"
#include "core/Phases.hpp"

namespace optistep {

BackwardEulerIntegrator::BackwardEulerIntegrator(FemModel& model, Minimizer& minimizer)
    : model_(model),
      minimizer_(minimizer),
      potential_(model, model.scene().solver.cn_epsilon, model.scene().damping.stiffness_beta),
      max_halvings_(model.scene().time.max_dt_halvings) {
  x_ = model_.CreateNodeVector();
  OPTISTEP_PETSC(VecDuplicate(x_, &v_));
  OPTISTEP_PETSC(VecDuplicate(x_, &u_));
  OPTISTEP_PETSC(VecDuplicate(x_, &guess_));
  model_.InitialState(x_, v_);
}

BackwardEulerIntegrator::~BackwardEulerIntegrator() {
  VecDestroy(&x_);
  VecDestroy(&v_);
  VecDestroy(&u_);
  VecDestroy(&guess_);
}

void BackwardEulerIntegrator::SetState(const double* x, const double* v, double t, long steps) {
  for (auto [target, values] : {std::pair<Vec, const double*>{x_, x}, {v_, v}}) {
    PetscInt n = 0;
    PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetLocalSize(target, &n));
    OPTISTEP_PETSC(VecGetArray(target, &a));
    std::copy(values, values + n, a);
    OPTISTEP_PETSC(VecRestoreArray(target, &a));
    OPTISTEP_PETSC(VecGhostUpdateBegin(target, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecGhostUpdateEnd(target, INSERT_VALUES, SCATTER_FORWARD));
  }
  t_ = t;
  steps_ = steps;
}

SolveReport BackwardEulerIntegrator::TryStep(double dt) {
  potential_.BeginStep(x_, v_, dt, t_ + dt);
  // Best of the two initial guesses x_n and x_hat (Gast Sec. 3.1), Dirichlet rows set.
  OPTISTEP_PETSC(VecCopy(x_, u_));
  potential_.ApplyDirichlet(u_);
  if (model_.scene().solver.best_of_two_guesses) {
    OPTISTEP_PETSC(VecCopy(potential_.InertialTarget(), guess_));
    potential_.ApplyDirichlet(guess_);
    if (potential_.Energy(guess_) < potential_.Energy(u_)) OPTISTEP_PETSC(VecCopy(guess_, u_));
  }
  SolveReport report = minimizer_.Minimize(potential_, u_);
  if (!report.converged) return report;
  // v_{n+1} = (x_{n+1} - x_n) / dt, then friction; x_{n+1} = u.
  OPTISTEP_PETSC(VecWAXPY(guess_, -1.0, x_, u_));
  OPTISTEP_PETSC(VecScale(guess_, 1.0 / dt));
  PetscReal vnorm = 0.0;
  OPTISTEP_PETSC(VecNorm(guess_, NORM_2, &vnorm));
  if (std::isnan(vnorm)) {
    report.converged = false;
    report.reason = "NaN in the new velocity";
    return report;
  }
  {
    ScopedPhase phase(Phase::kFriction);
    ApplyFriction(u_, guess_, dt);
  }
  OPTISTEP_PETSC(VecCopy(u_, x_));
  OPTISTEP_PETSC(VecCopy(guess_, v_));
  t_ += dt;
  ++steps_;
  return report;
}

void BackwardEulerIntegrator::Advance(double dt,
                                      const std::function<void(const StepRecord&)>& on_step) {
  AdvanceRecursive(dt, 0, MPI_Wtime(), on_step);
}

void BackwardEulerIntegrator::AdvanceRecursive(
    double dt, int depth, double start_wall,
    const std::function<void(const StepRecord&)>& on_step) {
  SolveReport report = TryStep(dt);
  if (report.converged) {
    StepRecord record;
    record.step = steps_;
    record.t = t_;
    record.dt = dt;
    record.halvings = depth;
    record.solve = report;
    record.wall = MPI_Wtime() - start_wall;
    on_step(record);
    return;
  }
  if (depth >= max_halvings_) {
    std::ostringstream msg;
    msg << "step at t = " << t_ << " s with dt = " << dt << " s failed after " << depth
        << " halvings of dt: " << report.reason << " (" << report.iterations
        << " iterations, CN residual " << report.cn_residual << ")";
    throw StepFailure(msg.str());
  }
  PetscPrintf(model_.comm(), "  step at t = %g s, dt = %g s failed (%s); retrying with dt/2\n",
              t_, dt, report.reason.c_str());
  AdvanceRecursive(0.5 * dt, depth + 1, start_wall, on_step);
  AdvanceRecursive(0.5 * dt, depth + 1, MPI_Wtime(), on_step);
}

void BackwardEulerIntegrator::ApplyFriction(Vec x, Vec v, double dt) const {
  bool any_friction = false;
  for (const auto& c : model_.collision_objects()) any_friction |= c.friction() > 0.0;
  if (!any_friction) return;
  const PetscScalar* xa = nullptr;
  PetscScalar* va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(x, &xa));
  OPTISTEP_PETSC(VecGetArray(v, &va));
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    if (model_.IsConstrained(static_cast<int>(l))) continue;
    const double m = model_.Mass(static_cast<int>(l));
    const Vec3 xi(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]);
    Vec3 vi(va[3 * l], va[3 * l + 1], va[3 * l + 2]);
    for (const auto& c : model_.collision_objects()) {
      if (c.friction() <= 0.0) continue;
      Vec3 n;
      const double fn = c.NormalForce(xi, m, &n);
      if (fn <= 0.0) continue;
      // Coulomb: the tangential velocity loses at most mu |f_n| dt / m (Gast Sec. 5.2).
      const Vec3 vt = vi - vi.dot(n) * n;
      const double speed = vt.norm();
      if (speed <= 0.0) continue;
      const double scale = std::max(0.0, 1.0 - c.friction() * fn * dt / (m * speed));
      vi = vi - vt + scale * vt;
    }
    for (int d = 0; d < 3; ++d) va[3 * l + d] = vi[d];
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(x, &xa));
  OPTISTEP_PETSC(VecRestoreArray(v, &va));
}

}  // namespace optistep

#include "integrators/FemBackwardEuler.hpp"

#include <algorithm>
#include <cmath>

#include "core/Error.hpp"
#include "core/FiniteVector.hpp"
#include "core/Phases.hpp"
#include "model/SmoothedFriction.hpp"

namespace optistep {
namespace {

const Phase kFrictionPhase("Friction");

}  // namespace

FemBackwardEuler::FemBackwardEuler(const IntegratorConfig& config, FemModel& model, Vec x, Vec v)
    : BackwardEuler(model.comm(), config, model.SolverDefaults()),
      model_(model),
      x_(x),
      v_(v),
      potential_(model, config.damping.stiffness_beta) {
  OPTISTEP_PETSC(VecDuplicate(x_, u_.out()));
  OPTISTEP_PETSC(VecDuplicate(x_, guess_.out()));
  if (config.solver.hessian_projection == HessianProjection::kNone) potential_.SetProjectHessian(false);
}

FemBackwardEuler::~FemBackwardEuler() = default;

void FemBackwardEuler::KeepState() { kept_.Keep(x_, v_, t_, steps_); }

void FemBackwardEuler::RestoreKeptState() { kept_.Restore(x_, v_, &t_, &steps_); }

SolveReport FemBackwardEuler::TryStep(double dt) {
  potential_.BeginStep(x_, v_, dt, t_ + dt);
  OPTISTEP_PETSC(VecCopy(x_, u_));
  potential_.ApplyDirichlet(u_);
  potential_.ProjectOntoConstraints(u_);  // constraint collisions: both guesses on the surface
  OPTISTEP_PETSC(VecCopy(potential_.InertialTarget(), guess_));
  potential_.ApplyDirichlet(guess_);
  potential_.ProjectOntoConstraints(guess_);
  TakeBetterStart(potential_, u_, guess_);
  // And x_hat + dt^2 g, the exact step of a body in free fall (the start MPM takes as
  // dv = dt g): without it, a stiff body's Hessian (elastic stiffness over inertia beyond
  // 1e16 at large steps) leaves the fall to round-off.
  const Vec3 fall = dt * dt * model_.Gravity(t_ + dt);
  if (fall.squaredNorm() > 0.0) {
    OPTISTEP_PETSC(VecCopy(potential_.InertialTarget(), guess_));
    {
      const VecArray ga(guess_);
      for (PetscInt l = 0; l < model_.mesh().n_owned; ++l)
        for (int d = 0; d < 3; ++d) ga[3 * l + d] += fall[d];
    }
    potential_.ApplyDirichlet(guess_);
    potential_.ProjectOntoConstraints(guess_);
    TakeBetterStart(potential_, u_, guess_);
  }
  SolveReport report = minimizer_->Minimize(potential_, u_);
  // Friction as a potential: IPC's outer iterations (Li et al. 2020, Sec. 5.1), normal
  // forces and normals lagged again at the last solve's result. Constraint objects have no
  // normal force before a solve of the step: that one was frictionless for them, and
  // lagged_updates friction solves follow it.
  if (potential_.HasFrictionPotential()) {
    const int solves = scene_.friction.lagged_updates - (potential_.constraints() ? 0 : 1);
    report = LaggedFrictionSolves(potential_, u_, solves, report, [this] { potential_.LagFriction(u_); });
  }
  if (!report.converged) return report;
  // v_{n+1} = (x_{n+1} - x_n) / dt, then friction; x_{n+1} = u.
  OPTISTEP_PETSC(VecWAXPY(guess_, -1.0, x_, u_));
  OPTISTEP_PETSC(VecScale(guess_, 1.0 / dt));
  if (!AllFinite(guess_)) {
    report.converged = false;
    report.reason = "NaN in the new velocity";
    return report;
  }
  if (!potential_.HasFrictionPotential()) {
    ScopedPhase timed(kFrictionPhase);
    ApplyFriction(u_, guess_, dt);
  }
  if (potential_.constraints() && !potential_.HasFrictionPotential()) {
    ScopedPhase timed(kFrictionPhase);
    ApplyConstraintFriction(u_, guess_, dt);
  }
  const double self_mu = scene_.self_contact.friction;
  if (self_mu > 0.0 && potential_.self_contact()) {  // Gast et al. 2015 Sec. 5.3
    ScopedPhase timed(kFrictionPhase);
    potential_.self_contact()->ApplyFriction(u_, guess_, self_mu, dt);
  }
  OPTISTEP_PETSC(VecCopy(u_, x_));
  OPTISTEP_PETSC(VecCopy(guess_, v_));
  t_ += dt;
  ++steps_;
  step_ = report;
  return report;
}

std::vector<std::string> FemBackwardEuler::StatsColumns() const {
  std::vector<std::string> columns;
  if (scene_.self_contact.enabled) columns = {"contact_pairs", "contact_evaluations", "contact_skips"};
  for (const std::string& c : BackwardEuler::StatsColumns()) columns.push_back(c);
  return columns;
}

std::vector<double> FemBackwardEuler::StatsValues() const {
  std::vector<double> values;
  if (scene_.self_contact.enabled) {
    const FemIncrementalPotential::ContactCounts c = potential_.StepContactCounts();
    values = {static_cast<double>(c.pairs), static_cast<double>(c.evaluations), static_cast<double>(c.skipped)};
  }
  for (double v : BackwardEuler::StatsValues()) values.push_back(v);
  return values;
}

void FemBackwardEuler::ApplyFriction(Vec x, Vec v, double dt) const {
  bool any_friction = false;
  for (const auto& c : model_.collision_objects()) any_friction |= c.friction() > 0.0;
  if (!any_friction) return;
  const VecArrayRead xa(x);
  const VecArray va(v);
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
      // Coulomb: the tangential velocity relative to the object's material point (posed
      // at t_{n+1}) loses at most mu |f_n| dt / m (Gast Sec. 5.2).
      const Vec3 vr = vi - c.Velocity(xi);
      const Vec3 vt = vr - vr.dot(n) * n;
      const double speed = vt.norm();
      if (speed <= 0.0) continue;
      const double scale = 1.0 - CoulombStoppedFraction(c.friction() * fn * dt, m * speed);
      vi = vi - vt + scale * vt;
    }
    for (int d = 0; d < 3; ++d) va[3 * l + d] = vi[d];
  }
}

void FemBackwardEuler::ApplyConstraintFriction(Vec x, Vec v, double dt) {
  const ConstraintCollisions& constraints = *potential_.constraints();
  const auto& objects = model_.collision_objects();
  {
    const VecArray xa(x), va(v);
    for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
      // Coulomb (Gast Sec. 5.1): the tangential velocity loses at most mu lambda dt / m, the
      // friction impulse the constraint's normal impulse lambda dt allows (summed over the
      // objects holding the node; tangential: in all their tangent planes).
      // The velocity is taken relative to the objects' material points at x_{n+1} (posed at
      // t_{n+1}), weighted by their normal forces; zero for static objects.
      double cap = 0.0, held = 0.0;
      Vec3 n, v_object = Vec3::Zero();
      int k = -1;
      const Vec3 xi(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]);
      for (int which = 0; which < 3; ++which) {
        const double lambda = constraints.NormalForce(static_cast<int>(l), which, &n, &k);
        if (k < 0) break;
        cap += objects[k].friction() * lambda;
        if (objects[k].moving()) v_object += lambda * objects[k].Velocity(xi);
        held += lambda;
      }
      if (cap <= 0.0) continue;
      if (held > 0.0) v_object /= held;
      const double m = model_.Mass(static_cast<int>(l));
      const Vec3 vr = Vec3(va[3 * l], va[3 * l + 1], va[3 * l + 2]) - v_object;
      const Vec3 vt = vr - constraints.NormalProjection(static_cast<int>(l)) * vr;
      const double speed = vt.norm();
      if (speed <= 0.0) continue;
      const Vec3 dv = -CoulombStoppedFraction(cap * dt, m * speed) * vt;
      // The position follows (x_{n+1} = x_n + dt v_{n+1}): otherwise a node that friction
      // stops has still slid by its frictionless step, and a body that should stick creeps.
      for (int d = 0; d < 3; ++d) {
        va[3 * l + d] += dv[d];
        xa[3 * l + d] += dt * dv[d];
      }
    }
  }
  potential_.ProjectOntoConstraints(x);  // back onto curved surfaces
}

}  // namespace optistep

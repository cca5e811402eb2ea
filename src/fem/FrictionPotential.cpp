#include "fem/FrictionPotential.hpp"

#include "model/SmoothedFriction.hpp"

namespace optistep {

FrictionPotential::FrictionPotential(const FemModel& model, double epsilon_v)
    : model_(model), epsilon_v_(epsilon_v) {}

void FrictionPotential::Lag(const PetscScalar* x_lag, const PetscScalar* x_n, double dt,
                            const ConstraintCollisions* constraints) {
  const PetscInt n_owned = model_.mesh().n_owned;
  eps_h_ = epsilon_v_ * dt;
  x_n_.resize(n_owned);
  contact_start_.assign(n_owned + 1, 0);
  contacts_.clear();
  for (PetscInt l = 0; l < n_owned; ++l) {
    x_n_[l] = Vec3(x_n[3 * l], x_n[3 * l + 1], x_n[3 * l + 2]);
    if (!model_.IsConstrained(static_cast<int>(l))) {
      const Vec3 x(x_lag[3 * l], x_lag[3 * l + 1], x_lag[3 * l + 2]);
      for (const auto& c : model_.collision_objects()) {
        if (c.friction() <= 0.0) continue;
        Vec3 n;
        const double lambda = c.NormalForce(x, model_.Mass(static_cast<int>(l)), &n);
        if (lambda > 0.0) contacts_.push_back({c.friction() * lambda, n, dt * c.Velocity(x)});
      }
      // Constraint objects (Gast Sec. 3.2): lambda and n of the active set registered at x_lag.
      for (int which = 0; constraints && which < 3; ++which) {
        Vec3 n;
        int k = -1;
        const double lambda = constraints->NormalForce(static_cast<int>(l), which, &n, &k);
        if (k < 0) break;
        const CollisionObject& c = model_.collision_objects()[k];
        if (c.friction() > 0.0 && lambda > 0.0)
          contacts_.push_back({c.friction() * lambda, n, dt * c.Velocity(x)});
      }
    }
    contact_start_[l + 1] = static_cast<int>(contacts_.size());
  }
}

double FrictionPotential::NodeTerm(int l, const Vec3& x_l, Vec3* gradient, Mat3* hessian) const {
  const Vec3 dx = x_l - x_n_[l];
  double energy = 0.0;
  for (int k = contact_start_[l]; k < contact_start_[l + 1]; ++k) {
    const Contact& c = contacts_[k];
    const Mat3 T = Mat3::Identity() - c.normal * c.normal.transpose();
    // u_T = T (x - x_n - d_obj), the tangential displacement over the step relative to
    // the object's.
    energy += SmoothedFriction(c.mu_lambda, T * (dx - c.object_shift), T, eps_h_, gradient, hessian);
  }
  return energy;
}

}  // namespace optistep

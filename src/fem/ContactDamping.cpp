#include "fem/ContactDamping.hpp"

namespace optistep {

bool ContactDamping::Wanted(const FemModel& model) {
  for (const auto& c : model.collision_objects())
    if (c.config().damping > 0.0) return true;
  return false;
}

void ContactDamping::Lag(const PetscScalar* x_n, double dt) {
  const PetscInt n_owned = model_.mesh().n_owned;
  x_n_.resize(n_owned);
  dashpot_start_.assign(n_owned + 1, 0);
  dashpots_.clear();
  for (PetscInt l = 0; l < n_owned; ++l) {
    x_n_[l] = Vec3(x_n[3 * l], x_n[3 * l + 1], x_n[3 * l + 2]);
    if (!model_.IsConstrained(static_cast<int>(l)))
      for (const auto& c : model_.collision_objects()) {
        Vec3 n;
        const double coefficient = c.DampingCoefficient(x_n_[l], model_.Mass(static_cast<int>(l)), &n);
        if (coefficient > 0.0) dashpots_.push_back({coefficient / dt, n});
      }
    dashpot_start_[l + 1] = static_cast<int>(dashpots_.size());
  }
}

double ContactDamping::NodeTerm(int l, const Vec3& x_l, Vec3* gradient, Mat3* hessian) const {
  const Vec3 dx = x_l - x_n_[l];
  double energy = 0.0;
  for (int k = dashpot_start_[l]; k < dashpot_start_[l + 1]; ++k) {
    const Dashpot& d = dashpots_[k];
    const double s = d.normal.dot(dx);  // normal displacement over the step (m)
    energy += 0.5 * d.c_over_dt * s * s;
    if (gradient) *gradient += d.c_over_dt * s * d.normal;
    if (hessian) *hessian += d.c_over_dt * d.normal * d.normal.transpose();
  }
  return energy;
}

}  // namespace optistep

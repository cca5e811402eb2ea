#include "fem/FrictionPotential.hpp"

#include <cmath>

namespace optistep {

FrictionPotential::FrictionPotential(const FemModel& model, double epsilon_v)
    : model_(model), epsilon_v_(epsilon_v) {}

void FrictionPotential::Lag(const PetscScalar* x_lag, const PetscScalar* x_n, double dt) {
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
        if (lambda > 0.0) contacts_.push_back({c.friction() * lambda, n});
      }
    }
    contact_start_[l + 1] = static_cast<int>(contacts_.size());
  }
}

double FrictionPotential::NodeTerm(int l, const Vec3& x_l, Vec3* gradient, Mat3* hessian) const {
  const double e = eps_h_;
  const Vec3 dx = x_l - x_n_[l];
  double energy = 0.0;
  for (int k = contact_start_[l]; k < contact_start_[l + 1]; ++k) {
    const Contact& c = contacts_[k];
    const Mat3 T = Mat3::Identity() - c.normal * c.normal.transpose();
    const Vec3 u = T * dx;  // u_T, the tangential displacement over the step
    const double y = u.norm();
    // IPC eq. 14-15: f_0, f_1 = f_0' and f_1 / y (finite at y = 0), f_2 = f_0''.
    const bool smooth = y < e;
    const double f0 = smooth ? y * y * (1.0 - y / (3.0 * e)) / e + e / 3.0 : y;
    const double f1_over_y = smooth ? (2.0 - y / e) / e : 1.0 / y;
    const double f2 = smooth ? (2.0 - 2.0 * y / e) / e : 0.0;
    energy += c.mu_lambda * f0;
    if (gradient) *gradient += c.mu_lambda * f1_over_y * u;  // T u = u
    if (hessian) {
      // mu lambda [f_2 uu^T/y^2 + f_1/y (T - uu^T/y^2)] (IPC Sec. 5.2, in the tangent plane).
      Mat3 H = f1_over_y * T;
      if (y > 0.0) {
        const Vec3 s = u / y;
        H += (f2 - f1_over_y) * s * s.transpose();
      }
      *hessian += c.mu_lambda * H;
    }
  }
  return energy;
}

}  // namespace optistep

#include "particles/XpbdParticles.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace optistep {

XpbdParticles::XpbdParticles(std::vector<Vec3> x, std::vector<double> inverse_mass,
                             std::vector<Constraint> constraints, const Vec3& gravity,
                             double damping_beta)
    : x_(std::move(x)),
      v_(x_.size(), Vec3::Zero()),
      x_prev_(x_.size()),
      w_(std::move(inverse_mass)),
      constraints_(std::move(constraints)),
      lambda_(constraints_.size(), 0.0),
      gravity_(gravity),
      damping_beta_(damping_beta),
      n_owned_(x_.size()),
      n_counted_(static_cast<long long>(constraints_.size())),
      color_begin_{0, constraints_.size()} {}

void XpbdParticles::Distribute(std::size_t n_owned, std::vector<char> counted,
                               std::vector<std::size_t> color_begin, std::function<void(int)> halo) {
  n_owned_ = n_owned;
  counted_ = std::move(counted);
  n_counted_ = std::count(counted_.begin(), counted_.end(), 1);
  color_begin_ = std::move(color_begin);
  halo_ = std::move(halo);
}

void XpbdParticles::SetObstacles(std::vector<Obstacle> obstacles, double max_depenetration_speed) {
  obstacles_ = std::move(obstacles);
  max_depenetration_speed_ = max_depenetration_speed;
}

void XpbdParticles::FindContacts(double dt) {
  contacts_.clear();
  // Every local particle, ghosts too: they hold bitwise their owners' x and v, so each rank
  // projects them alike and no exchange follows the contacts.
  for (size_t p = 0; p < x_.size() && !obstacles_.empty(); ++p) {
    if (w_[p] == 0.0) continue;
    const Vec3 predicted = x_[p] + dt * v_[p] + dt * dt * gravity_;
    const double reach = (predicted - x_[p]).norm();
    for (size_t k = 0; k < obstacles_.size(); ++k) {
      Vec3 n;
      const double phi = std::min(obstacles_[k].signed_distance(x_[p], &n),
                                  obstacles_[k].signed_distance(predicted, &n));
      if (phi < reach) contacts_.emplace_back(p, k);
    }
  }
}

void XpbdParticles::Step(double dt, int substeps, int iterations) {
  const double dt_s = dt / substeps;
  FindContacts(dt);
  for (int s = 0; s < substeps; ++s) Substep(dt_s, iterations);
}

void XpbdParticles::Substep(double dt_s, int iterations) {
  dt_s_ = dt_s;
  const size_t n = x_.size();
  for (size_t p = 0; p < n; ++p) {
    x_prev_[p] = x_[p];
    if (w_[p] == 0.0) continue;
    v_[p] += dt_s * gravity_;
    x_[p] += dt_s * v_[p];
  }
  std::fill(lambda_.begin(), lambda_.end(), 0.0);
  const double gamma = damping_beta_ / dt_s;
  const double inv_dt2 = 1.0 / (dt_s * dt_s);
  for (int it = 0; it < iterations; ++it) {
    for (size_t color = 0; color + 1 < color_begin_.size(); ++color) {
      for (size_t k = color_begin_[color]; k < color_begin_[color + 1]; ++k) {
        const Constraint& c = constraints_[k];
        const double wi = w_[c.i], wj = w_[c.j];
        const Vec3 d = x_[c.i] - x_[c.j];
        const double length = d.norm();
        if (!(length > 0.0)) continue;
        const Vec3 normal = d / length;
        const double alpha_tilde = c.alpha * inv_dt2;
        const double denominator = (1.0 + gamma) * (wi + wj) + alpha_tilde;
        if (!(denominator > 0.0)) continue;
        const double motion = normal.dot((x_[c.i] - x_prev_[c.i]) - (x_[c.j] - x_prev_[c.j]));
        const double dlambda =
            (-(length - c.rest) - alpha_tilde * lambda_[k] - gamma * motion) / denominator;
        lambda_[k] += dlambda;
        x_[c.i] += wi * dlambda * normal;
        x_[c.j] -= wj * dlambda * normal;
      }
      if (halo_) halo_(static_cast<int>(color));
    }
    projections_ += n_counted_;
    const bool limited = std::isfinite(max_depenetration_speed_);
    for (const auto& [p, k] : contacts_) {
      Vec3 n;
      const double floor =
          limited ? std::min(0.0, obstacles_[k].signed_distance(x_prev_[p], &n) + max_depenetration_speed_ * dt_s)
                  : 0.0;
      const double phi = obstacles_[k].signed_distance(x_[p], &n);
      ProjectPointContact(&x_[p], x_prev_[p], phi, n, floor, obstacles_[k].friction);
    }
  }
  forces_estimated_ = true;
  const double inv_dt = 1.0 / dt_s;
  for (size_t p = 0; p < n; ++p) v_[p] = (x_[p] - x_prev_[p]) * inv_dt;
}

double XpbdParticles::MaxStrain() const {
  double worst = 0.0;
  for (size_t k = 0; k < constraints_.size(); ++k) {
    if (!counted(k)) continue;
    const Constraint& c = constraints_[k];
    worst = std::max(worst, std::abs((x_[c.i] - x_[c.j]).norm() - c.rest) / c.rest);
  }
  return worst;
}

double XpbdParticles::MotionEnergy(std::size_t p) const {
  if (w_[p] == 0.0) return 0.0;
  const double m = 1.0 / w_[p];
  return 0.5 * m * v_[p].squaredNorm() - m * gravity_.dot(x_[p]);
}

double XpbdParticles::StretchEnergy(std::size_t k) const {
  const Constraint& c = constraints_[k];
  if (!(c.alpha > 0.0)) return 0.0;
  const double C = (x_[c.i] - x_[c.j]).norm() - c.rest;
  return C * C / (2.0 * c.alpha);
}

double XpbdParticles::ElasticEnergy(std::size_t k) const {
  const Constraint& c = constraints_[k];
  if (!(c.alpha > 0.0)) return 0.0;
  if (!forces_estimated_) return StretchEnergy(k);
  const double f = lambda_[k] / (dt_s_ * dt_s_);
  return 0.5 * c.alpha * f * f;
}

double XpbdParticles::MotionEnergy() const {
  double energy = 0.0;
  for (size_t p = 0; p < n_owned_; ++p) energy += MotionEnergy(p);
  return energy;
}

double XpbdParticles::ElasticEnergy() const {
  double energy = 0.0;
  for (size_t k = 0; k < constraints_.size(); ++k)
    if (counted(k)) energy += ElasticEnergy(k);
  return energy;
}

}  // namespace optistep

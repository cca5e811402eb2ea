#include "model/CollisionObject.hpp"

#include <algorithm>
#include <cmath>

namespace optistep {
namespace {

/// Unit vector of v, or `fallback` when v is (numerically) zero.
Vec3 UnitOr(const Vec3& v, const Vec3& fallback) {
  const double n = v.norm();
  return n > 1e-300 ? Vec3(v / n) : fallback;
}

/// Signed distance (m) to the box [lo, hi] and its outward normal.
double BoxDistance(const Vec3& x, const Vec3& lo, const Vec3& hi, Vec3* normal) {
  const Vec3 center = 0.5 * (lo + hi);
  const Vec3 half = 0.5 * (hi - lo);
  const Vec3 q = (x - center).cwiseAbs() - half;
  if (q.maxCoeff() > 0.0) {  // outside: distance to the clamped point
    const Vec3 outside = q.cwiseMax(0.0);
    Vec3 dir = outside;
    for (int a = 0; a < 3; ++a) dir[a] *= (x[a] >= center[a]) ? 1.0 : -1.0;
    *normal = UnitOr(dir, Vec3::UnitY());
    return outside.norm();
  }
  int axis = 0;  // inside: the nearest face
  q.maxCoeff(&axis);
  *normal = Vec3::Zero();
  (*normal)[axis] = (x[axis] >= center[axis]) ? 1.0 : -1.0;
  return q[axis];
}

/// The point a rotation segment without a center turns about.
Vec3 OwnCenter(const CollisionObjectConfig& c) {
  using Kind = CollisionObjectConfig::Kind;
  switch (c.kind) {
    case Kind::kHalfSpace: return c.point;
    case Kind::kBox:
    case Kind::kBoxWithHole: return 0.5 * (c.box_min + c.box_max);
    default: return c.center;
  }
}

std::vector<MotionSegmentConfig> WithCenters(const CollisionObjectConfig& c) {
  std::vector<MotionSegmentConfig> segments = c.motion;
  for (auto& s : segments)
    if (s.kind == MotionSegmentConfig::Kind::kRotate && !s.has_center) {
      s.center = OwnCenter(c);
      s.has_center = true;
    }
  return segments;
}

}  // namespace

CollisionObject::CollisionObject(const CollisionObjectConfig& config)
    : c_(config), constraint_(config.method == CollisionMethod::kConstraint), motion_(WithCenters(config)) {}

void CollisionObject::Frame(double t, Mat3* R, Vec3* o) const {
  *o = motion_.Position(Vec3::Zero(), t);
  for (int k = 0; k < 3; ++k) R->col(k) = motion_.Position(Vec3::Unit(k), t) - *o;
}

void CollisionObject::SetTime(double t) {
  t_ = t;
  if (moving()) Frame(t, &R_, &o_);
}

double CollisionObject::PosedSignedDistance(const Vec3& x, const Mat3& R, const Vec3& o,
                                            Vec3* normal) const {
  Vec3 n_body;
  const double phi = RestSignedDistance(R.transpose() * (x - o), &n_body);
  *normal = R * n_body;
  return phi;
}

double CollisionObject::SignedDistance(const Vec3& x, Vec3* normal) const {
  if (!moving()) return RestSignedDistance(x, normal);
  return PosedSignedDistance(x, R_, o_, normal);
}

double CollisionObject::SignedDistanceAt(const Vec3& x, double t, Vec3* normal) const {
  if (!moving()) return RestSignedDistance(x, normal);
  Mat3 R;
  Vec3 o;
  Frame(t, &R, &o);
  return PosedSignedDistance(x, R, o, normal);
}

Vec3 CollisionObject::VelocityAt(const Vec3& x, double t) const {
  if (!moving()) return Vec3::Zero();
  // Central difference of the rigid frame: v(x) = dR/dt R^T (x - o) + do/dt.
  const double h = 1e-6;
  Mat3 R, Rp, Rm;
  Vec3 o, op, om;
  Frame(t, &R, &o);
  Frame(t + h, &Rp, &op);
  Frame(std::max(0.0, t - h), &Rm, &om);
  const double span = (t + h) - std::max(0.0, t - h);
  const Mat3 dR = (Rp - Rm) / span;
  const Vec3 dO = (op - om) / span;
  return dR * R.transpose() * (x - o) + dO;
}

double CollisionObject::RestSignedDistance(const Vec3& x, Vec3* normal) const {
  using Kind = CollisionObjectConfig::Kind;
  switch (c_.kind) {
    case Kind::kHalfSpace:
      *normal = c_.normal;
      return c_.normal.dot(x - c_.point);
    case Kind::kSphere: {
      const Vec3 r = x - c_.center;
      *normal = UnitOr(r, Vec3::UnitY());
      return r.norm() - c_.radius;
    }
    case Kind::kCylinder: {
      const Vec3 r = x - c_.center;
      const double axial = r.dot(c_.axis);
      const Vec3 radial = r - axial * c_.axis;
      const Vec3 radial_dir = UnitOr(radial, c_.axis.unitOrthogonal());
      const double d_side = radial.norm() - c_.radius;
      const double d_cap = std::abs(axial) - c_.half_length;  // -inf for an infinite one
      if (d_side > 0.0 && d_cap > 0.0) {  // beyond the rim: distance to the circle
        const Vec3 q = d_side * radial_dir + d_cap * (axial >= 0 ? 1.0 : -1.0) * c_.axis;
        *normal = q.normalized();
        return q.norm();
      }
      if (d_side >= d_cap) {
        *normal = radial_dir;
        return d_side;
      }
      *normal = (axial >= 0 ? 1.0 : -1.0) * c_.axis;
      return d_cap;
    }
    case Kind::kTorus: {
      const Vec3 r = x - c_.center;
      const Vec3 radial = r - r.dot(c_.axis) * c_.axis;
      const Vec3 ring = c_.major_radius * UnitOr(radial, c_.axis.unitOrthogonal());
      const Vec3 q = r - ring;
      *normal = UnitOr(q, c_.axis);
      return q.norm() - c_.minor_radius;
    }
    case Kind::kBox:
      return BoxDistance(x, c_.box_min, c_.box_max, normal);
    case Kind::kBowl: {
      // A hemispherical shell inner_radius <= |x - center| <= outer_radius on the side
      // z = (x - center) . axis <= 0, open toward +axis; the bodies live in its cavity.
      const Vec3 r = x - c_.center;
      const double z = r.dot(c_.axis);
      if (z > 0.0) {  // above the cut: the nearest point is on the flat rim annulus
        const Vec3 radial = r - z * c_.axis;
        const double rho = radial.norm();
        const double d_rho = rho < c_.inner_radius   ? rho - c_.inner_radius
                             : rho > c_.outer_radius ? rho - c_.outer_radius
                                                     : 0.0;
        const Vec3 q = d_rho * UnitOr(radial, c_.axis.unitOrthogonal()) + z * c_.axis;
        *normal = q.normalized();
        return q.norm();
      }
      const double mid = 0.5 * (c_.inner_radius + c_.outer_radius);
      const double d_shell = std::abs(r.norm() - mid) - 0.5 * (c_.outer_radius - c_.inner_radius);
      if (d_shell >= z) {
        *normal = (r.norm() >= mid ? 1.0 : -1.0) * UnitOr(r, -c_.axis);
        return d_shell;
      }
      *normal = c_.axis;  // inside the wall, nearest to the rim's plane
      return z;
    }
    case Kind::kBoxWithHole: {
      // The box minus the infinite cylinder of radius hole_radius about the line through
      // center along axis: max(phi_box, r - |radial|), exact wherever phi <= 0.
      const double d_box = BoxDistance(x, c_.box_min, c_.box_max, normal);
      const Vec3 r = x - c_.center;
      const Vec3 radial = r - r.dot(c_.axis) * c_.axis;
      const double d_hole = c_.hole_radius - radial.norm();
      if (d_hole <= d_box) return d_box;
      *normal = -UnitOr(radial, c_.axis.unitOrthogonal());
      return d_hole;
    }
  }
  return 0.0;
}

double CollisionObject::Penalty(const Vec3& x, double mass, Vec3* gradient, Mat3* hessian) const {
  if (constraint_) return 0.0;
  Vec3 n;
  const double phi = SignedDistance(x, &n);
  if (phi >= 0.0) return 0.0;
  const double km = c_.stiffness * mass;
  if (gradient) *gradient += -3.0 * km * phi * phi * n;
  if (hessian) *hessian += 6.0 * km * (-phi) * n * n.transpose();
  return km * (-phi) * (-phi) * (-phi);
}

double CollisionObject::NormalForce(const Vec3& x, double mass, Vec3* normal) const {
  if (constraint_) {
    *normal = Vec3::Zero();
    return 0.0;
  }
  const double phi = SignedDistance(x, normal);
  return phi < 0.0 ? 3.0 * c_.stiffness * mass * phi * phi : 0.0;
}

Mat3 CollisionObject::DistanceHessian(const Vec3& x) const {
  if (!moving()) return RestDistanceHessian(x);
  // phi(x) = phi_0(R^T (x - o)): Hess phi = R Hess phi_0 R^T, the pose of the last SetTime.
  return R_ * RestDistanceHessian(R_.transpose() * (x - o_)) * R_.transpose();
}

Mat3 CollisionObject::RestDistanceHessian(const Vec3& x) const {
  using Kind = CollisionObjectConfig::Kind;
  Vec3 n;
  const double phi = RestSignedDistance(x, &n);
  const Mat3 tangent = Mat3::Identity() - n * n.transpose();
  // The circle of radius R about `axis` through `center`, seen from x at distance d = |q|:
  // d(q/d)/dx = (I - n n^T)/d (I - R/rho w w^T), and n is orthogonal to w.
  const auto circle = [&](const Vec3& center, const Vec3& axis, double R, double d) {
    const Vec3 r = x - center;
    const Vec3 radial = r - r.dot(axis) * axis;
    const double rho = std::max(radial.norm(), 1e-300);
    const Vec3 w = axis.cross(radial / rho);
    return Mat3(tangent / d - (R / (rho * d)) * w * w.transpose());
  };
  switch (c_.kind) {
    case Kind::kHalfSpace:
      return Mat3::Zero();
    case Kind::kSphere:
      return tangent / std::max((x - c_.center).norm(), 1e-300);
    case Kind::kCylinder: {
      const Vec3 r = x - c_.center;
      const double axial = r.dot(c_.axis);
      const Vec3 radial = r - axial * c_.axis;
      const double d_side = radial.norm() - c_.radius;
      const double d_cap = std::abs(axial) - c_.half_length;
      if (d_side > 0.0 && d_cap > 0.0)  // the rim
        return circle(c_.center + (axial >= 0 ? c_.half_length : -c_.half_length) * c_.axis, c_.axis,
                      c_.radius, std::max(phi, 1e-300));
      if (d_side >= d_cap)
        return (tangent - c_.axis * c_.axis.transpose()) / std::max(radial.norm(), 1e-300);
      return Mat3::Zero();
    }
    case Kind::kTorus:
      return circle(c_.center, c_.axis, c_.major_radius, std::max(phi + c_.minor_radius, 1e-300));
    case Kind::kBox:
      return BoxHessian(x, phi, n);
    case Kind::kBowl: {
      const Vec3 r = x - c_.center;
      const double z = r.dot(c_.axis);
      if (z > 0.0) {  // above the cut: the rim annulus, flat over it, a circle inside or outside it
        const double rho = (r - z * c_.axis).norm();
        if (rho >= c_.inner_radius && rho <= c_.outer_radius) return Mat3::Zero();
        return circle(c_.center, c_.axis, rho < c_.inner_radius ? c_.inner_radius : c_.outer_radius,
                      std::max(phi, 1e-300));
      }
      const double mid = 0.5 * (c_.inner_radius + c_.outer_radius);
      const double d_shell = std::abs(r.norm() - mid) - 0.5 * (c_.outer_radius - c_.inner_radius);
      if (d_shell < z) return Mat3::Zero();  // inside the wall, nearest to the rim's plane
      // The shell: phi = +-(|r| - mid) - half thickness, Hess = +-(I - n n^T) / |r|.
      return (r.norm() >= mid ? 1.0 : -1.0) * tangent / std::max(r.norm(), 1e-300);
    }
    case Kind::kBoxWithHole: {
      Vec3 n_box;
      const double d_box = BoxDistance(x, c_.box_min, c_.box_max, &n_box);
      if (phi == d_box) return BoxHessian(x, d_box, n_box);
      // The hole's wall: phi = R - |radial|, Hess = -(I - a a^T - u u^T) / |radial|.
      const Vec3 r = x - c_.center;
      const Vec3 radial = r - r.dot(c_.axis) * c_.axis;
      return -(tangent - c_.axis * c_.axis.transpose()) / std::max(radial.norm(), 1e-300);
    }
  }
  return Mat3::Zero();
}

Mat3 CollisionObject::BoxHessian(const Vec3& x, double phi, const Vec3& n) const {
  if (!(phi > 0.0)) return Mat3::Zero();  // inside: the nearest face, flat
  const Vec3 center = 0.5 * (c_.box_min + c_.box_max);
  const Vec3 q = (x - center).cwiseAbs() - 0.5 * (c_.box_max - c_.box_min);
  Mat3 beyond = Mat3::Zero();
  for (int a = 0; a < 3; ++a) beyond(a, a) = q[a] > 0.0 ? 1.0 : 0.0;
  return (beyond - n * n.transpose()) / phi;
}

double CollisionObject::DampingCoefficient(const Vec3& x, double mass, Vec3* normal) const {
  if (!(c_.damping > 0.0)) return 0.0;
  const double phi = SignedDistance(x, normal);
  return phi < 0.0 ? 2.0 * c_.damping * mass * std::sqrt(6.0 * c_.stiffness * (-phi)) : 0.0;
}

}  // namespace optistep

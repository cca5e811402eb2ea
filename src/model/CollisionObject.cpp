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

}  // namespace

double CollisionObject::SignedDistance(const Vec3& x, Vec3* normal) const {
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
    case Kind::kBox: {
      const Vec3 center = 0.5 * (c_.box_min + c_.box_max);
      const Vec3 half = 0.5 * (c_.box_max - c_.box_min);
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
  }
  return 0.0;
}

double CollisionObject::Penalty(const Vec3& x, double mass, Vec3* gradient, Mat3* hessian) const {
  Vec3 n;
  const double phi = SignedDistance(x, &n);
  if (phi >= 0.0) return 0.0;
  const double km = c_.stiffness * mass;
  if (gradient) *gradient += -3.0 * km * phi * phi * n;
  if (hessian) *hessian += 6.0 * km * (-phi) * n * n.transpose();
  return km * (-phi) * (-phi) * (-phi);
}

double CollisionObject::NormalForce(const Vec3& x, double mass, Vec3* normal) const {
  const double phi = SignedDistance(x, normal);
  return phi < 0.0 ? 3.0 * c_.stiffness * mass * phi * phi : 0.0;
}

double CollisionObject::DampingCoefficient(const Vec3& x, double mass, Vec3* normal) const {
  if (!(c_.damping > 0.0)) return 0.0;
  const double phi = SignedDistance(x, normal);
  return phi < 0.0 ? 2.0 * c_.damping * mass * std::sqrt(6.0 * c_.stiffness * (-phi)) : 0.0;
}

}  // namespace optistep

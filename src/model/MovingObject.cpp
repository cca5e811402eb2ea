#include "model/MovingObject.hpp"

#include <algorithm>

namespace optistep {
namespace {

Vec3 OwnCenter(const CollisionObjectConfig& c) {
  using Kind = CollisionObjectConfig::Kind;
  switch (c.kind) {
    case Kind::kHalfSpace: return c.point;
    case Kind::kBox: return 0.5 * (c.box_min + c.box_max);
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

MovingObject::MovingObject(const CollisionObjectConfig& config)
    : config_(config), shape_(config), motion_(WithCenters(config)) {}

void MovingObject::Frame(double t, Mat3* R, Vec3* o) const {
  *o = motion_.Position(Vec3::Zero(), t);
  for (int k = 0; k < 3; ++k) R->col(k) = motion_.Position(Vec3::Unit(k), t) - *o;
}

double MovingObject::SignedDistance(const Vec3& x, double t, Vec3* normal) const {
  if (!moving()) return shape_.SignedDistance(x, normal);
  Mat3 R;
  Vec3 o;
  Frame(t, &R, &o);
  Vec3 n_body;
  const double phi = shape_.SignedDistance(R.transpose() * (x - o), &n_body);
  *normal = R * n_body;
  return phi;
}

Vec3 MovingObject::Velocity(const Vec3& x, double t) const {
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

}  // namespace optistep

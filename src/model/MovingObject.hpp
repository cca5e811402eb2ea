#pragma once
// A collision object that moves rigidly along its scripted motion (translation and
// rotation segments with time windows), for MPM grid boundary conditions.
#include "model/CollisionObject.hpp"
#include "model/ScriptedMotion.hpp"

namespace optistep {

class MovingObject {
 public:
  /// A rotation segment without a center turns about the object's own center (the
  /// sphere's, cylinder's or torus' center, the box's middle, the half-space's point).
  explicit MovingObject(const CollisionObjectConfig& config);
  /// Signed distance (m) at x and time t (s), with the outward normal.
  double SignedDistance(const Vec3& x, double t, Vec3* normal) const;
  /// Velocity (m/s) of the object's material point at x, time t.
  Vec3 Velocity(const Vec3& x, double t) const;
  bool moving() const { return !motion_.segments().empty(); }
  bool sticky() const { return config_.boundary == "sticky"; }
  double friction() const { return config_.friction; }

 private:
  /// The rigid map of the object frame at time t: x = R X + o.
  void Frame(double t, Mat3* R, Vec3* o) const;

  CollisionObjectConfig config_;
  CollisionObject shape_;
  ScriptedMotion motion_;
};

}  // namespace optistep

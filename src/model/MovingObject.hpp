#pragma once
// A collision object that moves rigidly along its scripted motion (translation and
// rotation segments with time windows), for MPM grid boundary conditions.
#include "model/CollisionObject.hpp"

namespace optistep {

class MovingObject {
 public:
  /// A rotation segment without a center turns about the object's own center
  /// (CollisionObject's constructor).
  explicit MovingObject(const CollisionObjectConfig& config);
  /// Signed distance (m) at x and time t (s), with the outward normal.
  double SignedDistance(const Vec3& x, double t, Vec3* normal) const;
  /// Velocity (m/s) of the object's material point at x, time t.
  Vec3 Velocity(const Vec3& x, double t) const;
  bool moving() const { return shape_.moving(); }
  bool sticky() const { return config_.boundary == "sticky"; }
  double friction() const { return config_.friction; }

 private:
  CollisionObjectConfig config_;
  CollisionObject shape_;
};

}  // namespace optistep

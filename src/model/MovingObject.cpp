#include "model/MovingObject.hpp"

namespace optistep {

MovingObject::MovingObject(const CollisionObjectConfig& config) : config_(config), shape_(config) {}

double MovingObject::SignedDistance(const Vec3& x, double t, Vec3* normal) const {
  return shape_.SignedDistanceAt(x, t, normal);
}

Vec3 MovingObject::Velocity(const Vec3& x, double t) const { return shape_.VelocityAt(x, t); }

}  // namespace optistep

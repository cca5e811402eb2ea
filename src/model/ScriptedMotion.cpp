#include "model/ScriptedMotion.hpp"

#include <Eigen/Geometry>
#include <algorithm>

namespace optistep {

Vec3 ScriptedMotion::Position(const Vec3& x0, double t) const {
  Vec3 x = x0;
  for (const auto& s : segments_) {
    const double tau = std::min(t, s.end) - s.start;
    if (tau <= 0.0) continue;
    if (s.kind == MotionSegmentConfig::Kind::kTranslate) {
      x += s.velocity * tau;
    } else {
      const Eigen::AngleAxisd rotation(s.angular_velocity * tau, s.axis);
      x = s.center + rotation * (x - s.center);
    }
  }
  return x;
}

}  // namespace optistep

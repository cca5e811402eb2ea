#pragma once
// A dimensionless function of time tau(t) that scales a load or gravity: constant, linear
// ramp, or a table of (t, tau) points interpolated linearly (io/SceneSections.hpp,
// TimeFunctionConfig, documents the scene keys). Rank-local, no state.
#include "io/SceneSections.hpp"

namespace optistep {

class TimeFunction {
 public:
  explicit TimeFunction(TimeFunctionConfig config = {}) : config_(std::move(config)) {}
  /// tau(t), t in s: constant value; ramp from `from` (t <= start) to `to` (t >= end),
  /// linear between; table: linear between neighbouring points, the end values beyond.
  double operator()(double t) const;
  /// max over all t of |tau(t)|: |value|, max(|from|, |to|), or the table's largest |tau|.
  double Peak() const;
  /// Whether tau is 1 at all times (the default of a load and of gravity).
  bool IsUnit() const;
  const TimeFunctionConfig& config() const { return config_; }

 private:
  TimeFunctionConfig config_;
};

/// The acceleration (m/s^2) every body feels at time t (s): gravity times its
/// gravity_time_function plus the body_force loads on all bodies, each times its time
/// function; exactly scene.gravity when the scene has neither. MPM's grid acceleration.
Vec3 UniformAcceleration(const ModelConfig& scene, double t);

}  // namespace optistep

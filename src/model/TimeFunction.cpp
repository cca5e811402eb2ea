#include "model/TimeFunction.hpp"

#include <algorithm>
#include <cmath>

#include <algorithm>

namespace optistep {

double TimeFunction::operator()(double t) const {
  using Kind = TimeFunctionConfig::Kind;
  const TimeFunctionConfig& c = config_;
  switch (c.kind) {
    case Kind::kConstant:
      return c.value;
    case Kind::kRamp:
      if (t <= c.start) return c.from;
      if (t >= c.end) return c.to;
      return c.from + (c.to - c.from) * (t - c.start) / (c.end - c.start);
    case Kind::kTable: {
      const auto& p = c.points;
      if (t <= p.front().first) return p.front().second;
      if (t >= p.back().first) return p.back().second;
      // First point with time > t; p[k - 1].first <= t < p[k].first.
      const auto after = std::upper_bound(p.begin(), p.end(), t,
                                          [](double s, const auto& q) { return s < q.first; });
      const auto& [t1, v1] = *after;
      const auto& [t0, v0] = *(after - 1);
      return v0 + (v1 - v0) * (t - t0) / (t1 - t0);
    }
  }
  return 1.0;
}

double TimeFunction::Peak() const {
  using Kind = TimeFunctionConfig::Kind;
  switch (config_.kind) {
    case Kind::kConstant:
      return std::abs(config_.value);
    case Kind::kRamp:
      return std::max(std::abs(config_.from), std::abs(config_.to));
    case Kind::kTable: {
      double peak = 0.0;
      for (const auto& point : config_.points) peak = std::max(peak, std::abs(point.second));
      return peak;
    }
  }
  return 0.0;
}

bool TimeFunction::IsUnit() const {
  return config_.kind == TimeFunctionConfig::Kind::kConstant && config_.value == 1.0;
}

Vec3 UniformAcceleration(const ModelConfig& scene, double t) {
  const TimeFunction gravity_tau(scene.gravity_time_function);
  Vec3 a = gravity_tau.IsUnit() ? scene.gravity : gravity_tau(t) * scene.gravity;
  for (const LoadConfig& load : scene.loads)
    if (load.kind == LoadConfig::Kind::kBodyForce && load.body.empty())
      a += TimeFunction(load.time_function)(t) * load.acceleration;
  return a;
}

}  // namespace optistep

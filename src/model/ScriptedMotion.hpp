#pragma once
// Scripted motion of Dirichlet nodes: a sequence of translation and rotation segments,
// each active in a time window. Used for DOT's twist and stretch tests and Gast's
// stretched cube (Gast et al. 2015 Fig. 2).
#include <vector>

#include "core/Types.hpp"
#include "io/SceneSections.hpp"

namespace optistep {

class ScriptedMotion {
 public:
  /// segments as read from the scene; each rotation segment must have its center set.
  explicit ScriptedMotion(std::vector<MotionSegmentConfig> segments)
      : segments_(std::move(segments)) {}
  /// Position (m) at time t (s) of a node that was at x0 at t = 0: the segments applied in
  /// order, each for the part of [0, t] that overlaps its window [start, end).
  Vec3 Position(const Vec3& x0, double t) const;
  const std::vector<MotionSegmentConfig>& segments() const { return segments_; }

 private:
  std::vector<MotionSegmentConfig> segments_;
};

}  // namespace optistep

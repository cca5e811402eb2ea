#pragma once
// Squared distance from a point to the closest primitive of a surface triangle (its
// interior, one of its edges, or one of its vertices), with its gradient and Hessian in
// the 12 coordinates (p, a, b, c), for the penalty self-collision energy of Gast et al.
// 2015, Sec. 5.3: Phi = k d sqrt(d + epsilon), d the squared distance.
#include <array>

#include "core/Types.hpp"

namespace optistep {

/// Which feature of triangle (a, b, c) is closest to p. The nodes are listed in `nodes`
/// (indices 0..2 into (a, b, c)), count of them 3 (face), 2 (edge) or 1 (vertex).
struct ClosestFeature {
  int count = 3;
  std::array<int, 3> nodes = {0, 1, 2};
};

/// Rank-local. The feature of triangle (a, b, c) closest to p (Voronoi regions of the
/// triangle, as in Ericson, Real-Time Collision Detection, Sec. 5.1.5) and the squared
/// distance (m^2) to it.
ClosestFeature ClosestTriangleFeature(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                                      double* squared_distance);

/// Rank-local. d (m^2): the squared distance from p to the feature f of triangle
/// (a, b, c) — to the plane of (a, b, c), the line through an edge, or a vertex — and,
/// when non-null, its gradient (12, m) and Hessian (12 x 12, dimensionless) with respect
/// to (p, a, b, c) stacked, 3 components each; entries of nodes not in f are zero.
/// Inside f's Voronoi region this equals the distance to the triangle.
double FeatureSquaredDistance(const ClosestFeature& f, const Vec3& p, const Vec3& a, const Vec3& b,
                              const Vec3& c, Vec12* gradient, Mat12* hessian);

/// Rank-local. The penalty Phi(d) = k d sqrt(d + epsilon) of Gast et al. 2015, Sec. 5.3
/// (epsilon = 1e-15 m^2 there), with Phi'(d) and Phi''(d) when non-null. k in J/m^3.
double SelfContactPenalty(double k, double d, double* first, double* second);

/// The epsilon of Gast et al. 2015, Sec. 5.3 (m^2): keeps Phi twice differentiable at d = 0.
constexpr double kSelfContactEpsilon = 1e-15;

}  // namespace optistep

#pragma once
// Quadratic B-spline interpolation between MPM particles and grid nodes. The
// tensor-product weights w_ip = N(x_p/dx - i) N(y_p/dx - j) N(z_p/dx - k) and gradients are
// those of Stomakhin, Schroeder, Chai, Teran, Selle 2013, "A material point method for snow
// simulation", Sec. 4 (which uses the cubic N); the quadratic N is the one of Jiang,
// Schroeder, Selle, Teran, Stomakhin 2015, "The affine particle-in-cell method", Sec. 5,
// for which D_p = dx^2/4 I.
//
// Grid node (i, j, k) sits at x_i = (i, j, k) dx. A particle at x_p interacts with the
// 3 x 3 x 3 nodes base + (a, b, c), (a, b, c) in {0, 1, 2}^3, base = floor(x_p/dx - 1/2).
// Every per-particle node list of optistep::mpm uses the order n = a + 3 b + 9 c
// (x fastest), the order of ForEachStencilNode.
#include <cmath>

#include "core/Types.hpp"

namespace optistep::mpm {

/// Nodes per particle stencil (3 per axis).
inline constexpr int kStencilNodes = 27;

/// The quadratic B-spline weights of one particle, per axis. With f = x_p,d / dx - base_d
/// in [1/2, 3/2), the 1-D kernel N(r) = 3/4 - r^2 (|r| < 1/2), (3/2 - |r|)^2 / 2
/// (1/2 <= |r| < 3/2), 0 otherwise, evaluated at r = f - a gives
///   w[d] = ((3/2 - f)^2 / 2, 3/4 - (f - 1)^2, (f - 1/2)^2 / 2),
///   dw[d] = (f - 3/2, 2 (1 - f), f - 1/2) / dx.
struct Stencil {
  Eigen::Vector3i base;  ///< node index of offset (0, 0, 0)
  double w[3][3];        ///< w[d][a]: 1-D weight of offset a along axis d (-)
  double dw[3][3];       ///< dw[d][a]: d w[d][a] / d x_p,d (1/m)

  /// Grid index (i, j, k) of the node at offset (a, b, c).
  Eigen::Vector3i Node(int a, int b, int c) const { return base + Eigen::Vector3i(a, b, c); }
  /// w_ip (-) of the node at offset (a, b, c).
  double w_ip(int a, int b, int c) const { return w[0][a] * w[1][b] * w[2][c]; }
  /// grad w_ip = grad N_i(x_p) (1/m) of the node at offset (a, b, c).
  Vec3 grad_w_ip(int a, int b, int c) const {
    return Vec3(dw[0][a] * w[1][b] * w[2][c], w[0][a] * dw[1][b] * w[2][c],
                w[0][a] * w[1][b] * dw[2][c]);
  }
};

/// The stencil of a particle at x_p (m) on a grid of spacing dx (m, > 0, checked by the
/// caller: LocalGrid's constructor). Rank-local, no allocation.
inline Stencil MakeStencil(const Vec3& x_p, double dx) {
  Stencil s;
  const double inv_dx = 1.0 / dx;
  for (int d = 0; d < 3; ++d) {
    const double X = x_p(d) * inv_dx;
    s.base(d) = static_cast<int>(std::floor(X - 0.5));
    const double f = X - s.base(d);
    s.w[d][0] = 0.5 * (1.5 - f) * (1.5 - f);
    s.w[d][1] = 0.75 - (f - 1.0) * (f - 1.0);
    s.w[d][2] = 0.5 * (f - 0.5) * (f - 0.5);
    s.dw[d][0] = (f - 1.5) * inv_dx;
    s.dw[d][1] = 2.0 * (1.0 - f) * inv_dx;
    s.dw[d][2] = (f - 0.5) * inv_dx;
  }
  return s;
}

/// Calls visit(n, a, b, c) for the 27 stencil offsets, n = a + 3 b + 9 c.
template <class Visit>
inline void ForEachStencilNode(Visit&& visit) {
  int n = 0;
  for (int c = 0; c < 3; ++c)
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) visit(n++, a, b, c);
}

/// Position x_i = (i, j, k) dx (m) of grid node (i, j, k).
inline Vec3 NodePosition(const Eigen::Vector3i& node, double dx) {
  return node.cast<double>() * dx;
}

/// D_p^{-1} (1/m^2) of APIC for quadratic B-splines, where the inertia-like tensor
/// D_p = sum_i w_ip (x_i - x_p)(x_i - x_p)^T = dx^2/4 I is the same for every particle
/// (Jiang et al. 2015, Sec. 5), so C_p = B_p D_p^{-1} = 4/dx^2 B_p.
inline double ApicInverseInertia(double dx) { return 4.0 / (dx * dx); }

}  // namespace optistep::mpm

#pragma once
// Particle-grid transfers of implicit MPM and the particle side of its incremental
// potential, rank-local:
//  - APIC P2G and G2P (Jiang, Schroeder, Selle, Teran, Stomakhin 2015, "The affine
//    particle-in-cell method", Sec. 5), with an optional FLIP blend for v_p;
//  - the deformation gradient as a function of the grid velocities,
//      F_p(v) = (I + dt sum_i v_i grad_w_ip^T) F_p^n            (HOT, Wang et al. 2020, eq. 1;
//                                                               Gast et al. 2015, Sec. 6),
//    through which mpm/MpmIncrementalPotential's elastic energy depends on v.
// The solver's unknown is dv = v - v^n; these functions take v = v^n + dv, which the
// caller forms (a node loop). Node arrays are 3 doubles per local node of the LocalGrid
// (block size 3, the layout of a PETSc local vector).
//
// Every kernel is one loop, over particles or over nodes, in a fixed order: the same
// particles in the same order give bitwise the same result.
#include <array>
#include <vector>

#include "core/Types.hpp"
#include "mpm/BSpline.hpp"
#include "mpm/LocalGrid.hpp"
#include "mpm/Particles.hpp"

namespace optistep::mpm {

/// The stencils of all particles and the local indices of their 27 nodes (order
/// n = a + 3 b + 9 c, BSpline.hpp), built once per step after the grid is finalized and
/// used by P2G, the incremental potential's evaluations and G2P. w_ip and grad_w_ip are
/// recomputed from the 1-D factors (6 multiplications) rather than stored: 270 instead
/// of 970 bytes per particle, and the solver's repeated energy evaluations are bound by
/// memory traffic.
struct StencilCache {
  std::vector<Stencil> stencil;                      ///< per particle
  std::vector<std::array<int, kStencilNodes>> node;  ///< per particle, local node indices

  /// For the particles at x (m). grid must be finalized with every particle's stencil
  /// touched (std::logic_error otherwise). Particle loop.
  void Build(const std::vector<Vec3>& x, const LocalGrid& grid);
  std::size_t size() const { return stencil.size(); }
};

/// APIC P2G (Jiang et al. 2015, Sec. 5): sets, for every node,
///   m_i = sum_p w_ip m_p,   m_i v_i = sum_p w_ip m_p (v_p + C_p (x_i - x_p))
/// into grid->m (kg) and grid->mv (kg m/s). Particle loop.
void P2G(const Particles& particles, const StencilCache& cache, LocalGrid* grid);

/// v_i = (m_i v_i) / m_i into grid->v (m/s); 0 on nodes without mass. Node loop.
void GridVelocities(LocalGrid* grid);

/// G2P (Jiang et al. 2015, Sec. 5) from the new grid velocities v_new (m/s, 3 per node):
///   v_p^APIC = sum_i w_ip v_new_i,   C_p = 4/dx^2 sum_i w_ip v_new_i (x_i - x_p)^T,
///   v_p = (1 - flip_fraction) v_p^APIC + flip_fraction (v_p + sum_i w_ip (v_new_i - v_i)),
/// with v_i = grid.v the velocities of P2G. flip_fraction = 0 is pure APIC (the
/// default to give it). Throws InputError unless 0 <= flip_fraction <= 1. Particle loop.
void G2P(const StencilCache& cache, const LocalGrid& grid, const double* v_new,
         double flip_fraction, Particles* particles);

/// sum_i v_i grad_w_ip^T (1/s) of particle p, v (m/s) 3 per node.
inline Mat3 VelocityGradient(const StencilCache& cache, std::size_t p, const double* v) {
  const Stencil& s = cache.stencil[p];
  const std::array<int, kStencilNodes>& nodes = cache.node[p];
  Mat3 grad_v = Mat3::Zero();
  ForEachStencilNode([&](int n, int a, int b, int c) {
    grad_v.noalias() += Eigen::Map<const Vec3>(v + 3 * nodes[n]) * s.grad_w_ip(a, b, c).transpose();
  });
  return grad_v;
}

/// F_p = (I + dt sum_i v_i grad_w_ip^T) F_n (HOT eq. 1), dt (s), v (m/s) 3 per node.
inline Mat3 DeformationGradientUpdate(const Mat3& F_n, double dt, const StencilCache& cache,
                                      std::size_t p, const double* v) {
  return (Mat3::Identity() + dt * VelocityGradient(cache, p, v)) * F_n;
}

/// particles->F[p] = DeformationGradientUpdate(F[p], dt, cache, p, v) for every particle:
/// the trial elastic F after the solve, before the return mapping. Particle loop.
void UpdateDeformationGradients(const StencilCache& cache, double dt, const double* v,
                                Particles* particles);

}  // namespace optistep::mpm

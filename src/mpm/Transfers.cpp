#include "mpm/Transfers.hpp"

#include <algorithm>
#include <string>

#include "core/Error.hpp"

namespace optistep::mpm {

namespace {

Eigen::Map<Vec3> NodeVec(std::vector<double>& a, int i) { return Eigen::Map<Vec3>(&a[3 * i]); }
Eigen::Map<const Vec3> NodeVec(const double* a, int i) { return Eigen::Map<const Vec3>(a + 3 * i); }

}  // namespace

void StencilCache::Build(const std::vector<Vec3>& x, const LocalGrid& grid) {
  stencil.resize(x.size());
  node.resize(x.size());
  for (std::size_t p = 0; p < x.size(); ++p) {
    stencil[p] = MakeStencil(x[p], grid.dx());
    grid.StencilNodes(stencil[p], &node[p]);
  }
}

void P2G(const Particles& particles, const StencilCache& cache, LocalGrid* grid) {
  std::fill(grid->m.begin(), grid->m.end(), 0.0);
  std::fill(grid->mv.begin(), grid->mv.end(), 0.0);
  const double dx = grid->dx();
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const Stencil& s = cache.stencil[p];
    const double m_p = particles.mass[p];
    const Vec3& x_p = particles.x[p];
    const Vec3 mv_p = m_p * particles.v[p];
    const Mat3 mC_p = m_p * particles.C[p];
    ForEachStencilNode([&](int n, int a, int b, int c) {
      const int i = cache.node[p][n];
      const double w_ip = s.w_ip(a, b, c);
      const Vec3 x_i = NodePosition(s.Node(a, b, c), dx);
      grid->m[i] += w_ip * m_p;
      NodeVec(grid->mv, i) += w_ip * (mv_p + mC_p * (x_i - x_p));
    });
  }
}

void GridVelocities(LocalGrid* grid) {
  for (int i = 0; i < grid->NodeCount(); ++i) {
    const double m_i = grid->m[i];
    NodeVec(grid->v, i) = m_i > 0.0 ? Vec3(NodeVec(grid->mv, i) / m_i) : Vec3::Zero();
  }
}

void G2P(const StencilCache& cache, const LocalGrid& grid, const double* v_new,
         double flip_fraction, Particles* particles) {
  if (!(flip_fraction >= 0.0 && flip_fraction <= 1.0))
    throw InputError("MPM transfer: flip_fraction = " + std::to_string(flip_fraction) +
                     ", expected a value in [0, 1] (0 = APIC)");
  const double dx = grid.dx();
  const double D_inv = ApicInverseInertia(dx);
  const bool flip = flip_fraction > 0.0;
  for (std::size_t p = 0; p < particles->size(); ++p) {
    const Stencil& s = cache.stencil[p];
    const Vec3& x_p = particles->x[p];
    Vec3 v_apic = Vec3::Zero();
    Vec3 dv_p = Vec3::Zero();
    Mat3 B_p = Mat3::Zero();
    ForEachStencilNode([&](int n, int a, int b, int c) {
      const int i = cache.node[p][n];
      const double w_ip = s.w_ip(a, b, c);
      const Vec3 wv = w_ip * NodeVec(v_new, i);
      v_apic += wv;
      B_p.noalias() += wv * (NodePosition(s.Node(a, b, c), dx) - x_p).transpose();
      if (flip) dv_p += wv - w_ip * NodeVec(grid.v.data(), i);
    });
    Vec3& v_p = particles->v[p];
    v_p = flip ? Vec3((1.0 - flip_fraction) * v_apic + flip_fraction * (v_p + dv_p)) : v_apic;
    particles->C[p] = D_inv * B_p;
  }
}

void UpdateDeformationGradients(const StencilCache& cache, double dt, const double* v,
                                Particles* particles) {
  for (std::size_t p = 0; p < particles->size(); ++p)
    particles->F[p] = DeformationGradientUpdate(particles->F[p], dt, cache, p, v);
}

}  // namespace optistep::mpm

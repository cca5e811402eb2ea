// mpm_transfer_bench: throughput of the MPM particle-grid transfers, in particles per second
// on one core.
//
//   mpm_transfer_bench [--dx M] [--ppc N] [--box LX LY LZ] [--reps N]
//
// Samples a box of LX x LY x LZ m (default 0.12 x 0.9 x 0.12, the bar of HOT Fig. 20) with
// ppc particles per cell (default 8) on a grid of spacing dx (default 0.0075 m) through
// the library's sampler (mpm::Sample), in the sampler's cell order, which is the order a
// run starts from; gives every particle a deterministic velocity and affine velocity C_p
// (a rotation plus a per-particle perturbation, so no term is trivially zero); builds the
// sparse grid the way MpmDomain does (Touch every stencil, Finalize); and times, each
// over all particles, exactly the library kernels of one MPM step (mpm/Transfers.hpp):
//   stencil    StencilCache::Build: w_ip, grad_w_ip factors and the 27 local node indices
//   P2G        mpm::P2G, APIC (Jiang et al. 2015, Sec. 5): m_i and m_i v_i
//   G2P        mpm::G2P, APIC (flip fraction 0): v_p and C_p from new grid velocities
// Each is run N times (default 5); the best and the median repetition are reported.
// No MPI and no PETSc: this is the rank-local particle loop only, the part of a step's
// transfer time that scales with the particle count (the optistep run spends it outside
// the Os* -log_view events).
// Prints a table, then lines "p2g_particles_per_s <best>" and "g2p_particles_per_s <best>"
// for scripts.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "BenchUtil.hpp"
#include "core/Error.hpp"
#include "mpm/LocalGrid.hpp"
#include "mpm/Particles.hpp"
#include "mpm/Sampling.hpp"
#include "mpm/Shapes.hpp"
#include "mpm/Transfers.hpp"

namespace {

using namespace optistep;

/// A deterministic value in [-1, 1) from a particle index and a component.
double Hash(std::uint64_t id, int component) {
  return bench::SplitMixUnit(id * 16 + static_cast<std::uint64_t>(component));
}

using bench::Timing;
using bench::TimeRepetitions;

int Usage() {
  std::fprintf(stderr,
               "usage: mpm_transfer_bench [--dx M] [--ppc N] [--box LX LY LZ] [--reps N]\n");
  return 1;
}

int Run(int argc, char** argv) {
  double dx = 0.0075;
  int ppc = 8;
  int reps = 5;
  Vec3 size(0.12, 0.9, 0.12);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dx" && i + 1 < argc) {
      dx = std::atof(argv[++i]);
    } else if (a == "--ppc" && i + 1 < argc) {
      ppc = std::atoi(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--box" && i + 3 < argc) {
      for (int d = 0; d < 3; ++d) size[d] = std::atof(argv[++i]);
    } else {
      return Usage();
    }
  }
  if (reps < 1 || !(size.minCoeff() > 0.0)) return Usage();

  // Sampling and the grid check dx and ppc and throw InputError with the value.
  const mpm::Box box(Vec3::Zero(), size, "mpm_transfer_bench box");
  const mpm::SampledParticles sampled = mpm::Sample(box, dx, ppc, /*seed=*/1);
  const double V0 = mpm::ParticleVolume(dx, ppc);
  const double density = 2000.0;  // kg/m^3, HOT Fig. 20
  const Mat3 spin = (Mat3() << 0, -2, 1, 2, 0, -3, -1, 3, 0).finished();  // 1/s
  mpm::Particles particles;
  particles.Resize(sampled.x.size());
  for (std::size_t p = 0; p < particles.size(); ++p) {
    particles.id[p] = sampled.id[p];
    particles.x[p] = sampled.x[p];
    particles.v[p] = spin * sampled.x[p] + 0.1 * Vec3(Hash(p, 0), Hash(p, 1), Hash(p, 2));
    particles.C[p] = spin;
    for (int k = 0; k < 9; ++k) particles.C[p](k) += 0.5 * Hash(p, 3 + k);
    particles.mass[p] = density * V0;
    particles.V0[p] = V0;
  }

  mpm::LocalGrid grid(dx);
  grid.Clear();
  for (const Vec3& x : particles.x) grid.Touch(mpm::MakeStencil(x, dx));
  grid.Finalize();
  mpm::StencilCache cache;
  cache.Build(particles.x, grid);
  // New grid velocities for G2P: the grid velocities of P2G plus a node-wise perturbation.
  mpm::P2G(particles, cache, &grid);
  mpm::GridVelocities(&grid);
  std::vector<double> v_new(grid.v);
  for (std::size_t k = 0; k < v_new.size(); ++k) v_new[k] += 0.01 * Hash(k, 15);

  double checksum = 0.0;
  const Timing t_stencil = TimeRepetitions(reps, [&] {
    cache.Build(particles.x, grid);
    return static_cast<double>(cache.node.back()[13]);
  }, &checksum);
  const Timing t_p2g = TimeRepetitions(reps, [&] {
    mpm::P2G(particles, cache, &grid);
    return grid.mv[grid.mv.size() / 2];
  }, &checksum);
  // With a FLIP fraction of 0, G2P overwrites v_p and C_p from the grid alone, so
  // repeating it needs no reset of the particles.
  const Timing t_g2p = TimeRepetitions(reps, [&] {
    mpm::G2P(cache, grid, v_new.data(), 0.0, &particles);
    return particles.v[particles.size() / 2].x();
  }, &checksum);

  const double n = static_cast<double>(particles.size());
  std::printf("mpm_transfer_bench: box %g x %g x %g m, dx %g m, ppc %d: %zu particles, %d grid "
              "nodes, %d repetitions, 1 core\n",
              size.x(), size.y(), size.z(), dx, ppc, particles.size(), grid.NodeCount(), reps);
  std::printf("%-36s %12s %14s %14s\n", "kernel", "best s", "particles/s", "median p/s");
  auto row = [&](const char* name, const Timing& t) {
    std::printf("%-36s %12.5f %14.4g %14.4g\n", name, t.best, n / t.best, n / t.median);
  };
  row("stencil (StencilCache::Build)", t_stencil);
  row("P2G (APIC, m_i and m_i v_i)", t_p2g);
  row("G2P (APIC, v_p and C_p)", t_g2p);
  std::printf("checksum %.6e\n", checksum);
  std::printf("stencil_particles_per_s %.6g\n", n / t_stencil.best);
  std::printf("p2g_particles_per_s %.6g\n", n / t_p2g.best);
  std::printf("g2p_particles_per_s %.6g\n", n / t_g2p.best);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const optistep::InputError& e) {
    std::fprintf(stderr, "mpm_transfer_bench: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpm_transfer_bench: internal error: %s\n", e.what());
    return 3;
  }
}

// mpm_transfer_bench: throughput of the MPM particle-grid transfers, in particles per second
// on one core.
//
//   mpm_transfer_bench [--dx M] [--ppc N] [--box LX LY LZ] [--reps N] [--benchmark_* ...]
//
// Samples a box of LX x LY x LZ m (default 0.12 x 0.9 x 0.12, the bar of HOT Fig. 20) with
// ppc particles per cell (default 8) on a grid of spacing dx (default 0.0075 m) through
// the library's sampler (mpm::Sample), in the sampler's cell order, which is the order a
// run starts from; gives every particle a deterministic velocity and affine velocity C_p
// (a rotation plus a per-particle perturbation, so no term is trivially zero); builds the
// sparse grid the way MpmDomain does (Touch every stencil, Finalize); and times with Google
// Benchmark, each over all particles, exactly the library kernels of one MPM step
// (mpm/Transfers.hpp):
//   stencil    StencilCache::Build: w_ip, grad_w_ip factors and the 27 local node indices
//   p2g        mpm::P2G, APIC (Jiang et al. 2015, Sec. 5): m_i and m_i v_i
//   g2p        mpm::G2P, APIC (flip fraction 0): v_p and C_p from new grid velocities
// One iteration is one pass over all particles; Google Benchmark repeats passes until a
// repetition lasts --benchmark_min_time (0.5 s by default), and runs N repetitions
// (--reps N, default 5, the same as --benchmark_repetitions=N). The counter
// particles_per_s is particles times passes over CPU seconds. The box, dx, ppc, particles
// and grid nodes are in the context (the console header, and "context" of
// --benchmark_out=FILE --benchmark_out_format=json, which scripts/optistep_bench reads).
// No MPI and no PETSc: this is the rank-local particle loop only, the part of a step's
// transfer time that scales with the particle count (the optistep run spends it outside
// the Os* -log_view events).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
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

int Usage() {
  std::fprintf(stderr, "usage: mpm_transfer_bench [--dx M] [--ppc N] [--box LX LY LZ] "
                       "[--reps N] [--benchmark_* ...]\n");
  return 1;
}

int Run(int argc, char** argv) {
  const std::vector<std::string> args =
      bench::InitializeBenchmark(argc, argv, {"--benchmark_repetitions=5"});
  double dx = 0.0075;
  int ppc = 8;
  Vec3 size(0.12, 0.9, 0.12);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--dx" && i + 1 < args.size()) {
      dx = std::atof(args[++i].c_str());
    } else if (args[i] == "--ppc" && i + 1 < args.size()) {
      ppc = std::atoi(args[++i].c_str());
    } else if (args[i] == "--box" && i + 3 < args.size()) {
      for (int d = 0; d < 3; ++d) size[d] = std::atof(args[++i].c_str());
    } else {
      return Usage();
    }
  }
  if (!(size.minCoeff() > 0.0)) return Usage();

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

  // Google Benchmark runs these after Run's set-up, while the objects they capture live.
  const double n = static_cast<double>(particles.size());
  auto pass = [&](const char* name, auto kernel) {
    benchmark::RegisterBenchmark(name, [&, kernel](benchmark::State& state) {
      for (auto _ : state) benchmark::DoNotOptimize(kernel());
      state.counters["particles_per_s"] =
          benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
    });
  };
  pass("stencil", [&] {
    cache.Build(particles.x, grid);
    return cache.node.back()[13];
  });
  pass("p2g", [&] {
    mpm::P2G(particles, cache, &grid);
    return grid.mv[grid.mv.size() / 2];
  });
  // With a FLIP fraction of 0, G2P overwrites v_p and C_p from the grid alone, so
  // repeating it needs no reset of the particles.
  pass("g2p", [&] {
    mpm::G2P(cache, grid, v_new.data(), 0.0, &particles);
    return particles.v[particles.size() / 2].x();
  });
  char text[64];
  std::snprintf(text, sizeof text, "%g x %g x %g", size.x(), size.y(), size.z());
  benchmark::AddCustomContext("box_m", text);
  std::snprintf(text, sizeof text, "%g", dx);
  benchmark::AddCustomContext("dx_m", text);
  benchmark::AddCustomContext("ppc", std::to_string(ppc));
  benchmark::AddCustomContext("particles", std::to_string(particles.size()));
  benchmark::AddCustomContext("grid_nodes", std::to_string(grid.NodeCount()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
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

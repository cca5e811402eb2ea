#include "mpm/MemoryEstimate.hpp"

#include <cstdio>

#include "core/Error.hpp"

namespace optistep::mpm {

MemoryEstimate EstimateMemory(const std::vector<BodyExtent>& bodies, double dx, int ppc,
                              bool matrix_free, int ranks) {
  MemoryEstimate e;
  for (const BodyExtent& body : bodies) {
    const double cells = body.volume / (dx * dx * dx);
    e.particles += ppc * cells;
    e.grid_nodes_low += cells;
    // A stencil reaches one node below its cell and two above (quadratic B-splines).
    e.grid_nodes_high += ((body.bounds.hi - body.bounds.lo).array() / dx + 3.0).prod();
  }
  const double per_particle = kBytesPerParticle + (matrix_free ? kBytesPerParticleMatrixFree : 0.0);
  const double per_node = kBytesPerNode + (matrix_free ? 0.0 : kBytesPerNodeHessian);
  e.run_bytes_low = ranks * kBytesPerRank + e.particles * per_particle + e.grid_nodes_low * per_node;
  e.run_bytes_high = ranks * kBytesPerRank + e.particles * per_particle + e.grid_nodes_high * per_node;
  e.setup_bytes = kBytesPerRank + e.particles * kSetupBytesPerParticle;
  return e;
}

void CheckMemory(const MemoryEstimate& estimate, const AvailableMemory& available,
                 const std::string& where, double dx, int ppc) {
  const bool run_fits = estimate.run_bytes_low <= available.total;
  if (run_fits && estimate.setup_bytes <= available.rank0_node) return;
  char counts[256], need[256];
  std::snprintf(counts, sizeof counts,
                "mpm.dx = %g m and mpm.ppc = %d make about %.3g particles and %.3g to %.3g grid nodes",
                dx, ppc, estimate.particles, estimate.grid_nodes_low, estimate.grid_nodes_high);
  if (run_fits)
    std::snprintf(need, sizeof need,
                  "rank 0 needs about %.3g GB to sample them, more than the %.3g GB available on its node",
                  estimate.setup_bytes / 1e9, available.rank0_node / 1e9);
  else
    std::snprintf(need, sizeof need,
                  "at least %.3g GB (up to %.3g GB), more than the %.3g GB available on the run's %d node%s",
                  estimate.run_bytes_low / 1e9, estimate.run_bytes_high / 1e9, available.total / 1e9,
                  available.nodes, available.nodes == 1 ? "" : "s");
  throw InputError(where + ": " + counts + ", " + need + " (" + available.source +
                   "); expected a larger mpm.dx or a smaller mpm.ppc");
}

}  // namespace optistep::mpm

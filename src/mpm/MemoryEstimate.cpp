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
  char counts[256];
  std::snprintf(counts, sizeof counts,
                "mpm.dx = %g m and mpm.ppc = %d make about %.3g particles and %.3g to %.3g grid nodes",
                dx, ppc, estimate.particles, estimate.grid_nodes_low, estimate.grid_nodes_high);
  std::string need;
  if (run_fits) {
    need = "rank 0 needs " +
           BeyondMemory(estimate.setup_bytes, available.rank0_node, "its node", available.source) +
           ", to sample them";
  } else {
    char high[64];
    std::snprintf(high, sizeof high, " (up to %.3g GB)", estimate.run_bytes_high / 1e9);
    need = "the run needs " +
           BeyondMemory(estimate.run_bytes_low, available.total, RunNodes(available), available.source) +
           high;
  }
  throw InputError(where + ": " + counts + "; " + need + "; expected a larger mpm.dx or a smaller mpm.ppc");
}

}  // namespace optistep::mpm

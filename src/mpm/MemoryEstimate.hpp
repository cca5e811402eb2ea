#pragma once
// How much memory an MPM run will need, estimated from the scene before anything is sampled,
// so that a run that cannot fit (a typo such as mpm.dx = 1e-4 for 1e-2: a million times the
// particles) is refused with one line instead of ending in std::bad_alloc after filling the
// node. Counts: about ppc V / dx^3 particles per body of volume V; between V / dx^3 grid
// nodes (one per filled cell) and the nodes the quadratic B-spline stencils reach over the
// body's bounding box. Bytes: the k* constants below, per rank, particle and node (more with
// the assembled Hessian or with mpm.matrix_free), fitted to the maximum resident set of runs
// of the twisting bars (tests/test_serial_mpm_memory.cpp holds the runs).
// Contract: a run is refused only when even the lower estimate does not fit, so a scene that
// fits is never refused.
// The estimate and the fit: docs/methods/mpm.md, docs/benchmarks/2026-11-24-mpm-memory.md.
#include <string>
#include <vector>

#include "core/AvailableMemory.hpp"
#include "mpm/Shapes.hpp"

namespace optistep::mpm {

/// The program, MPI and PETSc, per rank.
inline constexpr double kBytesPerRank = 50e6;
/// The particle state (240 B), stencil cache, halo copies, transfer scratch.
inline constexpr double kBytesPerParticle = 650.0;
/// More per particle with mpm.matrix_free (dP/dF, 81 doubles).
inline constexpr double kBytesPerParticleMatrixFree = 650.0;
/// The step grid and the solve's PETSc vectors, per node.
inline constexpr double kBytesPerNode = 700.0;
/// More per node with the assembled Hessian (up to 125 3x3 blocks of doubles per row, in
/// the potential's row buffer and in PETSc's BAIJ matrix: 18 kB for a full row).
inline constexpr double kBytesPerNodeHessian = 16000.0;
/// Rank 0 while it samples every particle and sends them out.
inline constexpr double kSetupBytesPerParticle = 1000.0;

/// A body placed in the world: its volume (m^3) and bounding box (m).
struct BodyExtent {
  double volume = 0.0;
  Aabb bounds;
};

/// What a run will hold (see the file comment); counts and bytes as doubles, so that
/// nothing overflows whatever dx.
struct MemoryEstimate {
  double particles = 0.0;
  double grid_nodes_low = 0.0;   ///< one per cell the bodies fill
  double grid_nodes_high = 0.0;  ///< over the bodies' bounding boxes
  double run_bytes_low = 0.0;    ///< all ranks together, while stepping, with grid_nodes_low
  double run_bytes_high = 0.0;   ///< the same with grid_nodes_high
  double setup_bytes = 0.0;      ///< rank 0 alone, while sampling and distributing
};

/// The estimate for bodies sampled at spacing dx (m) with ppc particles per cell and
/// stepped on `ranks` ranks, with the Hessian assembled or not (mpm.matrix_free).
MemoryEstimate EstimateMemory(const std::vector<BodyExtent>& bodies, double dx, int ppc,
                              bool matrix_free, int ranks);

/// Throws InputError, one line starting with `where` (the scene file), naming mpm.dx and
/// mpm.ppc with their values, the particle and node counts, the estimate and the memory
/// available (and where it was read), when run_bytes_low exceeds the memory available
/// on the run's nodes or setup_bytes that on rank 0's node.
void CheckMemory(const MemoryEstimate& estimate, const AvailableMemory& available,
                 const std::string& where, double dx, int ppc);

}  // namespace optistep::mpm

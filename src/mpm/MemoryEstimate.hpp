#pragma once
// How much memory an MPM run will need, estimated from the scene before anything is
// sampled, so that a run that cannot fit (a typo such as mpm.dx = 1e-4 for 1e-2: a
// million times the particles) is refused with one line instead of ending in
// std::bad_alloc after filling the node.
//
// Counts: a body of volume V (Shape::Volume times the transform's scale factors) holds
// about ppc V / dx^3 particles (exactly so in cells wholly inside; Monte Carlo at the
// boundary: mpm/Sampling.hpp). Its grid nodes (those the quadratic B-spline stencils of
// its particles reach) number at least V / dx^3, one per cell it fills, and at most the
// nodes such stencils reach over its whole bounding box, prod_d (extent_d / dx + 3).
// A box is at the upper end; a ball of 10 cells of radius has 0.58 of it, CGAL's
// armadillo (configs/armadillo_drop_mpm.yaml) 0.21; bodies that spread later need more.
// Bytes, fitted to the maximum resident set (/usr/bin/time -v, summed over ranks) of runs
// of the twisting bars (boxes: the upper node count), assembled Hessian and matrix-free
// (upper estimate / measured):
//   configs/hot_twisting_bar_coarse.yaml, 1 rank, dx 0.015, 0.03, 0.06 (30720, 3840, 480
//     particles): 1.12, 1.16, 1.09 assembled; 1.01, 1.02, 1.01 matrix-free;
//   configs/hot_twisting_bar.yaml, 1 rank, ppc 1, 8, 27 (30720 to 829440 particles):
//     1.02, 1.01, 1.01; 1.03, 1.03, 1.03; 2 ranks, ppc 27: 0.94; 0.90.
//   kBytesPerRank: the program, MPI and PETSc (a run of 480 particles);
//   kBytesPerParticle: the particle state (240 B), stencil cache, halo copies, transfer
//     scratch; kBytesPerParticleMatrixFree more with mpm.matrix_free (dP/dF, 81 doubles);
//   kBytesPerNode: the step grid and the solve's PETSc vectors; kBytesPerNodeHessian more
//     with the assembled Hessian (up to 125 3x3 blocks of doubles per row, in the
//     potential's row buffer and in PETSc's BAIJ matrix: 18 kB for a full row);
//   kSetupBytesPerParticle: rank 0 while it samples every particle and sends them out
//     (2 ranks, ppc 27: 830 B per particle on rank 0).
// A run is refused only when even the lower estimate does not fit: a scene that fits is
// never refused (there is no way around the check), and a typo is off by far more than
// the range.
#include <string>
#include <vector>

#include "core/AvailableMemory.hpp"
#include "mpm/Shapes.hpp"

namespace optistep::mpm {

inline constexpr double kBytesPerRank = 50e6;
inline constexpr double kBytesPerParticle = 650.0;
inline constexpr double kBytesPerParticleMatrixFree = 650.0;
inline constexpr double kBytesPerNode = 700.0;
inline constexpr double kBytesPerNodeHessian = 16000.0;
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

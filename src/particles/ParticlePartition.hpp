#pragma once
// Distribution of particles joined by pairwise constraints (XPBD chains and cloths) over MPI
// ranks, and the rank-count-independent order their Gauss-Seidel passes need.
//
// Ownership ("owner computes", as partition/TetPartition.hpp for tets): every particle is
// owned by one rank, chosen by METIS_PartGraphKway on the particle graph (one edge per
// constraint; fixed seed, computed on rank 0). A rank keeps every constraint at one of its
// owned particles; the other ends of those constraints are its ghost particles. A constraint
// whose ends have two owners is kept, and projected from bitwise the same inputs, by both;
// it is "counted" (energy, statistics) by the owner of its first particle.
//
// Order: the constraints are colored greedily in constraint id order (GreedyColors of
// partition/GreedyColoring.hpp: no two constraints of a color share a particle). Within a
// color no two projections touch the same particle, so applying a color in any order, on
// any number of ranks, gives the same bits.
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace optistep {

/// The owner rank of each of n_particles particles joined by `pairs` (2 ids per constraint),
/// from METIS_PartGraphKway (fixed seed) into `ranks` parts; all 0 for one rank. Rank-local.
/// A part may be empty when there are fewer particles than ranks.
std::vector<int> PlanParticlePartition(std::int64_t n_particles,
                                       const std::vector<std::int64_t>& pairs, int ranks);

/// One rank's share of a particle system, in global ids (the scene's order).
struct ParticleShare {
  std::vector<std::int64_t> owned;        ///< ascending
  std::vector<std::int64_t> ghosts;       ///< ascending
  std::vector<std::int64_t> constraints;  ///< kept constraints by (color, id)
  std::vector<char> counted;              ///< per kept constraint: 1 where this rank counts it
  std::vector<std::size_t> color_begin;   ///< kept constraints of color c: [begin[c], begin[c+1])
  /// Per color c and rank r: the owned particles whose new positions rank r needs after
  /// color c (ascending), and the ghosts rank r sends (ascending).
  std::vector<std::vector<std::vector<std::int64_t>>> send, recv;
};

/// Collective. Every rank passes the same particle count and pairs; rank 0 partitions and
/// colors, and broadcasts. Returns this rank's share; *n_colors the number of colors.
ParticleShare DistributeParticles(MPI_Comm comm, std::int64_t n_particles,
                                  const std::vector<std::int64_t>& pairs, int* n_colors);

}  // namespace optistep

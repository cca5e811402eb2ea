#pragma once
// Distribution of a block-sparse grid over MPI ranks (METIS_PartGraphKway): the map from
// grid blocks to their owning ranks, the same on every rank. The MPM grid is the one such
// grid (mpm/LocalGrid.hpp: blocks of 4^3 nodes; mpm/MpmDomain distributes particles by it).
//
// The map holds the blocks that the items' stencils touch, in integer block coordinates
// (each in [-2^20, 2^20)). A block new to the map goes to the lowest rank touching it; a
// known block keeps its owner until Repartition, which splits the blocks' adjacency graph
// (26-neighbourhood) with vertex weight = 1 + items in the block, on rank 0 with a fixed
// METIS seed, and broadcasts the parts: the same items on the same rank count give the
// same map. Items move to their blocks' owners with partition/Migration.hpp.
#include <mpi.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/Types.hpp"

namespace optistep {

/// max / mean of per_rank (items per rank, one entry per rank), 1 when there are none.
double LoadImbalance(const std::vector<long long>& per_rank);

class BlockPartition {
 public:
  /// An empty map over the ranks of comm.
  explicit BlockPartition(MPI_Comm comm);

  /// Forgets every block. Not collective (call it on every rank).
  void Clear() { owner_.clear(); }

  /// The rank owning block. Not collective. std::logic_error if the map lacks it.
  int Owner(const Eigen::Vector3i& block) const;

  /// Collective: replaces the map by the union over the ranks of their touched blocks
  /// (any order, repeats allowed); a block new to the map goes to the lowest rank that
  /// passes it, the others keep their owners, blocks no rank passes are dropped.
  void Update(const std::vector<Eigen::Vector3i>& touched);

  /// Collective: the LoadImbalance the items would have on the current owners. home: the
  /// block of each of this rank's items (it must be in the map: std::logic_error).
  double ProjectedImbalance(const std::vector<Eigen::Vector3i>& home) const;

  /// Collective: new owners of all blocks in the map from METIS_PartGraphKway on rank 0
  /// (26-neighbour block graph, vertex weight = 1 + items in the block over all ranks,
  /// seed 1), broadcast; on one rank, rank 0 owns every block. home: the block of each
  /// of this rank's items (it must be in the map: std::out_of_range). std::runtime_error
  /// if METIS fails.
  void Repartition(const std::vector<Eigen::Vector3i>& home);

  /// Not collective. The map sorted by block in (bz, by, bx) order: block coordinates
  /// and owning ranks. For checkpoints.
  void Export(std::vector<Eigen::Vector3i>* blocks, std::vector<int>* owners) const;
  /// Not collective. Replaces the map by blocks[b] -> owners[b] (an Export, possibly of
  /// another run on the same number of ranks).
  void Assign(const std::vector<Eigen::Vector3i>& blocks, const std::vector<int>& owners);
  /// Collective: whether the map is the one Update(touched) would leave (its blocks are
  /// exactly those some rank touches; repeats allowed) and each of this rank's items,
  /// whose blocks are home, lives on the rank owning its block. The same answer on every
  /// rank. A map exported after a step fits the items it was exported with on the same
  /// grid and rank count, and no other.
  bool Fits(const std::vector<Eigen::Vector3i>& touched, const std::vector<Eigen::Vector3i>& home) const;

 private:
  static std::uint64_t Key(const Eigen::Vector3i& block);
  static Eigen::Vector3i Unkey(std::uint64_t key);

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::unordered_map<std::uint64_t, int> owner_;  ///< block key -> rank, same on all ranks
};

}  // namespace optistep

#pragma once
// Distribution of MPM particles and grid over MPI ranks.
//
// The unit of distribution is the grid block of 4^3 nodes (mpm/LocalGrid.hpp). Every
// rank holds the same map from the blocks that particle stencils touch to their owning
// ranks (partition/BlockPartition); METIS_PartGraphKway splits the block adjacency graph
// (26-neighbourhood) with vertex weight = particles in the block, at start and whenever
// the imbalance (max over mean particles per rank) passes a threshold. Particles move to
// their blocks' owners, and halo copies to the ranks that need them, as packed records
// (partition/Migration.hpp). MpmDomain keeps what is MPM's: which blocks a particle's
// stencil touches, the halo, and the step grid.
//  - A particle lives on the rank owning the block of its cell floor(x_p / dx).
//  - A grid node is owned by the rank owning its block; the unknowns of a step are the
//    owned nodes with mass, numbered contiguously per rank (PETSc ownership).
//  - "Owner computes", as for FEM: before each solve every rank receives copies of the
//    other ranks' particles whose stencils touch its nodes (the halo), so P2G, the
//    energy gradient and the Hessian rows of owned nodes are summed locally in a fixed
//    order and never sent. Ghost nodes (non-owned stencil nodes of local particles) get
//    their values by PETSc ghost updates. Results are bitwise reproducible per rank count.
#include <petscvec.h>

#include <cstdint>
#include <vector>

#include "mpm/LocalGrid.hpp"
#include "mpm/Particles.hpp"
#include "mpm/Transfers.hpp"
#include "partition/BlockPartition.hpp"

namespace optistep::mpm {

/// What one Rebalance did (for the per-step stats).
struct BalanceReport {
  long long migrated = 0;      ///< particles that changed rank (global)
  bool repartitioned = false;
  double imbalance = 1.0;      ///< max / mean owned particles per rank, after
  std::vector<long long> particles_per_rank;
};

/// One step's grid: the local grid of all local particles' stencils, with the PETSc
/// numbering of its active nodes.
struct StepGrid {
  LocalGrid grid;
  StencilCache cache;
  std::vector<PetscInt> petsc_id;  ///< per local grid node: global unknown id, or -1
  std::vector<char> owned;         ///< per local grid node: this rank owns it
  std::vector<int> owned_nodes;    ///< local grid indices of owned active nodes, in PETSc order
  std::vector<int> ghost_nodes;    ///< local grid indices of ghost nodes, in ghost order
  std::vector<PetscInt> ghost_ids; ///< their global ids (ascending)
  PetscInt n_global = 0;           ///< active nodes on all ranks
  PetscInt begin = 0;              ///< first owned global id
  explicit StepGrid(double dx) : grid(dx) {}
  /// Position in the local form of a ghosted Vec (owned first, then ghosts) of each local
  /// grid node, or -1 for an inactive node.
  std::vector<int> local_form;
};

class MpmDomain {
 public:
  /// dx: grid spacing (m); threshold: repartition when max/mean particles per rank
  /// exceeds it (HOT-style load balance; default 1.2).
  MpmDomain(MPI_Comm comm, double dx, double repartition_threshold);

  /// Collective. Rank 0 passes every particle (the others pass none), or each rank some
  /// (a restart on another rank count); blocks are split by METIS and particles sent to
  /// their owners, keeping the senders' order (by sending rank) within each rank.
  void Distribute(Particles all);

  /// The block -> owner map (the same on every rank), sorted by block: block coordinates
  /// (a block holds the nodes 4 b .. 4 b + 3 on each axis) and owning ranks. For checkpoints.
  void ExportBlockOwners(std::vector<Eigen::Vector3i>* blocks, std::vector<int>* owners) const;
  /// Collective. Installs a state exported on the same number of ranks: this rank's
  /// owned particles in the order they had (the rank-local order fixes the summation order,
  /// so the run continues bitwise) and the block map of ExportBlockOwners, when that map
  /// fits the particles on this grid (BlockPartition::Fits: its blocks are those the
  /// stencils touch at this dx, and every particle's home block is this rank's). Otherwise
  /// (a checkpoint of another dx) it distributes the particles afresh, as Distribute, and
  /// returns false.
  bool Restore(Particles owned, const std::vector<Eigen::Vector3i>& blocks,
               const std::vector<int>& owners);

  /// Collective, after advection: refreshes the block set from the owned particles'
  /// stencils (new blocks go to the lowest rank that touches them), repartitions with
  /// METIS when the imbalance passes the threshold (or always, with force), and moves
  /// particles to the owners of their blocks.
  BalanceReport Rebalance(bool force = false);

  /// Collective: appends to particles() copies of other ranks' particles whose stencils
  /// touch blocks this rank owns (the halo), after the n_owned() owned ones.
  void ExchangeHalo();
  /// Drops the halo copies.
  void DropHalo() { particles_.Resize(n_owned_); }

  /// Collective: the grid of all local particles (owned + halo), P2G done, with the PETSc
  /// numbering of the active nodes (owned nodes with m_i > 0) and their ghosts.
  void BuildStepGrid(StepGrid* step) const;

  /// A ghosted Vec (block size 3) over the step's active nodes. Collective.
  Vec CreateNodeVector(const StepGrid& step) const;

  MPI_Comm comm() const { return comm_; }
  double dx() const { return dx_; }
  Particles& particles() { return particles_; }
  const Particles& particles() const { return particles_; }
  std::size_t n_owned() const { return n_owned_; }
  long long GlobalParticleCount() const;
  /// The rank owning block (block coordinates); std::logic_error if no rank does.
  int OwnerOfBlock(const Eigen::Vector3i& block) const { return blocks_.Owner(block); }
  /// Block of the cell of x (the block that owns a particle at x).
  Eigen::Vector3i HomeBlock(const Vec3& x) const;

 private:
  /// Blocks touched by the stencils of the owned particles (repeats included).
  std::vector<Eigen::Vector3i> TouchedBlocks() const;
  /// HomeBlock of each owned particle.
  std::vector<Eigen::Vector3i> HomeBlocks() const;

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  double dx_;
  double threshold_;
  Particles particles_;
  std::size_t n_owned_ = 0;
  BlockPartition blocks_;  ///< block -> rank, same on all ranks
};

}  // namespace optistep::mpm

#pragma once
// The levels of a grid multigrid on an MPM grid, and the prolongation between two of them
// by node embedding (HOT, Wang, Li, Fang, Zhang, Gao, Tang, Kaufman, Jiang 2020, Sec. 4):
// level m + 1 has spacing 2 dx_m, and a fine node is the weighted sum of the coarse nodes
// around it, per axis linear (HOT eq. 5, the default) or quadratic (HOT's ablation), in 3D
// the product of the axes' weights times the 3x3 identity. Both reproduce linear fields
// exactly. The grid is sparse: a coarse node exists when a fine node takes a non-zero
// weight from it, so a coarse level depends on the fine node set alone.
// Contract: every level is split over the ranks by whole blocks of 4 x 4 x 4 nodes (what
// makes solvers/ColoredGaussSeidel.hpp independent of the rank count); a coarse block goes
// to the rank owning most of the fine copies of its nodes (ties: the lowest rank), agreed by
// a rendezvous; each rank numbers its coarse nodes contiguously by block, deterministically
// for a fine level and rank count.
// The weights, the semi-definite fringe, ownership and numbering: docs/methods/hot.md.
#include <petscmat.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/PetscHandles.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep {

enum class Embedding { kLinear, kQuadratic };

/// "linear" or "quadratic".
const char* EmbeddingName(Embedding embedding);
/// The embedding named name; false if there is none.
bool ParseEmbedding(const std::string& name, Embedding* embedding);
/// The weight (dimensionless) a fine node takes along one axis from the coarse node c at
/// fine distance d = i - 2c (see the file comment); 0 beyond EmbeddingHalfWidth.
double AxisWeight(Embedding embedding, int d);
/// The largest |d| with a non-zero AxisWeight: 1 (linear) or 2 (quadratic).
int EmbeddingHalfWidth(Embedding embedding);

using GridCoord = std::array<int, 3>;

/// Width (nodes per axis) of the blocks that distribute every level.
constexpr int kGridBlockWidth = 4;
/// The block of a node, (floor(i / 4), floor(j / 4), floor(k / 4)).
GridCoord BlockOf(const GridCoord& node);
/// The colour of a node for the colored Gauss-Seidel sweep, 0..7: the parity of its
/// block on each axis (HOT's reference code, mark_colors). Two nodes of one colour in
/// different blocks are at least kGridBlockWidth + 1 apart on some axis.
int ColorOf(const GridCoord& node);
/// A key ordering nodes by block ((z, y, x) order of blocks), then by (k, j, i) within
/// the block: the numbering order of coarse levels and the order of a sweep in a block.
std::uint64_t BlockMajorKey(const GridCoord& node);

/// A rank-local map from node coordinates to an index.
class NodeIndex {
 public:
  NodeIndex() = default;
  explicit NodeIndex(const std::vector<GridCoord>& nodes);
  /// The index of node in the list given, or -1.
  PetscInt Find(const GridCoord& node) const {
    const auto it = index_.find(Key(node));
    return it == index_.end() ? -1 : it->second;
  }
  static std::uint64_t Key(const GridCoord& node);

 private:
  std::unordered_map<std::uint64_t, PetscInt> index_;
};

/// Collective on comm: where the nodes of a grid level live. Every rank publishes the
/// blocks of its owned nodes to the blocks' home ranks; LookUp then finds any node's owner
/// and global index in two rounds of messages.
class GridDirectory {
 public:
  /// Collective. level: this rank's owned nodes in PETSc order with first_global (as
  /// IncrementalPotential::Grid() gives them); the directory keeps a copy of what it needs.
  GridDirectory(MPI_Comm comm, const GridInfo& level);

  /// Collective: the global node index of each of nodes (any nodes, repeats allowed), -1
  /// for a node the level does not have, and its owning rank (-1 likewise).
  void LookUp(const std::vector<GridCoord>& nodes, std::vector<PetscInt>* ids, std::vector<int>* owners) const;
  /// Rank-local: the index of node among this rank's owned nodes, or -1.
  PetscInt LocalIndex(const GridCoord& node) const { return local_.Find(node); }
  /// Whether every block's nodes lie on one rank (the same answer on every rank).
  bool BlocksOnOneRank() const { return blocks_on_one_rank_; }
  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  PetscInt first_global_ = 0;
  NodeIndex local_;
  /// At this rank, for the blocks whose home it is: the ranks owning nodes in them.
  std::unordered_map<std::uint64_t, std::vector<int>> owners_at_home_;
  bool blocks_on_one_rank_ = true;
};

/// Collective on comm: a grid level of spacing dx (m) holding the union over the ranks of
/// `nodes` (this rank's candidates; a node may be given by several ranks, and more than
/// once), split by blocks: a block goes to the rank that gave the most of its nodes (ties:
/// the lowest rank), which numbers its nodes by BlockMajorKey. Coarsen makes its coarse
/// levels by it; a caller with a first grid level of its own (a tet mesh embedded in a
/// grid) may make that level by it, so that the colored smoother there does not depend on
/// the rank count either.
GridInfo DistributeGridNodes(MPI_Comm comm, const std::vector<GridCoord>& nodes, double dx);

/// The coarsening of one level (see the file comment).
struct Coarsening {
  GridInfo coarse;  ///< level m + 1: spacing 2 dx, owned nodes in PETSc order
  /// The prolongation, 3 n_fine x 3 n_coarse (rows in the fine level's ownership, the
  /// layout of its vectors; columns in the coarse level's): the scalar weights as a PETSc
  /// MAIJ matrix with 3 components (weight times the 3x3 identity), dimensionless.
  OwnedMat P;
};

/// Collective on comm. From the fine level (its owned nodes in PETSc order, dx,
/// first_global and n_global, as IncrementalPotential::Grid() gives them) makes the coarse
/// level and the prolongation, and in *coarse_directory (when not null) the coarse level's
/// directory. A rank without fine nodes must call all the same.
Coarsening Coarsen(MPI_Comm comm, const GridInfo& fine, Embedding embedding,
                   std::unique_ptr<GridDirectory>* coarse_directory = nullptr);

/// Collective on comm: Coarsen; returns P alone (the caller destroys it) and the coarse
/// level in *coarse.
Mat BuildProlongation(MPI_Comm comm, const GridInfo& fine, Embedding embedding, GridInfo* coarse);

}  // namespace optistep

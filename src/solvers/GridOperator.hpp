#pragma once
// One level's operator of the grid multigrid (solvers/GridMultigrid.hpp): an assembled
// PETSc BAIJ matrix of block size 3 whose block rows are the owned nodes of a grid level
// (solvers/NodeEmbedding.hpp), together with where its entries lie on the grid: the nodes of
// its off-rank block columns (ghosts), a scatter of vector values to them, and its reach,
// the largest distance in nodes along an axis between an entry's row and column nodes.
// What the colored Gauss-Seidel smoother and the structured Galerkin products read.
//
// Storage read through PETSc's public interface: the rank's diagonal and off-diagonal
// SeqBAIJ parts (MatMPIBAIJGetSeqBAIJ; on one rank the SeqBAIJ matrix itself), their block
// compressed rows (MatGetRowIJ) and values (MatSeqBAIJGetArray: 3x3 blocks stored column
// by column). The off-diagonal part's columns are compressed: column k is the ghost node k.
#include <petscmat.h>
#include <petscvec.h>

#include <vector>

#include "core/PetscHandles.hpp"
#include "solvers/NodeEmbedding.hpp"

namespace optistep {

class GridOperator {
 public:
  /// Collective on A's communicator. A: assembled, block size 3, BAIJ (MATSEQBAIJ or
  /// MATMPIBAIJ), its block rows the nodes of level.owned_nodes in that order. Keeps a
  /// reference to A; later changes of A's values are seen, a change of its nonzero pattern
  /// is not (a new GridOperator is needed). std::logic_error if A is not BAIJ.
  GridOperator(const GridInfo& level, Mat A);
  ~GridOperator();
  GridOperator(const GridOperator&) = delete;
  GridOperator& operator=(const GridOperator&) = delete;

  Mat matrix() const { return A_; }
  const GridInfo& level() const { return level_; }
  /// Owned rows (nodes) of this rank.
  PetscInt rows() const { return static_cast<PetscInt>(level_.owned_nodes.size()); }
  /// The nodes of the off-diagonal part's columns, in its (compressed) column order.
  const std::vector<GridCoord>& ghost_nodes() const { return ghost_nodes_; }
  /// Their global node indices (ascending).
  const std::vector<PetscInt>& ghost_ids() const { return ghost_ids_; }
  /// The largest |i - j| (in nodes, along any axis) between the row and column nodes of an
  /// entry, over all ranks.
  int reach() const { return reach_; }

  /// Rank-local views of the storage, valid until Restore (see the file comment). n rows;
  /// diagonal part: rows d_i[r] .. d_i[r + 1] - 1 of d_j (local column = owned node) and
  /// d_a (9 values per block); off-diagonal part likewise (o_j: ghost index), empty on one
  /// rank.
  struct Blocks {
    PetscInt n = 0;
    const PetscInt *d_i = nullptr, *d_j = nullptr, *o_i = nullptr, *o_j = nullptr;
    PetscScalar *d_a = nullptr, *o_a = nullptr;
  };
  Blocks Get() const;
  void Restore(Blocks* blocks) const;

  /// Collective: ghost[3 k + d] = x at ghost node k, component d; x is a vector of the
  /// level's layout (3 values per owned node), ghost a sequential one of 3 ghost_nodes().size().
  void UpdateGhosts(Vec x, Vec ghost) const;
  /// A sequential vector for UpdateGhosts (the caller destroys it).
  Vec CreateGhostVector() const;
  /// A vector of the level's layout (the caller destroys it).
  Vec CreateVector() const;

 private:
  GridInfo level_;
  OwnedMat A_;
  Mat Ad_ = nullptr, Ao_ = nullptr;
  std::vector<GridCoord> ghost_nodes_;
  std::vector<PetscInt> ghost_ids_;
  OwnedVecScatter scatter_;
  int reach_ = 0;
};

}  // namespace optistep

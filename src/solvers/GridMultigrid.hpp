#pragma once
// Geometric multigrid on an MPM grid (HOT, Wang et al. 2020, Sec. 4): PETSc's PCMG with the
// prolongations of solvers/NodeEmbedding.hpp between the levels (level m has spacing
// 2^m dx) and Galerkin coarse operators P^T H P (HOT eq. 6), formed by PETSc as the triple
// product R H P with R = P^T stored (not MatPtAP, whose parallel sums are not repeatable).
// One symmetric Gauss-Seidel sweep before and after the coarse correction (rank-local inside
// block Jacobi), point-block-Jacobi PCG on the coarsest level, one multiplicative V-cycle per
// application. The PC is an ordinary PETSc object under the caller's options prefix, so
// every PCMG parameter is an option (-help lists them); the scene's defaults are set first.
// Contract: the hierarchy is remade for every new grid (SetGrid); a caller whose next grid
// and level-0 pattern are unchanged may keep the PC and refill its level-0 matrix, and PCMG
// then redoes the Galerkin products' numeric phase alone, with bitwise the same results.
// The method, the defaults' sources and why R H P: docs/methods/hot.md.
#include <petscksp.h>

#include <string>
#include <vector>

#include "solvers/NodeEmbedding.hpp"

namespace optistep {

class GridMultigrid {
 public:
  /// levels and embedding: the scene's defaults; scene_path names the scene in messages.
  GridMultigrid(MPI_Comm comm, std::string prefix, int levels, Embedding embedding,
                std::string scene_path);

  /// Collective, before KSPSetFromOptions of the KSP that holds pc: reads
  /// -<prefix>pc_mg_levels and -<prefix>mg_embedding (InputError naming them for a bad
  /// value), makes pc a PCMG with that many levels and sets the defaults above.
  void Configure(PC pc);
  /// Collective, after KSPReset of the KSP holding pc (a new grid) and before its
  /// KSPSetOperators/KSPSetUp: builds the levels below grid (level 0) and sets their
  /// prolongations into pc. InputError naming solver.mg_levels (or the option) when the
  /// grid cannot be coarsened that often: a level would not have fewer nodes than the one
  /// above it.
  void SetGrid(PC pc, const GridInfo& grid);
  /// Collective: whether grid is, on every rank, the grid of the last SetGrid (the same
  /// nodes in the same PETSc order and numbering, the same dx), so that the prolongations
  /// it made serve grid unchanged. False before the first SetGrid.
  bool SameGrid(const GridInfo& grid) const;

  int levels() const { return levels_; }
  Embedding embedding() const { return embedding_; }
  /// Nodes of each level of the last SetGrid (level 0 first), over all ranks, and the
  /// fewest and most a rank owns.
  struct LevelSize {
    PetscInt nodes = 0;
    PetscInt fewest_owned = 0;
    PetscInt most_owned = 0;
  };
  const std::vector<LevelSize>& level_sizes() const { return sizes_; }
  /// Collective: the levels, embedding and, after a SetGrid, the level sizes.
  void View(PetscViewer viewer) const;

 private:
  PetscErrorCode ReadOptions();

  MPI_Comm comm_;
  std::string prefix_;
  int levels_;
  Embedding embedding_;
  std::string scene_path_;
  bool levels_from_option_ = false;
  std::vector<LevelSize> sizes_;
  GridInfo grid_;  ///< level 0 of the last SetGrid
  bool has_grid_ = false;
};

/// The phase of building the levels (prolongations) and PETSc's set-up of the PCMG
/// (Galerkin products, smoothers, coarse solve): "HierarchyBuild".
extern const Phase kHierarchyBuildPhase;

}  // namespace optistep

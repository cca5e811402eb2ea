#pragma once
// Geometric multigrid on a grid (HOT, Wang et al. 2020, Sec. 4): PETSc's PCMG on the levels
// of solvers/NodeEmbedding.hpp (level m has spacing 2^m dx), with Galerkin coarse operators
// P^T H P (HOT eq. 6) formed by the embedding's fixed stencil (solvers/GridGalerkinProduct.hpp:
// no symbolic phase, sums in an order fixed by the grid, so bitwise the same on any rank
// count), every level BAIJ of block size 3, HOT's multicolored block Gauss-Seidel smoother
// (solvers/ColoredGaussSeidel.hpp, one symmetric sweep before and after), point-block-Jacobi
// PCG on the coarsest level (or an exact redundant Cholesky by options), one multiplicative
// V-cycle per application. The PC is an ordinary PETSc object under the caller's options
// prefix, so every PCMG parameter is an option (-help lists them); the scene's defaults
// (solver.mg_levels, solver.mg_embedding) are set first.
// Life cycle: Configure once; per new grid, after the KSP holding pc was reset, Reset and
// SetGrid (the symbolic part) with the level-0 matrix assembled at least once; then
// SetOperator whenever the level-0 matrix has new values (the Galerkin products), before the
// KSP's set-up. A caller whose next grid and level-0 pattern are those of the last SetGrid
// (SameGrid) keeps all of it and calls SetOperator alone. A tet mesh above the grid levels
// calls SetFirstProlongation instead of SetGrid.
// The method, the defaults' sources and the choices measured: docs/methods/hot.md.
#include <petscksp.h>

#include <memory>
#include <string>
#include <vector>

#include "solvers/ColoredGaussSeidel.hpp"
#include "solvers/GridGalerkinProduct.hpp"
#include "solvers/GridOperator.hpp"
#include "solvers/NodeEmbedding.hpp"

namespace optistep {

/// Throws InputError "-hessian_mat_type <H's type>: <why>" unless H's type is seq or mpi
/// (a multigrid that needs one Hessian storage refuses the others in one line).
void RequireHessianType(Mat H, MatType seq, MatType mpi, const std::string& why);

class GridMultigrid {
 public:
  /// levels and embedding: the scene's defaults (levels 0: HOT's 3); scene_path names the
  /// scene in messages.
  GridMultigrid(MPI_Comm comm, std::string prefix, int levels, Embedding embedding,
                std::string scene_path);
  ~GridMultigrid();

  /// What level 0 is: a grid (the MPM grid: SetGrid) or an unstructured space prolonged
  /// from a grid by the caller's P (SetFirstProlongation).
  enum class FirstLevel { kGrid, kUnstructured };
  /// Collective, before KSPSetFromOptions of the KSP that holds pc: reads
  /// -<prefix>pc_mg_levels and -<prefix>mg_embedding (InputError naming them for a bad
  /// value), makes pc a PCMG with that many levels and sets the defaults above (an
  /// unstructured level 0 is smoothed by PETSc's rank-local symmetric SOR instead).
  void Configure(PC pc, FirstLevel first = FirstLevel::kGrid);
  /// Collective, after KSPReset of the KSP holding pc (a new grid) and before its
  /// KSPSetOperators/KSPSetUp: level 0 is grid with the operator A (assembled BAIJ, block
  /// size 3, block rows grid.owned_nodes in that order: the MPM Hessian); builds the
  /// levels below, their coarse matrices (zero until SetOperator), the smoothers, and sets
  /// the prolongations and level operators into pc. InputError naming solver.mg_levels (or
  /// the option) when the grid cannot be coarsened that often (a level would not have
  /// fewer nodes than the one above it), -hessian_mat_type when A is not BAIJ.
  void SetGrid(PC pc, const GridInfo& grid, Mat A);
  /// Collective, in place of SetGrid: the first prolongation supplied by the caller. Level
  /// 0 is an unstructured space (e.g. the nodes of a tet mesh) with the operator A
  /// (assembled AIJ, block size 3, as PETSc's triple products need; its pattern fixed from
  /// now on); P0 (AIJ, block
  /// sizes 3, 3 n_0 x 3 n_1, formed once by the caller, e.g. trilinear weights of the grid
  /// nodes around each mesh node) prolongs from the grid level first_grid (level 1: its
  /// owned nodes in P0's column ownership, made by DistributeGridNodes so that every block
  /// lies on one rank and the colored smoother does not depend on the rank count) to level
  /// 0. Level 1's operator is P0^T A P0 formed by PETSc (R A P with R = P0^T stored,
  /// MatMatMatMult, the same bits every run on the same ranks); levels 2 and below come
  /// from first_grid by the structured products as in SetGrid. Level 0 is smoothed by
  /// PETSc's SOR (Configure with FirstLevel::kUnstructured). Same errors as SetGrid.
  void SetFirstProlongation(PC pc, Mat A, Mat P0, const GridInfo& first_grid);
  /// Drops the levels of the last SetGrid or SetFirstProlongation (and the references they
  /// hold to its level-0 matrix), so that a new level-0 matrix is not made while the old one
  /// lives. After KSPReset of the KSP holding the PC. Rank-local.
  void Reset();
  /// Collective: the level-0 matrix A (the one given to SetGrid or SetFirstProlongation)
  /// has new values: forms every coarse operator again. Before the set-up of the KSP
  /// holding pc. Timed as GalerkinProduct.
  void SetOperator(Mat A);
  /// Collective: whether grid is, on every rank, the grid of the last SetGrid (the same
  /// nodes in the same PETSc order and numbering, the same dx), so that the hierarchy it
  /// made serves grid unchanged. False before the first SetGrid.
  bool SameGrid(const GridInfo& grid) const;

  int levels() const { return levels_; }
  /// The level count of the next Configure (>= 1), for a caller that decides it from its
  /// level 0 (a tet mesh's automatic levels); an option -<prefix>pc_mg_levels still wins.
  void SetLevels(int levels) { levels_ = levels; }
  /// Whether -<prefix>pc_mg_levels gave the level count (after Configure).
  bool levels_from_option() const { return levels_from_option_; }
  Embedding embedding() const { return embedding_; }
  /// Nodes of each level of the last SetGrid (level 0 first), over all ranks, and the
  /// fewest and most a rank owns (level 0 of SetFirstProlongation: 3 n_0 / 3 rows).
  struct LevelSize {
    PetscInt nodes = 0;
    PetscInt fewest_owned = 0;
    PetscInt most_owned = 0;
  };
  const std::vector<LevelSize>& level_sizes() const { return sizes_; }
  /// The operator (BAIJ) and grid of level m (a grid level: m >= 1 below an unstructured
  /// level 0), for tests; null when there is no such level.
  Mat LevelMatrix(int m) const;
  const GridInfo* LevelGrid(int m) const;
  /// Collective: the levels, embedding and, after a SetGrid, the level sizes.
  void View(PetscViewer viewer) const;

 private:
  struct GridLevel {
    std::unique_ptr<GridDirectory> directory;
    std::unique_ptr<GridOperator> op;
    std::unique_ptr<ColoredGaussSeidel> smoother;
    std::unique_ptr<GridGalerkinProduct> product;  // to the next coarser level
  };
  PetscErrorCode ReadOptions();
  /// Builds the grid levels from `grid` with operator A down to the coarsest; `above` is
  /// the number of levels above grid (0, or 1 below an unstructured level 0).
  void BuildGridLevels(PC pc, const GridInfo& grid, Mat A, int above);

  MPI_Comm comm_;
  std::string prefix_;
  int levels_;
  Embedding embedding_;
  std::string scene_path_;
  bool levels_from_option_ = false;
  FirstLevel first_ = FirstLevel::kGrid;
  std::vector<LevelSize> sizes_;
  std::vector<GridLevel> grid_levels_;  // finest grid level first
  GridInfo grid_;  ///< level 0 of the last SetGrid
  bool has_grid_ = false;
  // SetFirstProlongation: P0, R0 = P0^T, the product R0 A P0 (AIJ) and level 1 (BAIJ).
  OwnedMat first_P_, first_R_, first_product_, first_level_;
};

/// The phase of building the levels (prolongations, coarse patterns, smoothers) and
/// PETSc's set-up of the PCMG (smoothers, coarse solve): "HierarchyBuild".
extern const Phase kHierarchyBuildPhase;
/// The Galerkin products of SetOperator: "GalerkinProduct".
extern const Phase kGalerkinProductPhase;
/// Every application of a V-cycle (HOT's initializer, the embedded-grid multigrid of a tet
/// mesh as Newton's preconditioner or initializer): "VCycle".
extern const Phase kVCyclePhase;

}  // namespace optistep

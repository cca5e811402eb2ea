#pragma once
// Geometric multigrid on an MPM grid (HOT, Wang et al. 2020, Sec. 4): PETSc's PCMG with
// the prolongations of solvers/NodeEmbedding.hpp between the levels (level m has spacing
// 2^m dx) and Galerkin coarse operators H^(m+1) = P^T H^m P (HOT eq. 6), formed by PETSc
// (PCMGSetGalerkin) from the level-0 matrix the PC is given, as the triple product R H P
// with the restriction R = P^T stored (MatTranspose, PCMGSetRestriction; PCMG then calls
// MatMatMatMult). Not MatPtAP: PETSc 3.18's MPIAIJ MatPtAP (nonscalable, scalable) adds
// the rows other ranks send in the order the messages arrive, so on 3 or more ranks its
// coarse operators changed in the last bits from run to run; the triple product computes
// each rank's own rows from fetched rows, the same bits every run, and measured no slower
// (README "HOT"). The PC is an
// ordinary PETSc object under the caller's options prefix, so every PCMG parameter is an
// option (-<prefix>pc_mg_levels, -<prefix>mg_levels_ksp_type, -<prefix>mg_coarse_pc_type,
// ...; -help lists them). Defaults (set before the options are read, so options override):
//  - levels: the scene's solver.mg_levels (3, HOT Sec. 7.1, when the scene does not say),
//    or -<prefix>pc_mg_levels;
//  - embedding: solver.mg_embedding, or -<prefix>mg_embedding (linear, HOT Sec. 4);
//  - smoother on every level but the coarsest: one symmetric Gauss-Seidel sweep before and
//    one after the coarse correction (HOT Sec. 5.3, Alg. 2: it keeps the V-cycle symmetric
//    positive definite), as PETSc's Richardson with PCSOR: in parallel a rank-local
//    symmetric sweep inside block Jacobi over the ranks (SOR_LOCAL_SYMMETRIC_SWEEP);
//  - coarsest level: see GridMultigrid.cpp (kCoarse*), measured in README "Benchmarks";
//  - multiplicative V-cycle, one cycle per application.
// The hierarchy is remade for every new grid (SetGrid); PETSc forms the Galerkin products
// whenever the PC is set up with a new level-0 matrix. A caller whose next grid and level-0
// nonzero pattern are those of the last SetGrid (SameGrid, and the potential's
// HessianPatternIs) may keep the PC set up and only refill its level-0 matrix: PCMG then redoes the Galerkin products'
// numeric phase alone (MatMatMatMult with MAT_REUSE_MATRIX), with the same results.
#include <petscksp.h>

#include <string>
#include <vector>

#include "solvers/NodeEmbedding.hpp"

namespace optistep {

class GridMultigrid {
 public:
  /// levels and embedding: the scene's defaults (levels 0: HOT's 3); scene_path names the
  /// scene in messages.
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

  /// Collective: the prolongations of the grid levels below grid (spacing 2^k dx on level
  /// k below it), finest first, which the caller destroys: count - 1 of them, or, with
  /// count < 0, as many as it takes for a level to have at most coarsest_nodes nodes or
  /// until a level would not have fewer nodes than the one above. Appends the sizes of grid
  /// and the levels below it to level_sizes() (the caller clears it first). InputError
  /// naming solver.mg_levels (or the option) when a level of a fixed count would not have
  /// fewer nodes than the one above; level0 names the finest level in that message
  /// ("this step's MPM grid").
  std::vector<Mat> BuildLevelsBelow(const GridInfo& grid, int count, PetscInt coarsest_nodes,
                                    const std::string& level0);
  /// Collective: sets prolongations (finest first, from BuildLevelsBelow or the caller's)
  /// into pc, a PCMG with one level more than there are prolongations, and their transposes
  /// as the restrictions.
  static void SetProlongations(PC pc, const std::vector<Mat>& prolongations);

  /// The level count of the next Configure (>= 1), for a caller that decides it from its
  /// hierarchy (the tet mesh's embedded grid); an option -<prefix>pc_mg_levels still wins.
  void SetLevels(int levels) { levels_ = levels; }
  /// Whether -<prefix>pc_mg_levels gave the level count (after Configure).
  bool levels_from_option() const { return levels_from_option_; }
  /// Level sizes of a level that is not a grid (the tet mesh), for level_sizes(): appended
  /// after clearing them. Collective.
  void StartLevelSizes(PetscInt n_global, PetscInt n_owned);

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
  void AppendLevelSize(PetscInt n_global, PetscInt n_owned);

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
/// Every application of a V-cycle (HOT's initializer, the embedded-grid multigrid of a tet
/// mesh as Newton's preconditioner): "VCycle".
extern const Phase kVCyclePhase;

}  // namespace optistep

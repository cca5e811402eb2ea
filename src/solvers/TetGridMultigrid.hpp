#pragma once
// Galerkin multigrid for tet meshes on embedded grids (Xian, Tong, Liu 2019, "A Scalable
// Galerkin Multigrid Method for Real-time Simulation of Deformable Objects", ACM TOG 38(6)
// 162): level 0 the mesh, level 1 a regular grid over each body at rest whose prolongation
// is trilinear (solvers/TetGridEmbedding.hpp), the levels below HOT's grid levels. The
// hierarchy is HOT's GridMultigrid with an unstructured level 0 (SetFirstProlongation):
// level 1 = P0^T H P0 by PETSc's triple product, the levels below by the embedding's
// stencil, every grid level BAIJ and smoothed by HOT's colored Gauss-Seidel, level 0 by
// PETSc's rank-local symmetric SOR. Its options are GridMultigrid's under the caller's
// prefix plus -<prefix>mg_grid_ratio and -<prefix>mg_coarse_update (-help lists them).
// Contract: levels automatic unless given (coarsest at most kCoarsestNodes nodes);
// coarsest level an exact redundant LU on every rank, so the V-cycle is a fixed SPD
// operator; prolongations built once per run, Galerkin products and the LU refilled
// numerically while the Hessian's nonzero pattern holds, formed again when it changes.
// The same mesh on the same ranks gives the same bits.
// The method, the defaults and their sources, the limits: docs/methods/multigrid.md.
#include <petscksp.h>

#include <string>
#include <vector>

#include "core/PetscHandles.hpp"
#include "io/SceneSections.hpp"
#include "solvers/GridMultigrid.hpp"

namespace optistep {

class TetGridMultigrid {
 public:
  /// Collective on comm: Create, with the scene's solver.mg_levels (0: automatic) and
  /// solver.mg_embedding (for the grid levels below the first) as defaults; prefix: the
  /// options prefix of the PC.
  /// newton: the solves have several Hessians each (-<prefix>mg_coarse_update applies).
  TetGridMultigrid(MPI_Comm comm, std::string prefix, const SolverConfig& config, bool newton = false);
  ~TetGridMultigrid();
  TetGridMultigrid(const TetGridMultigrid&) = delete;
  TetGridMultigrid& operator=(const TetGridMultigrid&) = delete;

  /// Collective, before the options of the KSP holding pc are read: reads
  /// -<prefix>mg_grid_ratio (InputError naming it for a value <= 1), makes pc a PCMG with
  /// the defaults above (levels provisional until the mesh is known).
  void Configure(PC pc);
  /// Collective: Newton's preconditioner (-newton_pc_type mg on FEM), a PCSHELL whose
  /// application is one V-cycle of a PCMG of this multigrid under the same prefix, timed as
  /// VCycle. CreateInner, before the options of the KSP holding the shell are read, makes
  /// the PCMG and reads its options (so that -help lists them under the prefix); WrapAsShell,
  /// after them, makes outer (that KSP's PC) the shell. SetUp(inner_pc(), ...) sets it up.
  void CreateInner();
  void WrapAsShell(PC outer);
  /// The PCMG behind WrapAsShell's shell.
  PC inner_pc() const { return inner_; }
  /// Collective, once per Hessian: at the first call the hierarchy from potential.Nodes()
  /// (InputError if the potential has none: not FEM; naming the key or option when the mesh
  /// cannot coarsen to the levels asked for, or -<prefix>mg_grid_ratio when the first grid
  /// would not have fewer nodes than the mesh); then H (AIJ, else InputError naming
  /// -hessian_mat_type) as level 0 and PETSc's set-up of pc (Galerkin products, smoothers,
  /// coarsest factorization), only the numeric phases while H's nonzero pattern is that of
  /// the last call.
  /// first: H is the first Hessian of a solve (a time step's); with -<prefix>mg_coarse_update
  /// step, the coarse levels are formed from that one alone and kept through the solve's
  /// later Hessians (the finest level's smoother always sees H as it is: the same matrix,
  /// refilled).
  void SetUp(PC pc, IncrementalPotential& potential, Mat H, bool first = true);
  /// Collective: levels, the first grid's spacing, the level sizes.
  void View(PetscViewer viewer) const;

  /// Level sizes (level 0 the mesh), after the first SetUp.
  const std::vector<GridMultigrid::LevelSize>& level_sizes() const { return multigrid_.level_sizes(); }
  /// SetUps that formed the hierarchy's products symbolically (the first, and one after
  /// every change of H's nonzero pattern), and those that refilled them numerically.
  int symbolic_setups() const { return symbolic_; }
  int numeric_setups() const { return numeric_; }
  /// SetUps that kept the coarse levels of an earlier Hessian (-<prefix>mg_coarse_update step).
  int lagged_setups() const { return lagged_; }
  /// The first grid's spacing h (m), after the first SetUp.
  double grid_spacing() const { return h_; }

 private:
  PetscErrorCode ReadOptions();
  void BuildHierarchy(PC pc, IncrementalPotential& potential, Mat H);
  /// Automatic levels: 2 plus the grid levels below first_grid until one has at most
  /// kCoarsestNodes nodes or stops shrinking. Collective.
  int AutomaticLevels(const GridInfo& first_grid) const;
  /// Sets this multigrid's coarsest-level defaults on pc (a PCMG with its levels).
  void ConfigureCoarsest(PC pc);

  MPI_Comm comm_;
  std::string prefix_;
  std::string scene_path_;
  bool automatic_levels_;
  bool newton_;
  double ratio_;
  /// The coarse levels from every Hessian ("iteration") or from a solve's first ("step").
  std::string coarse_update_ = "iteration";
  double h_ = 0.0;
  GridMultigrid multigrid_;
  OwnedMat P0_;                     ///< from the first grid to the mesh (null: one level)
  GridInfo first_grid_;             ///< level 1
  PetscObjectState pattern_ = -1;   ///< H's nonzero state at the last SetUp
  PetscObjectId last_id_ = 0;       ///< H's id at the last SetUp
  bool built_ = false;
  OwnedPc inner_;
  int symbolic_ = 0, numeric_ = 0, lagged_ = 0;
};

}  // namespace optistep

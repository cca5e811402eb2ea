#pragma once
// HOT's initializer (Wang, Li, Fang, Zhang, Gao, Tang, Kaufman, Jiang 2020, Alg. 2-3):
// H0^-1 of L-BFGS is one V-cycle of a Galerkin multigrid on the MPM grid
// (solvers/GridMultigrid.hpp), built once per time step at the step's start from the
// SPD-projected Hessian H(u0) with the constraints projected (level 0). Type "vcycle"
// (solver.initializer, -<minimizer>initializer; the default of solver.method: hot). The
// V-cycle is a PETSc KSP (KSPPREONLY) whose PC is PCMG, under the options prefix "hot_":
// -hot_pc_mg_levels, -hot_mg_embedding, -hot_mg_levels_ksp_type, -hot_mg_levels_pc_type,
// -hot_mg_coarse_ksp_type, -hot_mg_coarse_pc_type, ... (-help lists them).
//
// Not positive definite. Every application checks the curvature q^T V q of the vector it
// is applied to; if it is not positive (a divergent smoother, an indefinite coarse solve),
// the V-cycle is no inverse Hessian: rank 0 prints one warning line and, for the rest of
// the step, H0^-1 is the PN-PCG solve instead, CG on the same level-0 Hessian
// preconditioned by its inverse 3x3 diagonal blocks to relative tolerance 1/2 (HOT's
// PN-PCG linear solve and forcing bound; LBFGS-H's initializer), a KSP under the prefix
// "hot_fallback_". The application that found it is redone with that solve, so with an
// empty L-BFGS history the direction is PN-PCG's. The next step builds a new V-cycle.
//
// Reuse across steps. While the grid (nodes, numbering) and the Hessian's nonzero pattern
// (IncrementalPotential::HessianPatternIs) stay those of the last SetUp on every rank,
// SetUp keeps the hierarchy: the prolongations, the level-0 matrix (refilled in place by
// the potential) and the coarse matrices, whose Galerkin products PETSc
// forms again by their numeric phase alone (MatMatMatMult, MAT_REUSE_MATRIX). The V-cycle is
// bitwise that of a new hierarchy (tests/test_hot_multigrid.cpp), so nothing of it needs
// to be in a checkpoint.
//
// Requires the assembled level-0 Hessian (Galerkin products): mpm.matrix_free is refused
// (InputError naming it), and HessianType() asks for MATAIJ (PETSc 3.18's triple products
// do not take BAIJ);
// -hessian_mat_type overrides.
//
// On a tet mesh (FEM: solver.method lbfgs with solver.initializer vcycle) the V-cycle is
// that of the embedded-grid multigrid (solvers/TetGridMultigrid.hpp) under the options
// prefix "vcycle_" (-vcycle_pc_mg_levels, -vcycle_mg_grid_ratio, -vcycle_mg_levels_*,
// -vcycle_mg_coarse_*; the fallback's "vcycle_fallback_"): its prolongations built at the
// first step and kept for the run, its Galerkin products refilled numerically at every
// step's start while the Hessian's pattern holds.
#include <memory>

#include "solvers/GridMultigrid.hpp"
#include "solvers/Initializer.hpp"
#include "solvers/TetGridMultigrid.hpp"

namespace optistep {

class MultigridInitializer : public InverseHessianInitializer {
 public:
  /// Collective on comm: Create, with the scene's solver.mg_levels and solver.mg_embedding
  /// as the defaults of the V-cycle's options; defaults.grid: HOT's grid multigrid (MPM),
  /// else the embedded-grid one (FEM).
  MultigridInitializer(MPI_Comm comm, const SolverConfig& config, const MinimizerDefaults& defaults);
  ~MultigridInitializer() override;

  const char* Type() const override { return "vcycle"; }
  const char* HessianType() const override { return MATAIJ; }
  void SetFromOptions() override;
  /// Collective: H(u0), the hierarchy below it and PETSc's set-up of the V-cycle (the
  /// Galerkin products), timed as HierarchyBuild. InputError if the potential has neither
  /// a grid (MPM) nor a tet mesh (FEM), its Hessian is not assembled (mpm.matrix_free) or
  /// the grid or mesh cannot be coarsened to the requested levels.
  void SetUp(IncrementalPotential& potential, Vec u0) override;
  /// Collective: r = V q, one V-cycle (timed as VCycle); the PN-PCG solve instead once a
  /// V-cycle was found not positive definite this step. Returns the coarsest level's (or
  /// the fallback's) Krylov iterations.
  int Apply(Vec q, Vec r) override;
  void View(PetscViewer viewer) const override;

  /// The V-cycle's KSP (KSPPREONLY with PCMG), for tests.
  KSP ksp() const { return ksp_; }
  /// Whether this step fell back to the PN-PCG solve.
  bool fell_back() const { return fell_back_; }
  /// How many SetUps built a new hierarchy, and how many kept the last one (the same grid
  /// and Hessian nonzero pattern: only the Galerkin products' numeric phase redone).
  int hierarchies_built() const { return built_; }
  int hierarchies_reused() const { return reused_; }

 private:
  MPI_Comm comm_;
  std::string prefix_;
  std::string fallback_prefix_;
  GridMultigrid multigrid_;
  /// FEM: the embedded-grid multigrid (multigrid_ unused).
  std::unique_ptr<TetGridMultigrid> tet_multigrid_;
  KSP ksp_ = nullptr;
  KSP fallback_ = nullptr;
  Mat H_ = nullptr;
  bool fell_back_ = false;
  int built_ = 0, reused_ = 0;  // hierarchies built and reused, for -info
};

}  // namespace optistep

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
// the potential), the coarse matrices and the smoothers' structure; only the Galerkin
// products are formed again (GridMultigrid::SetOperator). The V-cycle is bitwise that of a
// new hierarchy (tests/test_hot_multigrid.cpp), so nothing of it needs to be in a
// checkpoint.
//
// Requires the assembled level-0 Hessian in 3x3 blocks: mpm.matrix_free is refused
// (InputError naming it), and HessianType() asks for MATBAIJ (the MPM default);
// -hessian_mat_type aij is refused, naming the option.
#include "solvers/GridMultigrid.hpp"
#include "solvers/Initializer.hpp"

namespace optistep {

extern const Phase kVCyclePhase;  ///< every V-cycle application

class MultigridInitializer : public InverseHessianInitializer {
 public:
  /// Collective on comm: Create, with the scene's solver.mg_levels and solver.mg_embedding
  /// as the defaults of the V-cycle's options.
  MultigridInitializer(MPI_Comm comm, const SolverConfig& config);
  ~MultigridInitializer() override;

  const char* Type() const override { return "vcycle"; }
  const char* HessianType() const override { return MATBAIJ; }
  void SetFromOptions() override;
  /// Collective: H(u0), the hierarchy below it and PETSc's set-up of the V-cycle (the
  /// Galerkin products), timed as HierarchyBuild. InputError if the potential has no grid
  /// (FEM), its Hessian is not assembled (mpm.matrix_free) or the grid cannot be coarsened
  /// to the requested levels.
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
  /// and Hessian nonzero pattern: only the Galerkin products redone).
  int hierarchies_built() const { return built_; }
  int hierarchies_reused() const { return reused_; }

 private:
  MPI_Comm comm_;
  GridMultigrid multigrid_;
  KSP ksp_ = nullptr;
  KSP fallback_ = nullptr;
  Mat H_ = nullptr;
  bool fell_back_ = false;
  int built_ = 0, reused_ = 0;  // hierarchies built and reused, for -info
};

}  // namespace optistep

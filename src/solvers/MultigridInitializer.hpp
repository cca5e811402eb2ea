#pragma once
// HOT's initializer (Wang, Li, Fang, Zhang, Gao, Tang, Kaufman, Jiang 2020, Algs. 2-3): H0^-1
// of L-BFGS is one V-cycle of a Galerkin multigrid on the MPM grid
// (solvers/GridMultigrid.hpp), built once per time step from the SPD-projected Hessian with
// the constraints projected. Type "vcycle" (the default of solver.method: hot); a KSP
// (preonly) with PC PCMG under the options prefix "hot_".
// Contract: an application whose curvature q^T V q is not positive prints one warning line
// and switches the rest of the step to the PN-PCG solve (prefix "hot_fallback_"); while the
// grid and the Hessian's pattern are unchanged the hierarchy is kept and gives bitwise the
// V-cycle of a new one, so nothing needs to be in a checkpoint. Needs the assembled level-0
// Hessian in 3x3 blocks: mpm.matrix_free is an InputError, HessianType() asks for MATBAIJ
// and -hessian_mat_type aij is refused, naming the option.
// On a tet mesh (FEM) the V-cycle is the embedded-grid multigrid's (solvers/TetGridMultigrid.hpp),
// prefix "vcycle_" (fallback "vcycle_fallback_"), its first prolongation kept for the run;
// it asks for an AIJ Hessian (PETSc's triple product forms its first coarse level).
// The V-cycle, the fallback, the reuse and the limits: docs/methods/hot.md.
#include <memory>

#include "core/PetscHandles.hpp"
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
  const char* HessianType() const override { return tet_multigrid_ ? MATAIJ : MATBAIJ; }
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
  /// and Hessian nonzero pattern: only the Galerkin products redone).
  int hierarchies_built() const { return built_; }
  int hierarchies_reused() const { return reused_; }

 private:
  MPI_Comm comm_;
  std::string prefix_;
  std::string fallback_prefix_;
  GridMultigrid multigrid_;
  /// FEM: the embedded-grid multigrid (multigrid_ unused).
  std::unique_ptr<TetGridMultigrid> tet_multigrid_;
  OwnedKsp ksp_;
  OwnedKsp fallback_;
  OwnedMat H_;
  bool fell_back_ = false;
  int built_ = 0, reused_ = 0;  // hierarchies built and reused, for -info
};

}  // namespace optistep

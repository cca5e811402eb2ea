#pragma once
// Projected Newton with line search (PN-PCG), Gast, Schroeder, Stomakhin, Jiang, Teran
// 2015, "Optimization Integrator for Large Time Steps", Sec. 3.1:
//  - Newton direction from KSP (CG by default; the discretization's preconditioner: Jacobi
//    for FEM, point-block Jacobi for MPM as HOT's PN-PCG) started at zero, with the
//    adaptive forcing term rtol = min(1/2, sigma sqrt(max(|g|, floor))), |g| measured per
//    solver.forcing: the Euclidean norm (floor tau), eps times the CN residual (floor eps:
//    the gradient in characteristic-force units) or sqrt(g^T B g) with B the
//    preconditioner (floor the norm of the CN tolerances; HOT Sec. 5.3, CG then stops on
//    its natural norm); CG stops early on indefiniteness and returns its last iterate
//    (-g if it fails on the first iteration);
//  - downhill check: if -g.d < kappa |g| |d| the direction is replaced by -g (kappa = 1e-2;
//    MPM scenes 1e-5, HOT's reference code);
//  - step clamp: |d| <= l (l = 1e3);
//  - the shared strong-Wolfe line search from alpha = 1 (solvers/LineSearch.hpp);
//  - the shared termination (solvers/ConvergenceTest.hpp), after at least one iteration.
// Options prefix "newton_" (README "Solver options"): -newton_max_it, -newton_termination,
// -newton_cn_epsilon, -newton_tau, -newton_kappa, -newton_step_clamp,
// -newton_forcing_sigma, -newton_forcing, -newton_monitor, -newton_view; the KSP's
// -newton_ksp_*, -newton_pc_*; the line search's -newton_tao_ls_*.
//
// PN-MGPCG (HOT, Wang et al. 2020, Sec. 7: the multigrid-preconditioned baseline): with
// the PC type mg (-newton_pc_type mg, or solver.method: newton_mg, whose default PC it is)
// the preconditioner is the grid multigrid of HOT (solvers/GridMultigrid.hpp, options
// -newton_pc_mg_levels, -newton_mg_embedding, -newton_mg_levels_*, -newton_mg_coarse_*):
// levels built once per step from IncrementalPotential::Grid() (MPM only), Galerkin coarse
// operators formed again from every Newton iteration's Hessian (timed as HierarchyBuild).
#include <petscksp.h>

#include <memory>
#include <string>

#include "solvers/GridMultigrid.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

extern const Phase kLinearSolvePhase;

class NewtonMinimizer : public Minimizer {
 public:
  /// Collective on comm: Create. Defaults come from the scene's solver block and the
  /// discretization's defaults; call SetFromOptions and SetUp before Minimize. type:
  /// "newton" or "newton_mg" (the name; newton_mg's default PC is the grid multigrid).
  NewtonMinimizer(MPI_Comm comm, const SolverConfig& config, const MinimizerDefaults& defaults,
                  const std::string& type = "newton");
  ~NewtonMinimizer() override;

  const char* Type() const override { return type_.c_str(); }
  const char* HessianType() const override { return multigrid_ ? MATBAIJ : nullptr; }
  SolveReport Minimize(IncrementalPotential& potential, Vec u) override;

 private:
  PetscErrorCode AddOptions(PetscOptionItems* PetscOptionsObject) override;
  void SetUpObjects() override;
  void ViewMethod(PetscViewer viewer) const override;
  /// Collective. CG relative tolerance for the Newton direction at gradient g (after
  /// KSPSetOperators), per forcing_; scratch is a vector of g's layout that is overwritten.
  double ForcingTerm(Vec g, double gnorm, double cn, double tolerance_norm, Vec scratch);

  std::string type_;
  MinimizerDefaults defaults_;
  SolverConfig config_;
  /// The grid multigrid when the PC type is mg.
  std::unique_ptr<GridMultigrid> multigrid_;
  double kappa_;
  double step_clamp_;
  double forcing_sigma_;
  std::string forcing_;
  KSP ksp_ = nullptr;
};

}  // namespace optistep

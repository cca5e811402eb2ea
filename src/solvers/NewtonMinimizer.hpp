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
#include <petscksp.h>

#include <string>

#include "solvers/Minimizer.hpp"

namespace optistep {

extern const Phase kLinearSolvePhase;

class NewtonMinimizer : public Minimizer {
 public:
  /// Collective on comm: Create. Defaults come from the scene's solver block and the
  /// discretization's defaults; call SetFromOptions and SetUp before Minimize.
  NewtonMinimizer(MPI_Comm comm, const SolverConfig& config, const MinimizerDefaults& defaults);
  ~NewtonMinimizer() override;

  const char* Type() const override { return "newton"; }
  SolveReport Minimize(IncrementalPotential& potential, Vec u) override;

 private:
  PetscErrorCode AddOptions(PetscOptionItems* PetscOptionsObject) override;
  void SetUpObjects() override;
  void ViewMethod(PetscViewer viewer) const override;
  /// Collective. CG relative tolerance for the Newton direction at gradient g (after
  /// KSPSetOperators), per forcing_; scratch is a vector of g's layout that is overwritten.
  double ForcingTerm(Vec g, double gnorm, double cn, double tolerance_norm, Vec scratch);

  MinimizerDefaults defaults_;
  double kappa_;
  double step_clamp_;
  double forcing_sigma_;
  std::string forcing_;
  KSP ksp_ = nullptr;
};

}  // namespace optistep

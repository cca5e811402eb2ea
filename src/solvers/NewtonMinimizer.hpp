#pragma once
// Projected Newton with line search (PN-PCG), Gast, Schroeder, Stomakhin, Jiang, Teran
// 2015, "Optimization Integrator for Large Time Steps", Sec. 3.1:
//  - Newton direction from KSP (CG by default; Jacobi PC, or the owner's default_pc, e.g.
//    point-block Jacobi for MPM as HOT's PN-PCG) started at zero, with the adaptive forcing
//    term rtol = min(1/2, sigma sqrt(max(|g|, floor))), |g| measured per solver.forcing:
//    the Euclidean norm (floor tau), eps times the CN residual (floor eps: the gradient in
//    characteristic-force units) or sqrt(g^T B g) with B the preconditioner (floor the
//    norm of the CN tolerances; HOT Sec. 5.3, CG then stops on its natural norm); CG stops
//    early on indefiniteness and returns its last iterate (-g if it fails on the first
//    iteration);
//  - at least one Newton iteration per solve;
//  - downhill check: if -g.d < kappa |g| |d| the direction is replaced by -g (kappa = 1e-2;
//    MPM scenes 1e-5, HOT's reference code);
//  - step clamp: |d| <= l (l = 1e3);
//  - a line search satisfying the strong Wolfe conditions that tries alpha = 1 first
//    (More-Thuente, PETSc's TaoLineSearch "more-thuente", c1 = 1e-4, c2 = 0.9);
//  - termination by the characteristic norm (node-wise, HOT Sec. 5.2; DOT Sec. 6):
//    sum_i |g_i|^2 / tol_i^2 < n_nodes; or Gast's absolute |g| < tau.
// Options prefix "newton_": -newton_ksp_type, -newton_pc_type, -newton_tao_ls_type, and
// -newton_max_it, -newton_kappa, -newton_step_clamp, -newton_forcing_sigma, -newton_forcing,
// -newton_tau, -newton_absolute_tau, -newton_monitor. The CN epsilon is the scene's
// solver.cn_epsilon (--set solver.cn_epsilon=...), since the potential forms tol_i.
#include <petscksp.h>
#include <petsctao.h>

#include <string>

#include "io/SceneConfig.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

class NewtonMinimizer : public Minimizer {
 public:
  /// Collective on comm. Defaults come from the scene's solver block and default_pc (the
  /// CG preconditioner); the PETSc options database (prefix newton_) overrides them.
  /// Throws InputError for an unknown -newton_forcing.
  NewtonMinimizer(MPI_Comm comm, const SolverConfig& config, PCType default_pc = PCJACOBI);
  ~NewtonMinimizer() override;
  NewtonMinimizer(const NewtonMinimizer&) = delete;
  NewtonMinimizer& operator=(const NewtonMinimizer&) = delete;

  /// Collective. u: start on entry, minimizer on return (when converged; otherwise the
  /// last accepted iterate). Never returns NaN in u: a NaN energy stops with reason "NaN".
  SolveReport Minimize(IncrementalPotential& potential, Vec u) override;

  /// CN residual sqrt(sum_i |g_i|^2 / tol_i^2 / n_nodes) of g with tolerances w.
  static double CharacteristicNormResidual(Vec g, Vec w, PetscInt n_nodes, Vec work);

 private:
  bool Converged(double gnorm, double cn_residual) const;
  /// Collective. CG relative tolerance for the Newton direction at gradient g (after
  /// KSPSetOperators), per forcing_; tolerance_norm is the finite norm of the CN
  /// tolerances, scratch a vector of g's layout that is overwritten.
  double ForcingTerm(Vec g, double gnorm, double cn, double tolerance_norm, Vec scratch);
  /// Collective. Euclidean norm of w's finite entries.
  double FiniteNorm(Vec w);
  void CreateLineSearch();

  MPI_Comm comm_;
  bool use_cn_ = true;
  double tau_;
  double cn_epsilon_;
  int max_iterations_;
  double kappa_;
  double step_clamp_;
  double forcing_sigma_;
  std::string forcing_;
  PetscBool monitor_ = PETSC_FALSE;
  KSP ksp_ = nullptr;
  TaoLineSearch line_search_ = nullptr;
  PetscInt last_local_size_ = -1;
};

}  // namespace optistep

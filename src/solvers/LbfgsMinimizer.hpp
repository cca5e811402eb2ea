#pragma once
// Limited-memory BFGS over the incremental potential, the outer loop of HOT (Wang et al.
// 2020, Alg. 3) and DOT (Li et al. 2019, Alg. 1): per iteration the two-loop recursion
// (Nocedal & Wright 2006, Alg. 7.4) over the last m pairs (s, y) with the initializer H0^-1
// (solvers/Initializer.hpp) between the loops, the direction projected onto the
// constraints (IncrementalPotential::Project), then the shared line search from alpha = 1
// and the shared termination, after at least one iteration. Pairs with s^T y <= 0 are
// skipped; the history starts empty every time step and the initializer is set up once
// per step at the start, so nothing crosses steps (checkpoints hold no L-BFGS state).
//
// The recursion is ours, not PETSc's MATLMVMBFGS: PETSc 3.18 rejects pairs with
// s^T y <= eps s^T s (a tolerance with units, since s and y = grad E differences differ in
// units) and clears the whole history after m/2 consecutive rejections (a fixed watchdog),
// where the papers skip exactly the pairs with s^T y <= 0 and keep the rest.
//
// If a direction is not a descent direction (a nonlinear initializer, or round-off), the
// history is dropped and H0^-1 (-g) tried; failing that, -g.
//
// Window m (solver.window, -lbfgs_window): 8 for MPM (HOT Sec. 7.1), 5 for FEM (DOT's
// code). Options prefix "lbfgs_": -lbfgs_max_it, -lbfgs_termination, -lbfgs_cn_epsilon,
// -lbfgs_tau, -lbfgs_window, -lbfgs_initializer, -lbfgs_monitor, -lbfgs_view, the line
// search's -lbfgs_tao_ls_*, and the initializer's own (-lbfgsh_ksp_*, -lbfgsh_pc_*).
//
// HOT (solver.method: hot; Wang et al. 2020, Alg. 3) is this minimizer under the name and
// options prefix "hot_" (-hot_window, -hot_max_it, -hot_monitor, ...) whose initializer is
// by default the V-cycle (solvers/MultigridInitializer.hpp, also prefix "hot_").
#include <memory>
#include <string>
#include <vector>

#include "solvers/Initializer.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

class LbfgsMinimizer : public Minimizer {
 public:
  /// Collective on comm: Create, with the scene's solver block (window, initializer, ...)
  /// and the discretization's defaults as the defaults. type: "lbfgs" or "hot" (the name
  /// and options prefix; hot's initializer defaults to "vcycle", lbfgs's to
  /// "lagged_hessian", when solver.initializer is not given).
  LbfgsMinimizer(MPI_Comm comm, const SolverConfig& config, const MinimizerDefaults& defaults,
                 const std::string& type = "lbfgs");
  ~LbfgsMinimizer() override;

  const char* Type() const override { return type_.c_str(); }
  const char* HessianType() const override { return initializer_ ? initializer_->HessianType() : nullptr; }
  SolveReport Minimize(IncrementalPotential& potential, Vec u) override;

 private:
  PetscErrorCode AddOptions(PetscOptionItems* PetscOptionsObject) override;
  void SetUpObjects() override;
  void ViewMethod(PetscViewer viewer) const override;
  /// Collective: d = -H g by the two-loop recursion over the stored pairs, with H0^-1
  /// between the loops; adds the initializer's inner iterations to *inner.
  void Direction(Vec g, Vec d, int* inner);
  void ClearHistory();

  std::string type_;
  MinimizerDefaults defaults_;
  SolverConfig config_;
  int window_;
  std::string initializer_type_;
  std::unique_ptr<InverseHessianInitializer> initializer_;
  std::vector<Vec> s_, y_;    ///< the pairs, oldest first
  std::vector<double> rho_;   ///< 1 / (y^T s) per pair
  Vec q_ = nullptr;           ///< recursion work vector
};

}  // namespace optistep

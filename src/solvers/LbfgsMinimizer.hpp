#pragma once
// Limited-memory BFGS over the incremental potential, the outer loop of HOT (Wang et al.
// 2020, Alg. 3) and DOT (Li et al. 2019, Alg. 1): per iteration the two-loop recursion
// (Nocedal & Wright 2006, Alg. 7.4) over the last m pairs (s, y), pairs with s^T y <= 0
// skipped, the initializer H0^-1 (solvers/Initializer.hpp) between the loops, the direction
// projected onto the constraints, the shared line search and termination, after at least
// one iteration. The recursion is ours, not PETSc's MATLMVMBFGS (whose pair rejection and
// history reset differ from the papers').
// Three methods are this class (LbfgsMethod): lbfgs (prefix "lbfgs_"), hot (prefix "hot_",
// the V-cycle initializer) and dot (prefix "dot_", the subdomain initializer and DOT's
// backtracking line search from its lagged-Hessian step length).
// Refresh (ours, -<prefix>refresh_*): within a step H0^-1 is set up again at the current
// iterate and the history cleared when the penalty contacts change, the residual stalls or
// the cap is reached (on for dot, off for lbfgs and hot).
// Contract: the history starts empty every time step and the initializer is set up once per
// step (or refreshed as above); only DOT's factors lagged across steps outlive a step, and
// checkpoints hold them.
// The method, the initializers, the refresh and the window's sources: docs/methods/lbfgs.md.
#include <memory>
#include <string>
#include <vector>

#include "core/PetscHandles.hpp"
#include "solvers/Initializer.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

/// What tells the methods built on LbfgsMinimizer apart: their defaults.
struct LbfgsMethod {
  std::string type;         ///< the method's name (solver.method, the step line, stats.csv)
  std::string prefix;       ///< options prefix
  std::string title;        ///< heading of -help
  std::string initializer;  ///< H0^-1 (InitializerTypes()) unless -<prefix>initializer
  const char* line_search;  ///< TaoLineSearch type unless -<prefix>tao_ls_type
  /// First step length tried: "unit" (alpha = 1) or "lagged_hessian" (DOT's
  /// clamp(-d^T g / d^T H d, 0.1, 1)) unless -<prefix>initial_step.
  std::string initial_step;

  /// L-BFGS (HOT Alg. 3, DOT Alg. 1) with the scene's solver.initializer (LBFGS-H by default).
  static LbfgsMethod Lbfgs(const SolverConfig& config);
  /// HOT (Wang et al. 2020, Alg. 3): the V-cycle initializer unless solver.initializer.
  static LbfgsMethod Hot(const SolverConfig& config);
  /// DOT (Li et al. 2019): subdomain back-solves, armijo from the lagged-Hessian step.
  static LbfgsMethod Dot();

  /// Refresh defaults (-<prefix>refresh_*; see the header comment): off unless set here.
  bool refresh_contacts = false;
  double refresh_contacts_fraction = 0.0;
  double refresh_stall = 0.0;
  bool refresh_at_cap = false;
};

class LbfgsMinimizer : public Minimizer {
 public:
  /// Collective on comm: Create, with the scene's solver block (window, initializer, ...)
  /// and the discretization's defaults as the defaults; method: lbfgs, hot or dot.
  LbfgsMinimizer(MPI_Comm comm, const SolverConfig& config, const MinimizerDefaults& defaults,
                 const LbfgsMethod& method);
  ~LbfgsMinimizer() override;

  const char* Type() const override { return type_.c_str(); }
  const char* HessianType() const override { return initializer_ ? initializer_->HessianType() : nullptr; }
  /// The initializer, for tests and diagnostics (after SetUp).
  InverseHessianInitializer& initializer() { return *initializer_; }
  SolveReport Minimize(IncrementalPotential& potential, Vec u) override;
  /// "refreshes" when a refresh trigger is on.
  std::vector<std::string> StatsColumns() const override;
  /// step.refreshes, the step's refreshes of H0^-1 over all its solves.
  std::vector<double> StatsValues(const SolveReport& step) const override;
  void SaveState(CheckpointWriter& out) override;
  void LoadState(const CheckpointReader& in, bool same_ranks) override;

 private:
  PetscErrorCode AddOptions(PetscOptionItems* PetscOptionsObject) override;
  void SetUpObjects() override;
  void ViewMethod(PetscViewer viewer) const override;
  /// Collective: d = -H g by the two-loop recursion over the stored pairs, with H0^-1
  /// between the loops; adds the initializer's inner iterations to *inner.
  void Direction(Vec g, Vec d, int* inner);
  /// Collective: the step length the line search tries first along d from gradient g
  /// (initial_step_; gd = g^T d < 0).
  double InitialStep(Vec d, double gd);
  void ClearHistory();
  /// Collective: H0^-1 set up again at u within the solve (why: for -<prefix>monitor);
  /// clears the history.
  void Refresh(IncrementalPotential& potential, Vec u, const char* why, SolveReport* report);
  bool Refreshing() const { return refresh_contacts_ || refresh_stall_ > 0.0 || refresh_at_cap_; }

  SolverConfig config_;
  MinimizerDefaults defaults_;
  std::string type_;
  int window_;
  std::string initializer_type_;
  std::string initial_step_;
  std::unique_ptr<InverseHessianInitializer> initializer_;
  PetscBool refresh_contacts_ = PETSC_FALSE;  ///< -<prefix>refresh_contacts
  double refresh_contacts_fraction_ = 0.0;    ///< -<prefix>refresh_contacts_fraction
  double refresh_stall_ = 0.0;                ///< -<prefix>refresh_stall (0: off)
  int refresh_stall_window_ = 5;              ///< -<prefix>refresh_stall_window
  PetscBool refresh_at_cap_ = PETSC_FALSE;    ///< -<prefix>refresh_at_cap
  int refresh_max_ = 4;                       ///< -<prefix>refresh_max
  std::vector<OwnedVec> s_, y_;  ///< the pairs, oldest first
  std::vector<double> rho_;   ///< 1 / (y^T s) per pair
  OwnedVec q_;                ///< recursion work vector
  OwnedVec Hd_;               ///< H d, for the lagged-Hessian initial step
};

}  // namespace optistep

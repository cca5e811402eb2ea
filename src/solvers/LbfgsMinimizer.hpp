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
// -lbfgs_tau, -lbfgs_window, -lbfgs_initializer, -lbfgs_initial_step, -lbfgs_monitor,
// -lbfgs_view, the line search's -lbfgs_tao_ls_*, and the initializer's own
// (-lbfgsh_ksp_*, -lbfgsh_pc_*; -lbfgspd_*; -dot_*; -hot_*).
//
// Three methods are this class (LbfgsMethod): lbfgs (LBFGS-H by default, the strong-Wolfe
// search from alpha = 1); hot (HOT, Wang et al. 2020, Alg. 3: the same search, whose
// initializer is by default the V-cycle, solvers/MultigridInitializer.hpp; options prefix
// "hot_": -hot_window, -hot_max_it, -hot_monitor, ...); and dot (DOT, Li et al. 2019: the
// subdomain initializer, solvers/SubdomainInitializer.hpp, and DOT's line search:
// backtracking (armijo) from alpha0 = clamp(-d^T g / d^T H d, 0.1, 1) with H the lagged
// Hessian, as DOT's code does (Optimizer::initStepSize with ALPHAINIT, then halving on E),
// options prefix "dot_"). DOT's code accepts any decrease of E (Optimizer::lineSearch,
// armijoParam 0); PETSc's armijo asks for 1e-4 alpha g^T d of it (-dot_tao_ls_armijo_sigma).
//
// Refresh (ours; every method, options under its prefix): within a step, H0^-1 is set up
// again at the current iterate (InverseHessianInitializer::Refresh: the Hessian there; DOT
// refactors its subdomains) and the history cleared, then the solve goes on, when
//  - -<prefix>refresh_contacts: the penalty contacts (IncrementalPotential::PenaltyContacts)
//    that began or ended since H0^-1 was set up are more than -<prefix>refresh_contacts_fraction
//    of the current ones (with factors lagged across steps, the contacts at the lagged
//    point are compared at the step's start); a contact that begins within the step is
//    otherwise missing from the lagged Hessian (the cubic penalty's Hessian is 0 at
//    phi = 0), which no window of pairs learns. dot: 0.5 (measured on the elephant drop's
//    impact steps: refreshing at every change spends the refreshes on the first iterations,
//    whose contacts move at each iterate);
//  - -<prefix>refresh_stall r (0: off): the stall measure (the CN residual, or |g| with the
//    absolute termination) after an iteration is above r times its value
//    -<prefix>refresh_stall_window iterations before (counted from the last set-up);
//  - -<prefix>refresh_at_cap: the iteration cap is reached; the solve then gets another
//    -<prefix>max_it iterations (once) before it fails and the step is halved;
// at most -<prefix>refresh_max times per solve by contacts or stall, once more at the cap. Off for lbfgs and hot by default, on for
// dot; stats.csv then has a column `refreshes` (per accepted step).
#include <memory>
#include <string>
#include <vector>

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
  std::vector<double> StatsValues() const override;
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
  int last_refreshes_ = 0;                    ///< refreshes of the last solve
  std::vector<Vec> s_, y_;    ///< the pairs, oldest first
  std::vector<double> rho_;   ///< 1 / (y^T s) per pair
  Vec q_ = nullptr;           ///< recursion work vector
  Vec Hd_ = nullptr;          ///< H d, for the lagged-Hessian initial step
};

}  // namespace optistep

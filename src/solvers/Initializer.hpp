#pragma once
// The initial inverse Hessian H0^-1 of L-BFGS (the "initializer" of HOT, Wang et al. 2020,
// Alg. 3, and DOT, Li et al. 2019, Alg. 1): applied to the vector between the two loops of
// the recursion, set up once per time step at the step's start. PETSc-style: Create
// (CreateInitializer, solvers/InitializerFactory.hpp), SetFromOptions, SetUp(potential, u0)
// per step, Apply, View.
// Types (solver.initializer, -lbfgs_initializer; -dot_initializer): identity; lagged_hessian
// (LBFGS-H, KSP prefix "lbfgsh_"); jacobi; projective_dynamics (LBFGS-PD, Liu, Bouaziz,
// Kavan 2017, Sec. 4; prefix "lbfgspd_"; FEM); subdomains (DOT,
// solvers/SubdomainInitializer.hpp; FEM); vcycle (HOT, solvers/MultigridInitializer.hpp:
// on MPM HOT's grid multigrid, prefix "hot_"; on FEM the embedded-grid one, prefix "vcycle_").
// What each type solves, with its defaults and their sources: docs/methods/lbfgs.md.
#include <petscksp.h>

#include <memory>
#include <string>

#include "solvers/IncrementalPotential.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

class CheckpointReader;
class CheckpointWriter;

extern const Phase kInitializerSetUpPhase;  ///< once per step
extern const Phase kInitializerApplyPhase;  ///< every application

class InverseHessianInitializer {
 public:
  virtual ~InverseHessianInitializer() = default;
  /// The type as in solver.initializer.
  virtual const char* Type() const = 0;
  /// The Hessian storage the type needs (MATBAIJ for the grid multigrid, which reads 3x3 blocks), or null for the
  /// discretization's default; -hessian_mat_type overrides either.
  virtual const char* HessianType() const { return nullptr; }
  /// Collective: reads the type's own options (its KSP's prefix).
  virtual void SetFromOptions() {}
  /// Collective: builds H0^-1 for the step whose start is u0.
  virtual void SetUp(IncrementalPotential& potential, Vec u0) = 0;
  /// Collective: builds H0^-1 again at the iterate u of the step under way (L-BFGS's
  /// refresh, solvers/LbfgsMinimizer.hpp), whatever lagging SetUp would allow. The default
  /// is SetUp at u.
  virtual void Refresh(IncrementalPotential& potential, Vec u) { SetUp(potential, u); }
  /// After SetUp: the iterate whose Hessian H0^-1 holds when it may be an earlier step's
  /// (factors lagged across steps), else null (H0^-1 is this step's start's). L-BFGS's
  /// contact refresh compares the contacts there with those at the step's start.
  virtual Vec LaggedPoint() const { return nullptr; }
  /// Collective: writes the state that crosses steps (lagged factors) into a checkpoint,
  /// nothing when there is none (the default).
  virtual void SaveState(CheckpointWriter& out) { (void)out; }
  /// Collective: reads what SaveState wrote, to be used at the next SetUp; same_ranks:
  /// the checkpoint was written on this rank count and partition (otherwise the state is
  /// dropped and the next SetUp starts afresh). Reads everything before it keeps any of it.
  virtual void LoadState(const CheckpointReader& in, bool same_ranks) {
    (void)in;
    (void)same_ranks;
  }
  /// Collective: r = H0^-1 q (q and r of u's layout, r != q). Returns the inner (Krylov)
  /// iterations the application took.
  virtual int Apply(Vec q, Vec r) = 0;
  virtual void View(PetscViewer viewer) const = 0;
  /// The SPD-projected Hessian at the step's start when the initializer holds it
  /// (lagged_hessian, jacobi, subdomains; after SetUp), else null: what DOT's initial step
  /// length -p^T g / p^T H p needs (LbfgsMinimizer, initial_step lagged_hessian).
  virtual Mat LaggedHessian() const { return nullptr; }
};

/// Collective on comm: a KSP under the options prefix `prefix` that solves by one sparse
/// Cholesky factorization (preonly + cholesky by `package`, MATSOLVERMUMPS or
/// MATSOLVERCHOLMOD, unless -<prefix>pc_factor_mat_solver_type says otherwise), its options
/// read; InputError naming a bad option. The caller destroys it.
KSP CreateCholeskyKsp(MPI_Comm comm, const std::string& prefix, MatSolverType package);
/// Collective on ksp: r = A^-1 q by ksp; returns its iterations. SolveError if KSPSolve
/// raises an error (a zero pivot, -ksp_error_if_not_converged).
int SolveCountingIterations(KSP ksp, Vec q, Vec r);

}  // namespace optistep

#pragma once
// The initial inverse Hessian H0^-1 of L-BFGS (the "initializer" of HOT, Wang et al. 2020,
// Alg. 3, and DOT, Li et al. 2019, Alg. 1): applied to the vector between the two loops
// of the recursion, set up once per time step at the step's start. PETSc-style: Create
// (CreateInitializer), SetFromOptions, SetUp(potential, u0) per step, Apply, View.
//
// Types (solver.initializer, -lbfgs_initializer):
//  - identity: H0 = I.
//  - lagged_hessian (LBFGS-H, the baseline of the HOT and DOT papers): the SPD-projected
//    Hessian at the step's start, solved by a KSP under the options prefix "lbfgsh_":
//    Jacobi-PCG (FEM) / point-block-Jacobi PCG (MPM) to relative tolerance 1/2 (HOT's
//    inexact PCG ratio, reference code Configurations.h cgratio), or exactly by a
//    factorization: -lbfgsh_ksp_type preonly -lbfgsh_pc_type cholesky
//    [-lbfgsh_pc_factor_mat_solver_type mumps|cholmod].
//  - jacobi: the same lagged Hessian's (block) diagonal alone (preonly + the default PC).
//  - vcycle (HOT): one V-cycle of a Galerkin multigrid on the MPM grid
//    (solvers/MultigridInitializer.hpp), options prefix "hot_".
// DOT's subdomain back-solves will be a further type.
#include <petscksp.h>

#include <memory>
#include <string>

#include "solvers/IncrementalPotential.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

extern const Phase kInitializerSetUpPhase;  ///< once per step
extern const Phase kInitializerApplyPhase;  ///< every application

class InverseHessianInitializer {
 public:
  virtual ~InverseHessianInitializer() = default;
  /// The type as in solver.initializer.
  virtual const char* Type() const = 0;
  /// The Hessian storage the type needs (MATAIJ for MatPtAP), or null for the
  /// discretization's default; -hessian_mat_type overrides either.
  virtual const char* HessianType() const { return nullptr; }
  /// Collective: reads the type's own options (its KSP's prefix).
  virtual void SetFromOptions() {}
  /// Collective: builds H0^-1 for the step whose start is u0.
  virtual void SetUp(IncrementalPotential& potential, Vec u0) = 0;
  /// Collective: r = H0^-1 q (q and r of u's layout, r != q). Returns the inner (Krylov)
  /// iterations the application took.
  virtual int Apply(Vec q, Vec r) = 0;
  virtual void View(PetscViewer viewer) const = 0;
};

/// Collective on comm: the initializer named type ("identity", "jacobi",
/// "lagged_hessian", "vcycle"), with the scene's solver block and the discretization's
/// defaults; InputError naming `source` (the option or scene key) otherwise.
std::unique_ptr<InverseHessianInitializer> CreateInitializer(MPI_Comm comm, const std::string& type,
                                                             const SolverConfig& config,
                                                             const MinimizerDefaults& defaults,
                                                             const std::string& source);
/// The names CreateInitializer knows, for messages and -help.
const std::vector<std::string>& InitializerTypes();

}  // namespace optistep

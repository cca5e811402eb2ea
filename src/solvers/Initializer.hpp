#pragma once
// The initial inverse Hessian H0^-1 of L-BFGS (the "initializer" of HOT, Wang et al. 2020,
// Alg. 3, and DOT, Li et al. 2019, Alg. 1): applied to the vector between the two loops
// of the recursion, set up once per time step at the step's start. PETSc-style: Create
// (CreateInitializer, solvers/InitializerFactory.hpp), SetFromOptions, SetUp(potential, u0)
// per step, Apply, View.
//
// Types (solver.initializer, -lbfgs_initializer; -dot_initializer):
//  - identity: H0 = I.
//  - lagged_hessian (LBFGS-H, the baseline of the HOT and DOT papers): the SPD-projected
//    Hessian at the step's start, solved by a KSP under the options prefix "lbfgsh_":
//    Jacobi-PCG (FEM) / point-block-Jacobi PCG (MPM) to relative tolerance 1/2 (HOT's
//    inexact PCG ratio, reference code Configurations.h cgratio), or exactly by a
//    factorization: -lbfgsh_ksp_type preonly -lbfgsh_pc_type cholesky
//    [-lbfgsh_pc_factor_mat_solver_type mumps|cholmod] (solvers/LaggedHessianInitializer.hpp).
//  - jacobi: the same lagged Hessian's (block) diagonal alone (preonly + the default PC).
//  - projective_dynamics (LBFGS-PD, Liu, Bouaziz, Kavan 2017, Sec. 4; the DOT paper's
//    baseline): the rest-shape matrix M / dt^2 + L (IncrementalPotential::RestShapeMatrix),
//    factored once per run and again whenever dt changes (a halved step), under the options
//    prefix "lbfgspd_": preonly + Cholesky by MUMPS (-lbfgspd_pc_factor_mat_solver_type
//    cholmod on one rank; solvers/ProjectiveDynamicsInitializer.hpp). FEM only.
//  - subdomains (DOT, Li et al. 2019): rank-local subdomain back-solves of the lagged
//    Hessian, merged (solvers/SubdomainInitializer.hpp; options prefix "dot_"). FEM only.
//  - vcycle (HOT): one V-cycle of a Galerkin multigrid on the MPM grid
//    (solvers/MultigridInitializer.hpp), options prefix "hot_". MPM only.
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
  /// The Hessian storage the type needs (MATAIJ for Galerkin products), or null for the
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
/// Collective on ksp: r = A^-1 q by ksp; returns its iterations.
int SolveCountingIterations(KSP ksp, Vec q, Vec r);

}  // namespace optistep

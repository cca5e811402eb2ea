#pragma once
// When a minimization of an IncrementalPotential has converged, shared by every minimizer.
//
//  - "characteristic_norm" (default): node-wise characteristic norm (HOT, Wang et al. 2020,
//    Sec. 5.2, after DOT, Li et al. 2019, Sec. 6): sqrt(sum_i |g_i|^2 / tol_i^2 / n_nodes) < 1
//    with tol_i = epsilon s_i from the potential (IncrementalPotential::CharacteristicNormWeights).
//    epsilon belongs to the minimizer: the scene's solver.cn_epsilon, -<prefix>cn_epsilon.
//  - "absolute": |g|_2 < tau (Gast et al. 2015, Sec. 3.1), tau in the gradient's units.
//
// Every minimizer takes at least one iteration per solve: a start that meets the (RMS)
// characteristic norm can still be far off on a few nodes, and accepting it unchanged
// freezes slow motion (a slowly moving body whose inertia residual is below tolerance).
#include <petscvec.h>

#include <string>

#include "io/SceneConfig.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep {

class ConvergenceTest {
 public:
  /// Defaults from the scene's solver block (termination, cn_epsilon, tau).
  explicit ConvergenceTest(const SolverConfig& config);
  ~ConvergenceTest();
  ConvergenceTest(const ConvergenceTest&) = delete;
  ConvergenceTest& operator=(const ConvergenceTest&) = delete;

  /// Adds -<prefix>termination, -<prefix>cn_epsilon, -<prefix>tau to the minimizer's
  /// options block. Throws InputError for an unknown termination or a non-positive value.
  PetscErrorCode AddOptions(PetscOptionItems* PetscOptionsObject);

  /// Collective: the tolerances of this solve, for vectors of u's layout (called once per
  /// Minimize; the potential changes every step).
  void SetUp(IncrementalPotential& potential, Vec u);
  /// Collective: CN residual sqrt(sum_i |g_i|^2 / tol_i^2 / n_nodes) of g (< 1: converged).
  double Residual(Vec g);
  /// Whether a solve that has taken `iterations` outer iterations has converged, given
  /// |g|_2 and the CN residual.
  bool Converged(int iterations, double gradient_norm, double cn_residual) const;
  /// Collective: Euclidean norm of the finite tolerances (constrained nodes' +inf left
  /// out): the floor of Newton's preconditioned forcing term (HOT Sec. 5.3).
  double ToleranceNorm() const;
  /// The node-wise tolerances tol_i (valid after SetUp).
  Vec Tolerances() const { return w_; }

  bool characteristic_norm() const { return use_cn_; }
  double epsilon() const { return cn_epsilon_; }
  double tau() const { return tau_; }
  /// "termination characteristic_norm (epsilon 1e-05)" or "termination absolute (tau ...)".
  std::string Describe() const;

 private:
  bool use_cn_;
  double cn_epsilon_;
  double tau_;
  Vec w_ = nullptr;
  Vec work_ = nullptr;
  PetscInt n_nodes_ = 0;
};

}  // namespace optistep

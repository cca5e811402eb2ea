#pragma once
// When a minimization of an IncrementalPotential has converged, shared by every minimizer.
//
//  - "characteristic_norm" (default): node-wise characteristic norm (HOT, Wang et al. 2020,
//    Sec. 5.2, after DOT, Li et al. 2019, Sec. 6): sqrt(sum_i |g_i|^2 / tol_i^2 / n_nodes) < 1
//    with tol_i = epsilon s_i from the potential (IncrementalPotential::CharacteristicNormWeights).
//    epsilon belongs to the minimizer: the scene's solver.cn_epsilon, -<prefix>cn_epsilon.
//    With it, the rigid-motion test (ours): for every body no Dirichlet condition holds,
//    the net force and torque of the residual, relative to the body's weight and inertia,
//    below rigid_epsilon (IncrementalPotential::RigidMotionResidual; 1e-3 by default). The elastic CN scales with
//    the material's stiffness and cannot see an error in a stiff body's rigid motion:
//    elastic forces are internal and add nothing to the net force or torque, which also
//    keeps this test free of the round-off in very stiff elastic forces.
//  - "absolute": |g|_2 < tau (Gast et al. 2015, Sec. 3.1), tau in the gradient's units.
//
// Every minimizer takes at least one iteration per solve: a start that meets the (RMS)
// characteristic norm can still be far off on a few nodes, and accepting it unchanged
// freezes slow motion (a slowly moving body whose inertia residual is below tolerance).
#include <petscvec.h>

#include <string>

#include "core/PetscHandles.hpp"
#include "io/SceneSections.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep {

/// The measures of an iterate that the termination looks at.
struct Residual {
  double gradient_norm = 0.0;  ///< |g|_2, in the gradient's units
  double cn = 0.0;             ///< characteristic-norm residual; < 1 meets the CN test
  double rigid = 0.0;          ///< rigid-motion residual over rigid_epsilon; < 1 meets it (0: none)
};

class ConvergenceTest {
 public:
  /// Defaults from the scene's solver block (termination, cn_epsilon, rigid_epsilon, tau).
  explicit ConvergenceTest(const SolverConfig& config);
  ~ConvergenceTest();
  ConvergenceTest(const ConvergenceTest&) = delete;
  ConvergenceTest& operator=(const ConvergenceTest&) = delete;

  /// Adds -<prefix>termination, -<prefix>cn_epsilon, -<prefix>rigid_epsilon, -<prefix>tau
  /// to the minimizer's options block. Throws InputError for a non-positive value.
  PetscErrorCode AddOptions(PetscOptionItems* PetscOptionsObject);

  /// Collective: the tolerances of this solve, for vectors of u's layout (called once per
  /// Minimize; the potential changes every step).
  void SetUp(IncrementalPotential& potential, Vec u);
  /// Collective: the measures of the iterate u with gradient g: |g|_2, the CN residual
  /// sqrt(sum_i |g_i|^2 / tol_i^2 / n_nodes) and the rigid-motion residual over
  /// rigid_epsilon (both computed only with the characteristic-norm termination).
  Residual Measure(Vec u, Vec g);
  /// Whether the measures meet the test (characteristic norm and rigid motion, or |g| < tau).
  bool Met(const Residual& residual) const;
  /// Whether a solve that has taken `iterations` outer iterations has converged: after at
  /// least one, the measures meet the test.
  bool Converged(int iterations, const Residual& residual) const;
  /// The measures against the test, with the figures, for a failure message:
  /// "cn residual 6.4e-07 < 1 (met), rigid-motion residual 3.2 >= 1 (not met)" or
  /// "|g| 0.001 >= tau 1e-06 (not met)".
  std::string Explain(const Residual& residual) const;
  /// Collective: Euclidean norm of the finite tolerances (constrained nodes' +inf left
  /// out): the floor of Newton's preconditioned forcing term (HOT Sec. 5.3).
  double ToleranceNorm() const;
  /// The node-wise tolerances tol_i (valid after SetUp).
  Vec Tolerances() const { return w_; }

  bool characteristic_norm() const { return use_cn_; }
  double epsilon() const { return cn_epsilon_; }
  double rigid_epsilon() const { return rigid_epsilon_; }
  double tau() const { return tau_; }
  /// "termination characteristic_norm (epsilon 1e-05)" or "termination absolute (tau ...)".
  std::string Describe() const;

 private:
  bool use_cn_;
  double cn_epsilon_;
  double rigid_epsilon_;
  IncrementalPotential* potential_ = nullptr;
  double tau_;
  OwnedVec w_;
  OwnedVec work_;
  PetscInt n_nodes_ = 0;
};

}  // namespace optistep

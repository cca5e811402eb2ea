#pragma once
// A minimizer drives an IncrementalPotential from a start vector to a minimizer.
#include <petscvec.h>

#include <string>

#include "solvers/IncrementalPotential.hpp"

namespace optistep {

/// What one minimization did.
struct SolveReport {
  bool converged = false;
  int iterations = 0;         ///< outer (Newton / L-BFGS) iterations
  int linear_iterations = 0;  ///< inner Krylov iterations, summed
  double energy = 0.0;        ///< E at the returned iterate
  double cn_residual = 0.0;   ///< sqrt(sum_i |g_i|^2 / tol_i^2 / n_nodes); < 1 means converged
  double gradient_norm = 0.0; ///< |g|_2 at the returned iterate
  std::string reason;         ///< "converged", "line search found no decrease", "NaN", ...
};

class Minimizer {
 public:
  virtual ~Minimizer() = default;
  /// Minimizes E starting from u, which holds the result on return. Collective.
  virtual SolveReport Minimize(IncrementalPotential& potential, Vec u) = 0;
};

}  // namespace optistep

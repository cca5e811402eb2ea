#pragma once
// Central finite differences of an incremental potential along one direction, for the
// suites that check gradients and Hessians (test_fem_derivatives, test_fem_contact,
// test_fem_friction_potential, test_mpm_potential).
#include <petscmat.h>
#include <petscvec.h>

#include <tuple>
#include <utility>

#include "core/Error.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep::test {

/// Collective: the central difference (E(y + h d) - E(y - h d)) / 2h of a potential's
/// energy along d, and the slope g(y) . d of its gradient, as {difference, slope}. g, gp
/// and gm are work vectors of y's layout; on return they hold g(y), y + h d and y - h d.
template <class Potential>
std::pair<double, double> EnergyDifferenceAndSlope(Potential& potential, Vec y, Vec d, double h,
                                                   Vec g, Vec gp, Vec gm) {
  potential.Gradient(y, g);
  PetscScalar gd = 0.0;
  OPTISTEP_PETSC(VecDot(g, d, &gd));
  OPTISTEP_PETSC(VecWAXPY(gp, h, d, y));
  OPTISTEP_PETSC(VecWAXPY(gm, -h, d, y));
  return {(potential.Energy(gp) - potential.Energy(gm)) / (2 * h), gd};
}

/// Collective. At y along d with step h: (E(y + h d) - E(y - h d)) / 2h against g(y) . d,
/// and |H d - (g(y + h d) - g(y - h d)) / 2h| against |H d| with H as assembled in H
/// (the caller's Hessian at y). Hd receives H d.
struct DirectionalCheck {
  double energy_fd = 0.0, gradient_dot = 0.0;
  double hessian_error = 0.0, hessian_norm = 0.0;
};

inline DirectionalCheck CheckAlong(IncrementalPotential& potential, Mat H, Vec y, Vec d,
                                   double h, Vec Hd) {
  DirectionalCheck c;
  Vec g, yp, ym, gp, gm;
  OPTISTEP_PETSC(VecDuplicate(y, &g));
  for (Vec* w : {&yp, &ym, &gp, &gm}) OPTISTEP_PETSC(VecDuplicate(y, w));
  std::tie(c.energy_fd, c.gradient_dot) = EnergyDifferenceAndSlope(potential, y, d, h, g, yp, ym);
  OPTISTEP_PETSC(MatMult(H, d, Hd));
  potential.Gradient(yp, gp);
  potential.Gradient(ym, gm);
  OPTISTEP_PETSC(VecAXPY(gp, -1.0, gm));
  OPTISTEP_PETSC(VecScale(gp, 1.0 / (2 * h)));
  OPTISTEP_PETSC(VecNorm(Hd, NORM_2, &c.hessian_norm));
  OPTISTEP_PETSC(VecAXPY(gp, -1.0, Hd));
  OPTISTEP_PETSC(VecNorm(gp, NORM_2, &c.hessian_error));
  for (Vec* w : {&g, &yp, &ym, &gp, &gm}) VecDestroy(w);
  return c;
}

}  // namespace optistep::test

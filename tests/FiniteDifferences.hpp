#pragma once
// Central finite differences of an incremental potential along one direction, for the
// suites that check gradients and Hessians (test_fem_derivatives, test_fem_contact).
#include <petscmat.h>
#include <petscvec.h>

#include "core/Error.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep::test {

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
  potential.Gradient(y, g);
  PetscScalar gd = 0.0;
  OPTISTEP_PETSC(VecDot(g, d, &gd));
  c.gradient_dot = gd;
  OPTISTEP_PETSC(VecWAXPY(yp, h, d, y));
  OPTISTEP_PETSC(VecWAXPY(ym, -h, d, y));
  c.energy_fd = (potential.Energy(yp) - potential.Energy(ym)) / (2 * h);
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

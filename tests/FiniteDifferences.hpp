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

/// Collective. One term T = E - E_plain of a potential, where `plain` is the same potential
/// without it (both begun on the same step): at y along d with step h, T's Hessian times d
/// (H d - H_plain d, the assembled Hessians at y) against the central difference of T's
/// gradient. Returns {|H_T d - FD|, |H_T d|, d . H_T d}.
struct TermHessianCheck {
  double error = 0.0, norm = 0.0, curvature = 0.0;
};

template <class Potential>
TermHessianCheck CheckTermHessian(Potential& potential, Potential& plain, Vec y, Vec d, double h) {
  TermHessianCheck c;
  Vec Hd, Hd_plain, yp, ym, g, fd;
  for (Vec* w : {&Hd, &Hd_plain, &yp, &ym, &g, &fd}) OPTISTEP_PETSC(VecDuplicate(y, w));
  Mat H = potential.CreateHessian(), H_plain = plain.CreateHessian();
  potential.Hessian(y, H);
  plain.Hessian(y, H_plain);
  OPTISTEP_PETSC(MatMult(H, d, Hd));
  OPTISTEP_PETSC(MatMult(H_plain, d, Hd_plain));
  OPTISTEP_PETSC(VecAXPY(Hd, -1.0, Hd_plain));  // the term's Hessian times d
  OPTISTEP_PETSC(VecWAXPY(yp, h, d, y));
  OPTISTEP_PETSC(VecWAXPY(ym, -h, d, y));
  // (g_T(y + h d) - g_T(y - h d)) / 2h, g_T = g - g_plain.
  potential.Gradient(yp, fd);
  potential.Gradient(ym, g);
  OPTISTEP_PETSC(VecAXPY(fd, -1.0, g));
  plain.Gradient(yp, g);
  OPTISTEP_PETSC(VecAXPY(fd, -1.0, g));
  plain.Gradient(ym, g);
  OPTISTEP_PETSC(VecAXPY(fd, 1.0, g));
  OPTISTEP_PETSC(VecScale(fd, 1.0 / (2 * h)));
  OPTISTEP_PETSC(VecNorm(Hd, NORM_2, &c.norm));
  PetscScalar dHd = 0.0;
  OPTISTEP_PETSC(VecDot(d, Hd, &dHd));
  c.curvature = dHd;
  OPTISTEP_PETSC(VecAXPY(fd, -1.0, Hd));
  OPTISTEP_PETSC(VecNorm(fd, NORM_2, &c.error));
  MatDestroy(&H);
  MatDestroy(&H_plain);
  for (Vec* w : {&Hd, &Hd_plain, &yp, &ym, &g, &fd}) VecDestroy(w);
  return c;
}

}  // namespace optistep::test

#pragma once
// Damping of the penalty contact against the analytic collision objects, as a dissipative
// term of the FEM incremental potential: a dashpot in parallel with each node's contact
// spring, a fraction zeta of the critical damping of that spring at the penetration of the
// step's start. For owned, free node i of mass m_i in contact with object c at x_n,i
// (penetration delta_n = -phi_c(x_n,i) > 0, normal n):
//   D_ic(x_i) = c_ic / (2 dt) (n . (x_i - x_n,i))^2,   c_ic = 2 zeta_c sqrt(m_i k_n),
//   k_n = 6 k_c m_i delta_n  (the stiffness of the penalty k m delta^3, N/m).
// Sources: the spring-dashpot contact of the discrete element method (Cundall & Strack 1979),
// its coefficient following the nonlinear spring's stiffness (Tsuji, Tanaka & Ishida 1992),
// lagged like the Rayleigh damping of Gast et al. 2015 Sec. 4.2, so D is quadratic: gradient
// and Hessian exact, the Hessian positive semidefinite.
// Contract: a node in contact at x_n is damped for the whole step; nothing crosses steps.
// Why, the restitution it gives, and when to set it: docs/methods/contact.md.
#include <petscvec.h>

#include <vector>

#include "core/Types.hpp"
#include "fem/FemModel.hpp"

namespace optistep {

class ContactDamping {
 public:
  explicit ContactDamping(const FemModel& model) : model_(model) {}

  /// Whether any collision object of the model has damping > 0 (not collective: every
  /// rank holds the same objects).
  static bool Wanted(const FemModel& model);

  /// Rank-local. Lags the dashpot coefficients and normals at the owned positions x_n (m,
  /// 3 per owned node) for a step of size dt (s). Dirichlet nodes get no damping.
  void Lag(const PetscScalar* x_n, double dt);

  /// Rank-local. The damping energy (J) of owned node l at position x_l (m); adds its
  /// gradient (N) to *gradient and its Hessian c / dt n n^T (N/m) to *hessian when non-null.
  double NodeTerm(int l, const Vec3& x_l, Vec3* gradient, Mat3* hessian) const;

 private:
  struct Dashpot {
    double c_over_dt;  ///< c_ic / dt (N/m)
    Vec3 normal;       ///< lagged outward normal
  };
  const FemModel& model_;
  std::vector<Vec3> x_n_;           ///< per owned node, the step's start (m)
  std::vector<int> dashpot_start_;  ///< per owned node, into dashpots_ (n_owned + 1)
  std::vector<Dashpot> dashpots_;
};

}  // namespace optistep

#pragma once
// Damping of the penalty contact against the analytic collision objects, as a dissipative
// term of the FEM incremental potential: a dashpot in parallel with each node's contact
// spring (Kelvin-Voigt), its coefficient a fraction zeta of the critical damping of that
// spring at the penetration of the step's start. For owned, free node i of mass m_i in
// contact with object c at x_n,i (penetration delta_n = -phi_c(x_n,i) > 0, normal n):
//   D_ic(x_i) = c_ic / (2 dt) (n . (x_i - x_n,i))^2,   c_ic = 2 zeta_c sqrt(m_i k_n),
//   k_n = 6 k_c m_i delta_n  (the penalty k m delta^3's stiffness d^2/d delta^2, N/m),
// so c_ic = 2 zeta_c m_i sqrt(6 k_c delta_n) (kg/s), and its gradient is the backward-Euler
// dashpot force c_ic n n^T (x_i - x_n,i) / dt = c_ic v_n n (N).
// Sources: the coefficient is the spring-dashpot contact of the discrete element method
// with its dashpot a fraction of critical, 2 zeta sqrt(m k) (Cundall & Strack 1979,
// "A discrete numerical model for granular assemblies", Geotechnique 29(1), eq. 5-6),
// weighted by the nonlinear spring's stiffness at the current penetration as Tsuji, Tanaka
// & Ishida 1992 ("Lagrangian numerical simulation of plug flow of cohesionless particles in
// a horizontal pipe", Powder Technology 71, eq. 9) do for the Hertz spring; with it the
// restitution is a function of zeta alone (for the cubic penalty: of delta'' = -3 k delta^2
// - 2 sqrt(2) zeta sqrt(3 k delta) delta', whose time and length scale out). As a potential it
// is lagged like the Rayleigh damping of Gast et al. 2015 Sec. 4.2 (the stiffness, here the
// contact's, and the normal taken at x_n), so D is quadratic: gradient and Hessian exact,
// Hessian c_ic / dt n n^T positive semidefinite. A node in contact at x_n is damped for the
// whole step, also if it separates within it; one in no contact at x_n is not damped.
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

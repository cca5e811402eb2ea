#pragma once
// Lagged, smoothed Coulomb friction against the analytic collision objects as a term of
// the FEM incremental potential (Li et al. 2020, "Incremental Potential Contact" (IPC),
// Sec. 5): for every owned, free node i in contact with an object c at the lagged state,
//   D_ic(x_i) = mu_c lambda_ic f_0(|u_T|),   u_T = T_ic (x_i - x_n,i),   T_ic = I - n n^T,
// with lambda_ic = 3 k_c m_i phi_c^2 (N) the penalty contact's normal force (Gast et al.
// 2015 Sec. 5.2) and n the object's outward normal, both taken at the lagged positions
// (IPC Sec. 5.1: normal force and sliding basis lagged), and f_0 the C^1 mollifier of
// IPC eq. 14-15 with eps_v h (m):
//   f_0(y) = -y^3 / (3 eps_v^2 h^2) + y^2 / (eps_v h) + eps_v h / 3   for y < eps_v h,
//   f_0(y) = y                                                         otherwise.
// Its minimization gives stick (|u_T| / h below eps_v, the static regime) and slip (a
// tangential force mu lambda opposing u_T). For a moving object, u_T is relative to the
// object: T (x_i - x_n,i - dt v_c), v_c its velocity at the lagged position at t_{n+1}.
// Objects of method: constraint give lambda_ic and n from the constraint's active set at
// the lagged positions (fem/ConstraintCollisions.hpp; our use of IPC's lagging with Gast et
// al. 2015's constraint force, Sec. 5.1): lagged at a frictionless solve of the step.
#include <petscvec.h>

#include <vector>

#include "core/Types.hpp"
#include "fem/ConstraintCollisions.hpp"
#include "fem/FemModel.hpp"

namespace optistep {

class FrictionPotential {
 public:
  /// epsilon_v: IPC's velocity threshold eps_v (m/s, > 0); the mollifier's width is
  /// eps_v h in displacement units.
  FrictionPotential(const FemModel& model, double epsilon_v);

  /// Rank-local. Lags the normal forces and normals at the owned positions x_lag (m, 3
  /// per owned node) for a step of size dt (s), and keeps the step's start x_n (owned
  /// values, m). Dirichlet nodes get no friction. With constraints (non-null), objects of
  /// method: constraint contribute the normal force lambda_i and normal n_i of their
  /// active set, which must have been registered at x_lag (Gast Sec. 3.2: the constraint
  /// force lambda_i = q_i . n_i, Sec. 5.1's friction from it).
  void Lag(const PetscScalar* x_lag, const PetscScalar* x_n, double dt,
           const ConstraintCollisions* constraints = nullptr);
  /// Whether any node is in contact with an object that has friction (this rank).
  bool empty() const { return contacts_.empty(); }

  /// Rank-local. The friction energy (J) of owned node l at position x_l; adds its
  /// gradient (N) to *gradient when non-null and its Hessian (N/m, symmetric positive
  /// semidefinite: the eigenvalues are mu lambda f_0'' along u_T and mu lambda f_0'/|u_T|
  /// across it, both >= 0 for IPC's f_0) to *hessian when non-null.
  double NodeTerm(int l, const Vec3& x_l, Vec3* gradient, Mat3* hessian) const;

  double epsilon_v() const { return epsilon_v_; }

 private:
  struct Contact {
    double mu_lambda;  ///< mu lambda (N)
    Vec3 normal;       ///< lagged outward normal
    Vec3 object_shift; ///< dt times the object's velocity at the lagged position (m)
  };
  const FemModel& model_;
  double epsilon_v_;
  double eps_h_ = 0.0;                 ///< eps_v h (m)
  std::vector<Vec3> x_n_;              ///< per owned node, the step's start (m)
  std::vector<int> contact_start_;     ///< per owned node, into contacts_ (n_owned + 1)
  std::vector<Contact> contacts_;
};

}  // namespace optistep

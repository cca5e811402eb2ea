#pragma once
// Analytic collision objects as penalty energies (Gast et al. 2015 Sec. 5.2).
#include "core/Types.hpp"
#include "io/SceneConfig.hpp"

namespace optistep {

/// A static analytic obstacle. phi(x) is the signed distance (m), negative inside.
/// Per node of mass m (kg), the penalty energy is k m max(-phi, 0)^3 (J), with
/// k = stiffness in 1/(m s^2); Coulomb friction with coefficient mu acts after the solve.
class CollisionObject {
 public:
  explicit CollisionObject(const CollisionObjectConfig& config) : c_(config) {}
  /// Signed distance phi(x) (m) and its unit gradient n (the outward normal).
  double SignedDistance(const Vec3& x, Vec3* normal) const;
  /// Penalty energy k m max(-phi,0)^3 (J); adds its gradient (N) to *gradient and, when
  /// hessian is non-null, the Gauss-Newton (PSD) Hessian 6 k m (-phi) n n^T (N/m).
  double Penalty(const Vec3& x, double mass, Vec3* gradient, Mat3* hessian) const;
  /// Normal force magnitude 3 k m phi^2 (N) at x, 0 without contact; normal in *normal.
  double NormalForce(const Vec3& x, double mass, Vec3* normal) const;
  /// Dashpot coefficient c = 2 zeta sqrt(m k_n) = 2 zeta m sqrt(6 k (-phi)) (kg/s) of the
  /// contact at x, zeta = config().damping: zeta of the critical damping of the penalty's
  /// stiffness k_n = 6 k m (-phi) there (fem/ContactDamping.hpp); 0 without contact or
  /// damping. The outward normal goes to *normal.
  double DampingCoefficient(const Vec3& x, double mass, Vec3* normal) const;
  double friction() const { return c_.friction; }
  const CollisionObjectConfig& config() const { return c_; }

 private:
  CollisionObjectConfig c_;
};

}  // namespace optistep

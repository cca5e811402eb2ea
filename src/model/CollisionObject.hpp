#pragma once
// Analytic collision objects: FEM penalty energies (Gast et al. 2015 Sec. 5.2) or
// constraints (Sec. 3.2), and the MPM grid boundary conditions (sticky or slip).
#include "core/Types.hpp"
#include "io/SceneSections.hpp"
#include "model/ScriptedMotion.hpp"

namespace optistep {

/// An analytic obstacle, static or moving rigidly along its scripted `motion` (x = R(t) X
/// + o(t), X in the object's own frame, the configured shape at t = 0). phi(x) is the
/// signed distance (m), negative inside. Per node of mass m (kg), the penalty energy is
/// k m max(-phi, 0)^3 (J), with k = stiffness in 1/(m s^2); Coulomb friction with
/// coefficient mu acts after the solve.
class CollisionObject {
 public:
  /// A rotation segment without a center turns about the object's own center (the
  /// sphere's, cylinder's, torus' or bowl's center, the box's middle, the half-space's point).
  explicit CollisionObject(const CollisionObjectConfig& config);
  /// Signed distance phi(x) (m) and its unit gradient n (the outward normal), with the
  /// object at the time of the last SetTime (t = 0 before any).
  double SignedDistance(const Vec3& x, Vec3* normal) const;
  /// Poses a moving object at time t (s): SignedDistance, Penalty, NormalForce and
  /// Velocity then use it (FEM: the step's end t_{n+1}, backward Euler). Rank-local.
  void SetTime(double t);
  /// Signed distance (m) and outward normal at x with the object at time t (s); stateless.
  double SignedDistanceAt(const Vec3& x, double t, Vec3* normal) const;
  /// Velocity (m/s) of the object's material point at x, at time t (s); zero when static.
  Vec3 VelocityAt(const Vec3& x, double t) const;
  /// Velocity (m/s) of the object's material point at x at the time of the last SetTime.
  Vec3 Velocity(const Vec3& x) const { return VelocityAt(x, t_); }
  bool moving() const { return !motion_.segments().empty(); }
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
  /// MPM: grid nodes at the object take its velocity (sticky) rather than losing only
  /// their inward normal part (slip).
  bool sticky() const { return c_.boundary == GridBoundary::kSticky; }
  const CollisionObjectConfig& config() const { return c_; }
  /// method: constraint (fem/ConstraintCollisions.hpp): phi >= 0 is held by gradient
  /// projection, and Penalty and NormalForce are 0.
  bool constraint() const { return constraint_; }
  /// The Hessian of phi at x (1/m; symmetric, H n = 0): the curvature of the level set
  /// through x, for the constraint method's Hessian (Gast et al. 2015 Sec. 3.2). Half
  /// space, box faces and inside of a box, cylinder caps: 0; sphere (I - n n^T) / |x - c|;
  /// cylinder side (I - n n^T - a a^T) / rho; torus and cylinder rim, the circle of radius
  /// R about the axis at distance d: (I - n n^T) / d - R / (rho d) w w^T, w = a x u (u the
  /// radial direction, rho the radial distance); box edge and corner regions outside: (sum
  /// of the axes on which x is beyond the box - n n^T) / phi; bowl: over the rim annulus 0,
  /// beyond its inner or outer circle the circle's, on the shell +-(I - n n^T) / |x - c| (+
  /// outside the middle sphere), in the wall nearest the rim's plane 0; box with hole: the
  /// box's where phi is the box's, the hole's wall -(I - n n^T - a a^T) / rho. Where phi has a
  /// kink (a crease between two branches: a box's inner medial planes, the holed box's box and
  /// hole, the bowl's wall and rim plane) it is the Hessian of the branch SignedDistance
  /// takes there, the one whose normal the projection uses. Singular on the axis or centre.
  /// A moving object: R Hess phi_0(R^T (x - o)) R^T with the pose of the last SetTime.
  Mat3 DistanceHessian(const Vec3& x) const;

 private:
  /// Signed distance and outward normal of the configured (t = 0) shape.
  double RestSignedDistance(const Vec3& x, Vec3* normal) const;
  /// Signed distance and outward normal at x of the shape posed by x = R X + o.
  double PosedSignedDistance(const Vec3& x, const Mat3& R, const Vec3& o, Vec3* normal) const;
  /// Hess phi of the configured (t = 0) shape at x (DistanceHessian's shapes).
  Mat3 RestDistanceHessian(const Vec3& x) const;
  /// Hess phi of the box [box_min, box_max] at x, given its distance phi and normal n there.
  Mat3 BoxHessian(const Vec3& x, double phi, const Vec3& n) const;
  /// The rigid map of the object frame at time t: x = R X + o.
  void Frame(double t, Mat3* R, Vec3* o) const;

  CollisionObjectConfig c_;
  bool constraint_ = false;
  ScriptedMotion motion_;
  double t_ = 0.0;                   ///< time of the pose (SetTime)
  Mat3 R_ = Mat3::Identity();        ///< pose at t_
  Vec3 o_ = Vec3::Zero();
};

}  // namespace optistep

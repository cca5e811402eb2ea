#pragma once
// XPBD on point particles joined by distance constraints (chains; Macklin, Storey, Lu,
// Terdiman, Chentanez, Jeschke, Mueller 2019, "Small Steps in Physics Simulation", Alg. 1 and
// Sec. 6.1's hanging chain). Rank-local by itself: it steps the particles it holds. Under
// Distribute (integrators/ChainXpbd, particles/ParticlePartition.hpp) it holds one rank's
// owned particles and ghosts and the constraints at its owned ones, in color order, and
// calls a halo exchange after each color: every kernel below is per particle or per
// constraint, and the ghosts are predicted and moved alike on every rank that holds them.
//
// Per substep of dt_s (Alg. 1): x_prev = x; v += dt_s g; x += dt_s v at free particles;
// lambda = 0; `iterations` Gauss-Seidel passes over the constraints in their order (by
// color under Distribute, each color followed by its halo exchange), each
//   C = |x_i - x_j| - l0,  n = (x_i - x_j) / |x_i - x_j|,  alpha~ = alpha / dt_s^2,
//   dlambda = (-C - alpha~ lambda - gamma n.((x_i - x_prev_i) - (x_j - x_prev_j)))
//             / ((1 + gamma)(w_i + w_j) + alpha~)
//   x_i += w_i n dlambda,  x_j -= w_j n dlambda          (XPBD, Macklin et al. 2016, Eqs. 18, 26)
// then v = (x - x_prev) / dt_s. gamma = beta_R / dt_s (Sec. 4.1 with beta~ = dt_s^2 beta and
// beta = beta_R / alpha: see integrators/FemXpbd.hpp). A spring of stiffness k (N/m) has
// alpha = 1 / k; alpha = 0 is inextensible. Pinned particles have w = 0 and stay put.
// lambda / dt_s^2 after a substep is the constraint's force estimate (N; the paper's Fig. 4).
// Obstacles (SetObstacles): after each pass, every contact candidate of the step (found once
// per step from the swept prediction, Sec. 4.3) is held out of its object by
// ProjectPointContact, the inequality constraint and friction FemXpbd applies to tet nodes.
//
// Energy (Energy, the paper's Fig. 6): kinetic + gravitational + the constraints' elastic
// energy alpha f^2 / 2 of their force estimates f = lambda / dt_s^2, which is C^2 / (2 alpha)
// where the pass has solved the constraint (C = -alpha~ lambda) and, unlike it, does not
// count the residual stretch a pass leaves as stored energy (StretchEnergy does).
#include <cstddef>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "core/Types.hpp"

namespace optistep {

/// One point against an analytic object as an XPBD inequality constraint of zero compliance,
/// phi(p) >= floor (Macklin et al. 2019, Sec. 4.3; floor <= 0, Sec. 4.2's depenetration
/// limit, 0 without it), with Coulomb friction (Sec. 4.4): the tangential motion of the
/// substep, p - p_prev, is removed up to mu times the normal correction. phi (m) and the
/// outward unit normal n are the object's at p. Returns whether p was moved.
inline bool ProjectPointContact(Vec3* p, const Vec3& p_prev, double phi, const Vec3& n, double floor,
                                double mu) {
  if (phi >= floor) return false;
  *p -= (phi - floor) * n;
  if (mu > 0.0) {
    const Vec3 motion = *p - p_prev;
    const Vec3 tangential = motion - motion.dot(n) * n;
    const double slip = tangential.norm();
    const double limit = mu * (floor - phi);
    *p -= slip <= limit ? tangential : Vec3(tangential * (limit / slip));
  }
  return true;
}

class XpbdParticles {
 public:
  /// An analytic collision object: its signed distance phi(x) (m) with the outward normal,
  /// and its friction coefficient.
  struct Obstacle {
    std::function<double(const Vec3&, Vec3*)> signed_distance;
    double friction = 0.0;
  };

  struct Constraint {
    int i = 0;            ///< particle indices
    int j = 0;
    double rest = 0.0;    ///< l0, m, > 0
    double alpha = 0.0;   ///< compliance, m/N (1 / stiffness), >= 0
  };

  /// x: positions (m); inverse_mass: 1/kg per particle, 0 for pinned ones; constraints in
  /// their Gauss-Seidel order; gravity (m/s^2); damping_beta: beta_R (s), >= 0.
  XpbdParticles(std::vector<Vec3> x, std::vector<double> inverse_mass,
                std::vector<Constraint> constraints, const Vec3& gravity, double damping_beta);

  /// Makes it one rank's share: particles [0, n_owned) owned, the rest ghosts; counted[k]
  /// marks the constraints whose energy and strain this rank reports; the constraints are
  /// in color order, color c being [color_begin[c], color_begin[c + 1]) (no two of a color
  /// share a particle); halo(c) refreshes the ghosts' positions after color c (collective
  /// on the ranks that share the system). Not collective itself.
  void Distribute(std::size_t n_owned, std::vector<char> counted, std::vector<std::size_t> color_begin,
                  std::function<void(int)> halo);

  /// The objects the particles collide with (none by default); v_max (m/s): the depenetration
  /// speed limit of Sec. 4.2 (infinity: off).
  void SetObstacles(std::vector<Obstacle> obstacles, double max_depenetration_speed);

  /// n substeps of dt / n (s), each with `iterations` passes; contacts found once first.
  void Step(double dt, int substeps, int iterations);
  /// The step's contact candidates (Sec. 4.3): free particles whose swept prediction
  /// x -> x + dt v + dt^2 g comes within its own length of an obstacle.
  void FindContacts(double dt);
  /// One substep of dt_s (s).
  void Substep(double dt_s, int iterations);

  std::vector<Vec3>& x() { return x_; }
  std::vector<Vec3>& v() { return v_; }
  const std::vector<Vec3>& x() const { return x_; }
  const std::vector<Vec3>& v() const { return v_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  /// Constraint k's force estimate lambda_k / dt_s^2 (N) after the last substep (positive
  /// when the constraint pulls its ends together, i.e. in tension).
  double Force(int k) const { return -lambda_[k] / (dt_s_ * dt_s_); }
  /// The particles this rank owns (all unless Distribute said otherwise).
  std::size_t n_owned() const { return n_owned_; }
  /// Whether this rank reports constraint k (all unless Distribute said otherwise).
  bool counted(std::size_t k) const { return counted_.empty() || counted_[k]; }
  /// max_k |C_k| / l0_k over the counted constraints, the largest relative stretch (-).
  double MaxStrain() const;
  /// The total energy (J) of the free owned particles (w > 0; pinned ones do not move): kinetic
  /// sum m |v|^2 / 2, gravitational potential -sum m g.x (zero at the origin), and the
  /// counted constraints' elastic energy (ElasticEnergy). The quantity of Macklin et al. 2019,
  /// Fig. 6.
  double Energy() const { return MotionEnergy() + ElasticEnergy(); }
  /// Its kinetic and gravitational part (J).
  double MotionEnergy() const;
  /// Its elastic part, the sum of ElasticEnergy(k) over the counted constraints (J).
  double ElasticEnergy() const;
  /// Particle p's share of MotionEnergy (J; 0 if pinned).
  double MotionEnergy(std::size_t p) const;
  /// Constraint k's elastic energy alpha f^2 / 2 (J) of its force estimate f = lambda / dt_s^2
  /// of the last substep; before the first substep, the force of its stretch, f = -C / alpha.
  /// 0 if inextensible.
  double ElasticEnergy(std::size_t k) const;
  /// Constraint k's C^2 / (2 alpha) at the current positions (J; 0 if inextensible): with a
  /// pass that has not solved the constraint, the residual stretch measured as if stored.
  double StretchEnergy(std::size_t k) const;
  /// Constraint projections so far (of the counted constraints).
  long long projections() const { return projections_; }

 private:
  std::vector<Vec3> x_;
  std::vector<Vec3> v_;
  std::vector<Vec3> x_prev_;
  std::vector<double> w_;
  std::vector<Constraint> constraints_;
  std::vector<double> lambda_;
  bool forces_estimated_ = false;  ///< lambda_ holds a substep's multipliers
  std::vector<Obstacle> obstacles_;
  double max_depenetration_speed_ = std::numeric_limits<double>::infinity();
  std::vector<std::pair<std::size_t, std::size_t>> contacts_;  ///< (particle, obstacle)
  Vec3 gravity_;
  double damping_beta_ = 0.0;
  double dt_s_ = 1.0;
  long long projections_ = 0;
  std::size_t n_owned_ = 0;
  long long n_counted_ = 0;
  std::vector<char> counted_;             ///< empty: all
  std::vector<std::size_t> color_begin_;  ///< {0, #constraints} unless distributed
  std::function<void(int)> halo_;
};

}  // namespace optistep

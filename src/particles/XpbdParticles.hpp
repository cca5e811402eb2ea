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
#include <cstddef>
#include <functional>
#include <vector>

#include "core/Types.hpp"

namespace optistep {

class XpbdParticles {
 public:
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

  /// n substeps of dt / n (s), each with `iterations` passes.
  void Step(double dt, int substeps, int iterations);
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
  /// counted constraints' elastic energy sum C^2 / (2 alpha) over the compliant ones (alpha > 0;
  /// inextensible constraints store none). The quantity of Macklin et al. 2019, Fig. 6.
  double Energy() const { return MotionEnergy() + ConstraintEnergy(); }
  /// Its kinetic and gravitational part (J).
  double MotionEnergy() const;
  /// Its constraint part sum C^2 / (2 alpha) over alpha > 0 (J).
  double ConstraintEnergy() const;
  /// Particle p's share of MotionEnergy (J; 0 if pinned).
  double MotionEnergy(std::size_t p) const;
  /// Constraint k's C^2 / (2 alpha) (J; 0 if inextensible).
  double SpringEnergy(std::size_t k) const;
  /// Constraint projections so far (of the counted constraints).
  long long projections() const { return projections_; }

 private:
  std::vector<Vec3> x_;
  std::vector<Vec3> v_;
  std::vector<Vec3> x_prev_;
  std::vector<double> w_;
  std::vector<Constraint> constraints_;
  std::vector<double> lambda_;
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

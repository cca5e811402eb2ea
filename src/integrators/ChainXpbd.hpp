#pragma once
// XPBD with small steps on the chains and cloths of a particle scene (discretization: particles,
// integrator: xpbd; Macklin et al. 2019, Alg. 1): one StepController step of dt is
// xpbd.substeps substeps of dt / n with xpbd.iterations Gauss-Seidel passes each, over
// the distance constraints in scene order (chains' links in chain order, then each cloth's
// edges by vertex pair, then, with bending_compliance, its bending constraints across the
// interior edges by edge) (integrators/XpbdParticles.hpp). Every
// rank steps all particles alike (a chain lives whole on each rank), so results do not
// depend on the rank count. Only x and v cross steps.
#include <memory>
#include <string>
#include <vector>

#include "integrators/Xpbd.hpp"
#include "integrators/XpbdParticles.hpp"
#include "io/SceneConfig.hpp"

namespace optistep {

class ChainXpbd : public Xpbd {
 public:
  /// The particles of scene.chains, then of scene.cloths (each cloth's surface read by every
  /// rank), at their initial velocities; pinned particles have zero inverse mass. InputError
  /// naming the cloth for a pinned vertex out of range or a zero-length edge.
  explicit ChainXpbd(const SceneConfig& scene);

  /// "xpbd, 100 substeps x 1 iteration, 2 chains, 40 particles, Gauss-Seidel in chain order".
  std::string Describe() const override;
  /// n substeps of dt / n (s); fails (state unchanged) only on a NaN.
  SolveReport TryStep(double dt) override;
  void KeepState() override;
  void RestoreKeptState() override;
  /// stats.csv: substeps, constraint projections of the step, the largest relative stretch
  /// |C| / l0 after it, the first constraint's force estimate lambda / dt_s^2 (N), and the
  /// total_energy after it (J; XpbdParticles::Energy: kinetic + gravitational + C^2/(2 alpha))
  /// and its constraint_energy part sum C^2/(2 alpha) (J).
  std::vector<std::string> StatsColumns() const override;
  std::vector<double> StatsValues() const override;

  XpbdParticles& particles() { return *particles_; }
  const XpbdParticles& particles() const { return *particles_; }
  /// Constraint k's particle pair (the frames' polyline segments).
  const std::vector<XpbdParticles::Constraint>& segments() const { return particles_->constraints(); }

 private:
  std::unique_ptr<XpbdParticles> particles_;
  size_t n_chains_ = 0;
  size_t n_cloths_ = 0;
  std::vector<Vec3> x_kept_, v_kept_;
  double t_kept_ = 0.0;
  long steps_kept_ = 0;
  long long projections_ = 0;
};

}  // namespace optistep

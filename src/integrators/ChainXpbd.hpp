#pragma once
// XPBD with small steps on the chains and cloths of a particle scene (discretization: particles,
// integrator: xpbd; Macklin et al. 2019, Alg. 1): one StepController step of dt is
// xpbd.substeps substeps of dt / n with xpbd.iterations Gauss-Seidel passes each over the
// distance constraints (particles/XpbdParticles.hpp). The particles and constraints are
// those of particles/ParticleModel.hpp, whose scene order gives the global ids.
//
// Distribution (particles/ParticlePartition.hpp): the particles are split over the ranks by
// METIS on the particle graph; each rank keeps the constraints at its owned particles and
// their other ends as ghosts. A pass applies the constraints color by color (a greedy coloring
// in constraint id order: no two constraints of a color share a particle), each color
// followed by one halo exchange of the positions it changed (owners to the ranks holding them
// as ghosts). Every kernel is per particle or per constraint, and a constraint joining two
// ranks' particles is projected by both from bitwise the same inputs, so 1, 2, 4 ranks give
// bitwise the same trajectory. Only x and v cross steps.
//
// Collision objects (collision_objects, static analytic shapes): each step's contact
// candidates are held out of them after every pass with Coulomb friction, as FemXpbd holds
// tet nodes (XpbdParticles::SetObstacles; xpbd.max_depenetration_speed as there).
#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "integrators/Xpbd.hpp"
#include "io/SceneSections.hpp"
#include "model/CollisionObject.hpp"
#include "particles/XpbdParticles.hpp"

namespace optistep {

class ChainXpbd : public Xpbd {
 public:
  /// Collective. The particles of scene.chains, then of scene.cloths (BuildParticleModel,
  /// every rank reading each cloth's surface; its InputErrors), split over comm's ranks.
  ChainXpbd(MPI_Comm comm, const IntegratorConfig& scene);

  /// "xpbd, 100 substeps x 1 iteration, 1 chain, 0 cloths, 20 particles, 19 distance
  /// constraints, Gauss-Seidel over 2 constraint colors".
  std::string Describe() const override;
  /// Collective. n substeps of dt / n (s); fails (state unchanged) only on a NaN.
  SolveReport TryStep(double dt) override;
  void KeepState() override;
  void RestoreKeptState() override;
  /// stats.csv: substeps, constraint projections of the step (summed over ranks, each
  /// constraint once), the largest relative stretch |C| / l0 after it, the first
  /// constraint's force estimate lambda / dt_s^2 (N), the total_energy after it (J;
  /// XpbdParticles::Energy: kinetic + gravitational + elastic, summed in global id order on
  /// every rank count), its elastic_energy part sum alpha f^2 / 2 (J), the stretch_energy
  /// sum C^2 / (2 alpha) of the residual stretch (J; no part of the total), and the halo
  /// exchanges of the step (per rank).
  std::vector<std::string> StatsColumns() const override;
  std::vector<double> StatsValues() const override;

  /// This rank's share: owned particles first (ascending global id), then ghosts.
  XpbdParticles& particles() { return *particles_; }
  const XpbdParticles& particles() const { return *particles_; }
  /// Global id of local particle l.
  std::int64_t global_id(std::size_t l) const { return local_ids_[l]; }
  /// All particles of the scene (every rank).
  std::int64_t particle_count() const { return n_particles_; }
  /// Every constraint of the scene, by global id, with global particle ids (every rank).
  const std::vector<XpbdParticles::Constraint>& segments() const { return global_; }
  /// The cloths' triangles, global particle ids (every rank).
  const std::vector<std::array<std::int64_t, 3>>& triangles() const { return triangles_; }
  int colors() const { return n_colors_; }
  /// The number of particles each rank owns (every rank).
  const std::vector<std::int64_t>& owned_per_rank() const { return owned_per_rank_; }

  /// Collective. Per-particle vectors of the local share (3 per particle), gathered into
  /// global id order on every rank: Gather(particles().x()) is every position.
  std::vector<Vec3> Gather(const std::vector<Vec3>& local) const;
  /// Collective. The force estimate lambda / dt_s^2 (N, positive in tension) of the last
  /// substep per constraint, in global id order, on every rank (-0 before the first substep).
  std::vector<double> GatherForces() const;
  /// Sets the local share from every particle's position (m) and velocity (m/s) in global
  /// order (a checkpoint). Not collective.
  void SetState(const std::vector<Vec3>& x, const std::vector<Vec3>& v);

 private:
  /// After color c: the owners send the positions changed in it to the ranks that hold
  /// them as ghosts (one message per neighbour and color).
  void Halo(int color);

  MPI_Comm comm_;
  std::unique_ptr<XpbdParticles> particles_;
  std::vector<CollisionObject> objects_;  ///< the scene's collision objects (static)
  std::vector<XpbdParticles::Constraint> global_;  ///< all constraints, global ids
  std::vector<std::array<std::int64_t, 3>> triangles_;
  std::vector<std::int64_t> local_ids_;  ///< global id per local particle
  std::vector<std::int64_t> local_constraint_ids_;  ///< global id per local constraint
  int n_colors_ = 0;
  std::int64_t n_particles_ = 0;
  std::vector<std::int64_t> owned_per_rank_;
  /// Per color c and rank r: local indices to send and to receive.
  std::vector<std::vector<std::vector<int>>> send_, recv_;
  std::vector<std::vector<double>> send_buffer_, recv_buffer_;
  size_t n_chains_ = 0;
  size_t n_cloths_ = 0;
  std::vector<Vec3> x_kept_, v_kept_;
  double t_kept_ = 0.0;
  long steps_kept_ = 0;
  std::vector<double> stats_;
  double halo_exchanges_ = 0.0;
};

}  // namespace optistep

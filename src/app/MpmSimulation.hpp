#pragma once
// A whole MPM run of a scene: sample particles (rank 0, deterministic), distribute them
// over grid blocks with METIS, and step with implicit MPM (mpm/MpmIncrementalPotential)
// at CFL-limited dt = min(frame remainder, cfl dx / v_max) (Gast et al. 2015 Sec. 6.3;
// HOT Sec. 7.1), writing particle frames (XDMF + HDF5) and stats.csv.
// One step (HOT Sec. 3.1): halo exchange -> P2G (APIC) -> minimize E(dv) with Newton ->
// G2P -> F update -> plasticity return mapping (lagged) -> advection -> migration.
// Checkpoint datasets (app/Simulation.hpp), rows by particle id: /mpm/particles/x, v
// (n x 3; m, m/s), C (n x 9, 1/s), F (n x 9), both row-major, Jp, plastic_strain, mass
// (kg), V0 (m^3), material (int32), rank and local_index (int32, int64: where the
// particle lived, for a bitwise restart on the same rank count); /mpm/blocks (b x 3,
// int64 block coordinates) and /mpm/block_owner (b, int32): the block -> rank map.
#include <memory>
#include <vector>

#include "app/Simulation.hpp"
#include "io/SceneConfig.hpp"
#include "io/StepStats.hpp"
#include "io/XdmfWriter.hpp"
#include "materials/Material.hpp"
#include "model/MovingObject.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/Plasticity.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

class MpmSimulation : public Simulation {
 public:
  /// Collective. Samples every body on rank 0 and distributes the particles; writes
  /// nothing. Throws InputError (on every rank) for bad input.
  MpmSimulation(MPI_Comm comm, const SceneConfig& scene);
  ~MpmSimulation() override;

  /// Collective: one CFL-limited step; the last step of a frame ends on its boundary.
  void AdvanceStep(StepStats* stats) override;

  /// Collective: per particle (in id order, all particles, on every rank) position (m)
  /// and velocity (m/s), 3 values each; mass (kg) in *mass when non-null.
  void GatherParticles(std::vector<double>* x, std::vector<double>* v,
                       std::vector<double>* mass = nullptr) const;

  mpm::MpmDomain& domain() { return *domain_; }
  double time() const override { return t_; }
  long steps() const override { return steps_; }
  long long particle_count() const { return n_particles_; }
  /// The stats.csv columns MPM adds to FEM's.
  static std::vector<std::string> ExtraColumns();

 private:
  /// One try of a step of size dt; false (state untouched) when the solve fails.
  bool TryStep(double dt, StepRecord* record);
  void Advance(double dt, int depth, double start_wall, StepStats* stats);
  double CflStep() const;
  std::vector<std::string> StatsColumns() const override { return ExtraColumns(); }
  void WriteFrame() override;
  int64_t FramePoints() const override { return n_particles_; }
  int64_t FrameCells() const override { return n_particles_; }
  void SaveState(CheckpointWriter& out) override;
  void LoadState(const CheckpointReader& in) override;

  std::unique_ptr<mpm::MpmDomain> domain_;
  std::vector<std::unique_ptr<ElasticMaterial>> owned_materials_;
  mpm::MaterialTable materials_;
  std::vector<mpm::PlasticityParameters> plasticity_;
  std::vector<MovingObject> objects_;
  std::unique_ptr<Minimizer> minimizer_;
  double t_ = 0.0;
  long steps_ = 0;
  long long n_particles_ = 0;
  mpm::BalanceReport balance_;
};

}  // namespace optistep

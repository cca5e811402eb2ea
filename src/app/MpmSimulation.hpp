#pragma once
// A whole MPM run of a scene: sample particles (rank 0, deterministic), distribute them
// over grid blocks with METIS, and step with the scene's integrator
// (integrators/IntegratorFactory.hpp; backward Euler: integrators/MpmBackwardEuler.hpp) at
// CFL-limited steps (integrators/StepController.hpp), writing particle frames
// (XDMF + HDF5), stats.csv and checkpoints (app/Simulation.hpp; the particle datasets:
// mpm/ParticleCheckpoint.hpp). Sampling: mpm/BodySampling.hpp.
#include <memory>
#include <vector>

#include "app/Simulation.hpp"
#include "core/AvailableMemory.hpp"
#include "app/SceneConfig.hpp"
#include "io/XdmfWriter.hpp"
#include "mpm/MemoryEstimate.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/MpmModel.hpp"

namespace optistep {

class MpmSimulation : public Simulation {
 public:
  /// Collective. Samples every body on rank 0 and distributes the particles; writes
  /// nothing. Throws InputError (on every rank) for bad input, and before sampling for a
  /// scene whose estimated memory exceeds what the run's nodes have available
  /// (mpm/MemoryEstimate.hpp).
  MpmSimulation(MPI_Comm comm, const SceneConfig& scene);
  ~MpmSimulation() override;

  /// Collective: the step controller's state check (StepController::SetStateCheck), as
  /// FEM's for tets: "" if every particle's det F (det F_E Jp, the J of the frames) is
  /// finite in (0, -step_max_det_f] and its position, velocity, F, C and plastic strain
  /// are finite, else one line naming the integrator, the worst particle (id) with its det
  /// F, the range and count. MPM steps have a step limit (CFL), so a rejected state ends
  /// the run with exit 2 (StepFailure) rather than a retry.
  std::string CheckState() const;

  /// Collective: per particle (in id order, all particles, on every rank) position (m)
  /// and velocity (m/s), 3 values each; mass (kg) in *mass when non-null.
  void GatherParticles(std::vector<double>* x, std::vector<double>* v,
                       std::vector<double>* mass = nullptr) const;

  mpm::MpmDomain& domain() { return *domain_; }
  const mpm::MpmModel& model() const { return model_; }
  long long particle_count() const { return n_particles_; }
  /// What the set-up estimated the run to need and found available (the same on every
  /// rank); the constructor refuses a scene whose estimate does not fit.
  const mpm::MemoryEstimate& memory_estimate() const { return memory_estimate_; }
  const AvailableMemory& available_memory() const { return available_memory_; }

 private:
  void WriteFrame() override;
  int64_t FramePoints() const override { return n_particles_; }
  int64_t FrameCells() const override { return n_particles_; }
  void SaveState(CheckpointWriter& out) override;
  bool LoadState(const CheckpointReader& in) override;

  mpm::MpmModel model_;
  std::unique_ptr<mpm::MpmDomain> domain_;
  long long n_particles_ = 0;
  mpm::MemoryEstimate memory_estimate_;
  AvailableMemory available_memory_;
};

}  // namespace optistep

#pragma once
// A whole run of a particle scene (discretization: particles): chains and cloths of point
// particles stepped by XPBD (integrators/ChainXpbd.hpp, split over the ranks by METIS), frames
// as XDMF polylines (one segment per distance constraint; per segment the force estimate
// lambda / dt_s^2, N, and the strain |x_i - x_j| / l0 - 1) and, with cloths, their triangle
// surfaces beside them (io/XdmfWriter.hpp), stats.csv and checkpoints (app/Simulation.hpp).
// Frames and checkpoints are gathered in scene order; rank 0 writes them.
// Checkpoint datasets: /particles/x and /particles/v (num_particles x 3; m, m/s) in scene
// order; root attribute frame_step.
#include "app/Simulation.hpp"
#include "integrators/ChainXpbd.hpp"

namespace optistep {

class ParticleSimulation : public Simulation {
 public:
  /// Collective; writes nothing.
  ParticleSimulation(MPI_Comm comm, const SceneConfig& scene);

  ChainXpbd& chains() { return *chains_; }
  int64_t particle_count() const { return chains_->particle_count(); }

 private:
  void StartFrames() override;
  void WriteFrame() override;
  int64_t FramePoints() const override { return particle_count(); }
  int64_t FrameCells() const override {
    return static_cast<int64_t>(chains_->segments().size());
  }
  void SaveState(CheckpointWriter& out) override;
  bool LoadState(const CheckpointReader& in) override;
  /// This rank's rows of a per-particle or per-segment array: all on rank 0, none elsewhere.
  template <class T>
  DistributedArray<T> RankZeroRows(const std::vector<T>& values, int columns) const;

  ChainXpbd* chains_ = nullptr;  ///< the integrator, owned by Simulation
};

}  // namespace optistep

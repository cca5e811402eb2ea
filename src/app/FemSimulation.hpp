#pragma once
// A whole FEM run of a scene: load and distribute the mesh, build the model, step frame
// by frame with the scene's minimizer, and write frames (XDMF + HDF5), stats.csv and
// checkpoints (app/Simulation.hpp).
// Checkpoint datasets: /fem/x and /fem/v (num_nodes x 3; m, m/s) by original node id;
// root attribute frame_step (steps of the current frame already taken).
#include <memory>
#include <vector>

#include "app/Simulation.hpp"
#include "fem/FemModel.hpp"
#include "integrators/BackwardEulerIntegrator.hpp"
#include "io/SceneConfig.hpp"
#include "io/StepStats.hpp"
#include "io/XdmfWriter.hpp"
#include "partition/NaturalOrdering.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

class FemSimulation : public Simulation {
 public:
  /// Collective. Reads and distributes the mesh and builds the model; writes nothing.
  /// Throws InputError (on every rank) for bad input.
  FemSimulation(MPI_Comm comm, const SceneConfig& scene);
  ~FemSimulation() override;

  /// Collective: one of the ceil(frame_dt / dt) equal steps of the current frame.
  void AdvanceStep(StepStats* stats) override;
  double time() const override { return integrator_->time(); }
  long steps() const override { return integrator_->steps(); }

  /// Collective: node positions (m) in original-id order, the whole array on every rank.
  std::vector<double> GatherPositions();
  /// Collective: the same for velocities (m/s).
  std::vector<double> GatherVelocities();

  FemModel& model() { return *model_; }
  BackwardEulerIntegrator& integrator() { return *integrator_; }
  const PartitionQuality& partition_quality() const { return quality_; }

 private:
  void StartFrames() override;
  void WriteFrame() override;
  int64_t FramePoints() const override;
  int64_t FrameCells() const override;
  void SaveState(CheckpointWriter& out) override;
  void LoadState(const CheckpointReader& in) override;
  std::vector<double> Gather(Vec v);
  int StepsPerFrame() const;

  PartitionQuality quality_;
  std::unique_ptr<FemModel> model_;
  std::unique_ptr<Minimizer> minimizer_;
  std::unique_ptr<BackwardEulerIntegrator> integrator_;
  std::unique_ptr<NaturalOrdering> node_order_;
  std::unique_ptr<NaturalOrdering> tet_order_;
  int frame_step_ = 0;  ///< steps of the current frame already taken
};

}  // namespace optistep

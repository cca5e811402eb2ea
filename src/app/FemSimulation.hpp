#pragma once
// A whole FEM run of a scene: load and distribute the mesh, build the model, step frame
// by frame with the scene's integrator (integrators/IntegratorFactory.hpp), and write
// frames (XDMF + HDF5), stats.csv and checkpoints (app/Simulation.hpp).
// Checkpoint datasets: /fem/x and /fem/v (num_nodes x 3; m, m/s) by original node id;
// root attribute frame_step (steps of the current frame already taken).
#include <memory>
#include <vector>

#include "app/Simulation.hpp"
#include "core/PetscHandles.hpp"
#include "fem/FemModel.hpp"
#include "app/SceneConfig.hpp"
#include "io/StepStats.hpp"
#include "io/XdmfWriter.hpp"
#include "partition/NaturalOrdering.hpp"

namespace optistep {

class FemSimulation : public Simulation {
 public:
  /// Collective: the step controller's state check (StepController::SetStateCheck): ""
  /// if every tet has a finite det F in (0, -step_max_det_f] (any det F with
  /// -step_reject_inverted false) and a finite von Mises
  /// stress, else one line naming the integrator, the worst tet (original id) with its
  /// det F, the range and count, and what to change. Inverted elements are not a state to
  /// go on from: they end in a failed step, not a silent explosion.
  std::string CheckState() const;
  /// Collective. Reads and distributes the mesh and builds the model; writes nothing.
  /// Throws InputError (on every rank) for bad input.
  FemSimulation(MPI_Comm comm, const SceneConfig& scene);
  ~FemSimulation() override;

  /// Collective: node positions (m) in original-id order, the whole array on every rank.
  std::vector<double> GatherPositions();
  /// Collective: the same for velocities (m/s).
  std::vector<double> GatherVelocities();

  FemModel& model() { return *model_; }
  /// The state the integrator advances: ghosted node vectors, m and m/s.
  Vec positions() const { return x_; }
  Vec velocities() const { return v_; }
  const PartitionQuality& partition_quality() const { return quality_; }

 private:
  void StartFrames() override;
  void WriteFrame() override;
  int64_t FramePoints() const override;
  int64_t FrameCells() const override;
  void SaveState(CheckpointWriter& out) override;
  bool LoadState(const CheckpointReader& in) override;
  std::vector<double> Gather(Vec v);

  PartitionQuality quality_;
  std::unique_ptr<FemModel> model_;
  OwnedVec x_;  ///< node positions (m), ghosted
  OwnedVec v_;  ///< node velocities (m/s), ghosted
  std::unique_ptr<NaturalOrdering> node_order_;
  std::unique_ptr<NaturalOrdering> tet_order_;
};

}  // namespace optistep

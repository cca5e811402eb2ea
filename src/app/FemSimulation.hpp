#pragma once
// A whole FEM run of a scene: load and distribute the mesh, build the model, step frame
// by frame with the scene's minimizer, and write frames (XDMF + HDF5) and stats.csv.
#include <memory>
#include <vector>

#include "fem/FemModel.hpp"
#include "integrators/BackwardEulerIntegrator.hpp"
#include "io/SceneConfig.hpp"
#include "io/StepStats.hpp"
#include "io/XdmfWriter.hpp"
#include "partition/NaturalOrdering.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

class FemSimulation {
 public:
  /// Collective. Reads and distributes the mesh and builds the model; writes nothing.
  /// Throws InputError (on every rank) for bad input.
  FemSimulation(MPI_Comm comm, const SceneConfig& scene);
  ~FemSimulation();

  /// Collective. Creates the output folder, writes frame 0, then runs every frame.
  /// write_output = false runs without touching the disk (tests); print = per-step lines.
  void Run(bool write_output, bool print);
  /// Collective: advances one frame (steps end on the frame boundary).
  void AdvanceFrame(StepStats* stats);

  /// Collective: node positions (m) in original-id order, the whole array on every rank.
  std::vector<double> GatherPositions();
  /// Collective: the same for velocities (m/s).
  std::vector<double> GatherVelocities();

  FemModel& model() { return *model_; }
  BackwardEulerIntegrator& integrator() { return *integrator_; }
  int frame() const { return frame_; }
  const PartitionQuality& partition_quality() const { return quality_; }

 private:
  void WriteFrame();
  std::vector<double> Gather(Vec v);

  MPI_Comm comm_;
  SceneConfig scene_;
  PartitionQuality quality_;
  std::unique_ptr<FemModel> model_;
  std::unique_ptr<Minimizer> minimizer_;
  std::unique_ptr<BackwardEulerIntegrator> integrator_;
  std::unique_ptr<NaturalOrdering> node_order_;
  std::unique_ptr<NaturalOrdering> tet_order_;
  std::unique_ptr<XdmfTimeSeries> frames_;
  int frame_ = 0;
};

}  // namespace optistep

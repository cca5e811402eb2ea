#pragma once
// Runs a FEM scene in-process for the suites that compare trajectories.
#include <mpi.h>

#include <vector>

#include "app/FemSimulation.hpp"

namespace optistep::test {

/// Collective on comm: all of the scene's frames; returns every node's position (m), then
/// every node's velocity (m/s), in original node order.
inline std::vector<double> RunFemScene(MPI_Comm comm, const SceneConfig& scene) {
  FemSimulation sim(comm, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  std::vector<double> state = sim.GatherPositions();
  const std::vector<double> v = sim.GatherVelocities();
  state.insert(state.end(), v.begin(), v.end());
  return state;
}

}  // namespace optistep::test

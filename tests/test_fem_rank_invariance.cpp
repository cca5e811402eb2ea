// The same scene on any number of ranks gives the same trajectory to solver tolerance,
// and the same scene on the same ranks gives bitwise the same result. The scene is a
// small twisted bar (DOT's twist test shape) with FCR, Dirichlet rotation at both ends,
// gravity and a ground: nonlinear, constrained, in contact.
#include <gtest/gtest.h>

#include <cmath>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"

namespace optistep {
namespace {

SceneConfig TwistScene() {
  const std::string dir = test::SharedTempDir("rank_invariance");
  test::WriteBoxMesh(dir + "/bar", 8, 2, 2, Vec3(4.0, 1.0, 1.0));
  return test::MakeScene(dir + "/twist.yaml", R"(
time: {dt: 0.025, frame_dt: 0.05, frames: 4}
gravity: [0, -9.81, 0]
bodies:
  - mesh: bar.node
    material: {E: 1.0e5, nu: 0.4, density: 1000}
    transform: {translate: [0, 0.2, 0]}
boundary_conditions:
  - select: {axis: x, end: min, within: 0.01}
    motion: [{rotate: {axis: [1, 0, 0], angular_velocity: -3.0}}]
  - select: {axis: x, end: max, within: 0.01}
    motion: [{rotate: {axis: [1, 0, 0], angular_velocity: 3.0}}]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], friction: 0.3}
solver: {cn_epsilon: 1.0e-9}
)");
}

std::vector<double> RunScene(MPI_Comm comm, const SceneConfig& scene) {
  FemSimulation sim(comm, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  std::vector<double> state = sim.GatherPositions();
  const std::vector<double> v = sim.GatherVelocities();
  state.insert(state.end(), v.begin(), v.end());
  return state;
}

TEST(FemRankInvariance, SameTrajectoryAsOneRankToSolverTolerance) {
  const SceneConfig scene = TwistScene();
  const std::vector<double> parallel = RunScene(PETSC_COMM_WORLD, scene);
  // Rank 0 runs the same scene alone; everyone compares against it.
  std::vector<double> serial(parallel.size());
  if (test::Rank() == 0) serial = RunScene(PETSC_COMM_SELF, scene);
  MPI_Bcast(serial.data(), static_cast<int>(serial.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double worst_x = 0.0, worst_v = 0.0, scale_v = 0.0;
  const size_t half = parallel.size() / 2;
  for (size_t i = 0; i < half; ++i) worst_x = std::max(worst_x, std::abs(parallel[i] - serial[i]));
  for (size_t i = half; i < parallel.size(); ++i) {
    worst_v = std::max(worst_v, std::abs(parallel[i] - serial[i]));
    scale_v = std::max(scale_v, std::abs(serial[i]));
  }
  EXPECT_LT(worst_x, 1e-6) << "positions differ from the 1-rank run (m)";
  EXPECT_LT(worst_v, 1e-5 * scale_v) << "velocities differ from the 1-rank run";
  EXPECT_GT(scale_v, 0.1) << "the scene should actually move";
}

TEST(FemRankInvariance, SameRanksGiveBitwiseIdenticalResults) {
  const SceneConfig scene = TwistScene();
  const std::vector<double> first = RunScene(PETSC_COMM_WORLD, scene);
  const std::vector<double> second = RunScene(PETSC_COMM_WORLD, scene);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(test::DifferingValues(first, second), 0u);
}

}  // namespace
}  // namespace optistep

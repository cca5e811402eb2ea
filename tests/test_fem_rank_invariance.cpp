// The same scene on any number of ranks gives the same trajectory to solver tolerance,
// and the same scene on the same ranks gives bitwise the same result. The scene is a
// small twisted bar (DOT's twist test shape) with FCR, Dirichlet rotation at both ends,
// gravity and a ground: nonlinear, constrained, in contact.
#include <gtest/gtest.h>

#include <cmath>

#include "FemSceneRun.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"

namespace optistep {
namespace {

TEST(FemRankInvariance, SameTrajectoryAsOneRankToSolverTolerance) {
  const SceneConfig scene = test::TwistedBarScene("rank_invariance");
  const std::vector<double> parallel = test::RunFemScene(PETSC_COMM_WORLD, scene);
  // Rank 0 runs the same scene alone; everyone compares against it.
  std::vector<double> serial(parallel.size());
  if (test::Rank() == 0) serial = test::RunFemScene(PETSC_COMM_SELF, scene);
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
  const SceneConfig scene = test::TwistedBarScene("rank_invariance");
  const std::vector<double> first = test::RunFemScene(PETSC_COMM_WORLD, scene);
  const std::vector<double> second = test::RunFemScene(PETSC_COMM_WORLD, scene);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(test::DifferingValues(first, second), 0u);
}

}  // namespace
}  // namespace optistep

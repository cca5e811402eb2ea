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
  const test::OneRankComparison c =
      test::CompareWithOneRank([&](MPI_Comm comm) { return test::RunFemScene(comm, scene); });
  EXPECT_LT(c.worst_x, 1e-6) << "positions differ from the 1-rank run (m)";
  EXPECT_LT(c.worst_v, 1e-5 * c.scale_v) << "velocities differ from the 1-rank run";
  EXPECT_GT(c.scale_v, 0.1) << "the scene should actually move";
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

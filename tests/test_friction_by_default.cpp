// Coulomb friction as a scene gets it without a friction key (FEM, integrator
// backward_euler: friction.model defaults to IPC's lagged smoothed potential, Li et al.
// 2020 Sec. 5; io/SceneConfig.hpp DefaultFrictionModel), on 1, 2 and 4 ranks, at the
// frame step dt = 1/24 s and at dt = 1/240 s: a stiff 1 x 0.5 x 0.5 m block on the
// penalty ground y = 0 under gravity tilted by theta = 30 degrees (the slope),
//  - sliding (mu = 0.2 < tan theta): the mean velocity gains a = g (sin theta - mu cos
//    theta) per second, to 1%;
//  - sticking (mu = 0.8 > tan theta): from rest, the mean displacement along the slope over
//    1.5 s stays below what 1% of g sin theta would give, 0.01 g sin theta (1.5 s)^2 / 2 =
//    55.2 mm. Friction after the solve (Gast et al. 2015 Sec. 5.2) moves this block 0.81 m
//    at dt = 1/24 s and 90 mm at 1/240 s; the potential 2.6 mm at both (IPC's static creep
//    r eps_v, docs/methods/friction.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "TestScenes.hpp"
#include "app/FemSimulation.hpp"

namespace optistep {
namespace {

constexpr double kTheta = M_PI / 6.0, kG = 9.81;

/// Collective: the block on the slope with friction mu and steps of dt (s), the scene
/// without a friction key. Returns the mean node displacement along the slope (m) and mean
/// node velocity along it (m/s) after each step, for `steps` steps.
void BlockOnSlope(double mu, double dt, int steps, std::vector<double>* along,
                  std::vector<double>* speed) {
  const std::string dir = test::SharedTempDir("friction_default");
  test::WriteBoxMesh(dir + "/block", 2, 1, 1, Vec3(1.0, 0.5, 0.5));
  char head[256];
  std::snprintf(head, sizeof head,
                "gravity: [%.17g, %.17g, 0]\ntime: {dt: %.17g, frame_dt: %.17g, frames: 1}\n",
                kG * std::sin(kTheta), -kG * std::cos(kTheta), dt, dt);
  char ground[160];
  std::snprintf(ground, sizeof ground,
                "  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], stiffness: 1.0e5, "
                "friction: %.17g}\n",
                mu);
  // The block's bottom 8 mm deep in the penalty ground, near where it carries the weight.
  const SceneConfig scene = test::MakeScene(dir + "/slope.yaml", std::string(head) + R"(bodies:
  - mesh: block.node
    material: {E: 1.0e7, nu: 0.3, density: 1000}
    transform: {translate: [0, -0.008, 0]}
collision_objects:
)" + ground + "solver: {cn_epsilon: 1.0e-8}\n");
  ASSERT_EQ(scene.friction.model, "potential") << "the FEM default";
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  auto mean_x = [](const std::vector<double>& a) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size(); i += 3) s += a[i];
    return s / static_cast<double>(a.size() / 3);
  };
  const double x0 = mean_x(sim.GatherPositions());
  along->clear();
  speed->clear();
  for (int n = 0; n < steps; ++n) {
    sim.AdvanceFrame(nullptr);
    along->push_back(mean_x(sim.GatherPositions()) - x0);
    speed->push_back(mean_x(sim.GatherVelocities()));
  }
}

class FrictionByDefault : public ::testing::TestWithParam<double> {};

/// mu = 0.2: a = 9.81 (sin 30 - 0.2 cos 30) = 3.2059 m/s^2; backward Euler gives a constant
/// acceleration exactly in the velocity, measured between 0.25 s (after the block has
/// dropped into the penalty contact) and 0.75 s.
TEST_P(FrictionByDefault, SlidingBlockHasCoulombAcceleration) {
  const double dt = GetParam(), mu = 0.2;
  const double a = kG * (std::sin(kTheta) - mu * std::cos(kTheta));
  const int early = static_cast<int>(std::lround(0.25 / dt)), late = static_cast<int>(std::lround(0.75 / dt));
  std::vector<double> along, speed;
  BlockOnSlope(mu, dt, late, &along, &speed);
  const double measured = (speed[late - 1] - speed[early - 1]) / 0.5;
  PetscPrintf(PETSC_COMM_WORLD, "dt 1/%.0f s, mu 0.2: a %.6f m/s^2, Coulomb %.6f (%+.3f%%)\n", 1.0 / dt,
              measured, a, 100.0 * (measured - a) / a);
  EXPECT_NEAR(measured, a, 0.01 * a) << "acceleration along the slope (m/s^2)";
}

/// mu = 0.8: over 1.5 s from rest the block moves less along the slope than a body
/// accelerated at 1% of g sin theta would, 0.01 g sin theta 1.5^2 / 2 = 55.2 mm.
TEST_P(FrictionByDefault, BlockSticksWhenMuExceedsTanTheta) {
  const double dt = GetParam(), span = 1.5;
  const double bound = 0.5 * 0.01 * kG * std::sin(kTheta) * span * span;
  EXPECT_NEAR(bound, 0.0551813, 1e-6);
  const int steps = static_cast<int>(std::lround(span / dt));
  std::vector<double> along, speed;
  BlockOnSlope(0.8, dt, steps, &along, &speed);
  double worst = 0.0;
  for (double d : along) worst = std::max(worst, std::abs(d));
  PetscPrintf(PETSC_COMM_WORLD, "dt 1/%.0f s, mu 0.8: displacement along the slope after 1.5 s %.4e m "
              "(at most %.4e m; bound %.4e m), mean speed at the end %.3e m/s\n", 1.0 / dt, along.back(),
              worst, bound, speed.back());
  EXPECT_LT(worst, bound) << "drift along the slope (m)";
}

INSTANTIATE_TEST_SUITE_P(StepSizes, FrictionByDefault, ::testing::Values(1.0 / 24.0, 1.0 / 240.0));

}  // namespace
}  // namespace optistep

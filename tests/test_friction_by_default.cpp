// Coulomb friction as a FEM scene gets it without a friction key (integrator
// backward_euler: friction.model defaults to IPC's lagged smoothed potential, Li et al.
// 2020 Sec. 5; io/SceneSections.hpp DefaultFrictionModel), on 1, 2 and 4 ranks, at the frame
// step dt = 1/24 s and at dt = 1/240 s; and MPM with `friction.model: potential` asked for
// (MPM's default stays after_solve: docs/methods/friction.md) at the frame step. A block on
// the ground y = 0 under gravity tilted by theta = 30 degrees (the slope): FEM a stiff
// 1 x 0.5 x 0.5 m block of 12 nodes on the penalty ground; MPM a 0.4 x 0.2 x 0.2 m block on
// a coarse grid (dx = 0.1 m, 128 particles) on a slip ground (friction on the slip nodes),
//  - sliding (mu = 0.2 < tan theta): the mean velocity gains a = g (sin theta - mu cos
//    theta) per second, to 1%;
//  - sticking (mu = 0.8 > tan theta): from rest, the mean displacement along the slope over
//    1.5 s stays below what 1% of g sin theta would give, 0.01 g sin theta (1.5 s)^2 / 2 =
//    55.2 mm. Friction after the solve (Gast et al. 2015 Sec. 5.2) moves the FEM block
//    0.81 m at dt = 1/24 s and 90 mm at 1/240 s, the MPM block 0.12 m at 1/24 s; the
//    potential 2.6 mm (FEM) and 1.1-1.2 mm (MPM) at both (IPC's static creep r eps_v,
//    docs/methods/friction.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "MethodComparison.hpp"
#include "ScopedOptions.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "app/MpmSimulation.hpp"
#include "core/Phases.hpp"

namespace optistep {
namespace {

constexpr double kTheta = M_PI / 6.0, kG = 9.81;

/// The scene's first lines: gravity tilted by theta, one step of dt (s) per frame.
std::string SlopeHead(double dt) {
  char head[256];
  std::snprintf(head, sizeof head,
                "gravity: [%.17g, %.17g, 0]\ntime: {dt: %.17g, frame_dt: %.17g, frames: 1}\n",
                kG * std::sin(kTheta), -kG * std::cos(kTheta), dt, dt);
  return head;
}

/// The FEM block's scene, written to a new folder: friction mu, steps of dt (s), no
/// friction key; `extra` appended.
std::string FemSlopeScene(double mu, double dt, const std::string& extra = "") {
  const std::string dir = test::SharedTempDir("friction_default");
  test::WriteBoxMesh(dir + "/block", 2, 1, 1, Vec3(1.0, 0.5, 0.5));
  char ground[160];
  std::snprintf(ground, sizeof ground,
                "  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], stiffness: 1.0e5, "
                "friction: %.17g}\n",
                mu);
  // The block's bottom 8 mm deep in the penalty ground, near where it carries the weight.
  test::MakeScene(dir + "/slope.yaml", SlopeHead(dt) + R"(bodies:
  - mesh: block.node
    material: {E: 1.0e7, nu: 0.3, density: 1000}
    transform: {translate: [0, -0.008, 0]}
collision_objects:
)" + ground + "solver: {cn_epsilon: 1.0e-8}\n" + extra);
  return dir + "/slope.yaml";
}

/// Collective: the FEM block on the slope with friction mu and steps of dt (s), the scene
/// without a friction key. Returns the mean node displacement along the slope (m) and mean
/// node velocity along it (m/s) after each step, for `steps` steps.
void FemBlockOnSlope(double mu, double dt, int steps, std::vector<double>* along,
                     std::vector<double>* speed) {
  const SceneConfig scene = ReadSceneConfig(FemSlopeScene(mu, dt));
  ASSERT_EQ(ToString(scene.friction.model), "potential") << "the FEM default";
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

/// Collective: as FemBlockOnSlope for the MPM block (the particles' centre of mass).
void MpmBlockOnSlope(double mu, double dt, int steps, std::vector<double>* along,
                     std::vector<double>* speed) {
  const std::string dir = test::SharedTempDir("friction_default_mpm");
  char ground[160];
  std::snprintf(ground, sizeof ground,
                "  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], boundary: slip, "
                "friction: %.17g}\n",
                mu);
  const SceneConfig scene = test::MakeScene(dir + "/slope.yaml", "discretization: mpm\nmpm: {dx: 0.1, ppc: 8}\n" +
                                                                     SlopeHead(dt) + R"(bodies:
  - shape: {type: box, min: [0, 0, 0], max: [0.4, 0.2, 0.2]}
    material: {E: 1.0e6, nu: 0.3, density: 1000}
collision_objects:
)" + ground + "friction: {model: potential}\nsolver: {cn_epsilon: 1.0e-9}\n");
  MpmSimulation sim(PETSC_COMM_WORLD, scene);
  auto centre = [&sim](double* x_c, double* v_c) {
    std::vector<double> x, v, m;
    sim.GatherParticles(&x, &v, &m);
    double mass = 0.0, xm = 0.0, vm = 0.0;
    for (std::size_t p = 0; p < m.size(); ++p) {
      mass += m[p];
      xm += m[p] * x[3 * p];
      vm += m[p] * v[3 * p];
    }
    *x_c = xm / mass;
    *v_c = vm / mass;
  };
  double x0 = 0.0, v0 = 0.0;
  centre(&x0, &v0);
  along->clear();
  speed->clear();
  for (int n = 0; n < steps; ++n) {
    sim.AdvanceFrame(nullptr);
    double x = 0.0, v = 0.0;
    centre(&x, &v);
    along->push_back(x - x0);
    speed->push_back(v);
  }
}

/// The block on the slope of either discretization ("fem", "mpm").
void BlockOnSlope(const std::string& discretization, double mu, double dt, int steps,
                  std::vector<double>* along, std::vector<double>* speed) {
  if (discretization == "fem") FemBlockOnSlope(mu, dt, steps, along, speed);
  else MpmBlockOnSlope(mu, dt, steps, along, speed);
}

/// (discretization, dt in s)
class FrictionByDefault : public ::testing::TestWithParam<std::tuple<const char*, double>> {};

/// mu = 0.2: a = 9.81 (sin 30 - 0.2 cos 30) = 3.2059 m/s^2; backward Euler gives a constant
/// acceleration exactly in the velocity, measured between 0.25 s (after the block has
/// dropped into the penalty contact) and 0.75 s.
TEST_P(FrictionByDefault, SlidingBlockHasCoulombAcceleration) {
  const auto [discretization, dt] = GetParam();
  const double mu = 0.2;
  const double a = kG * (std::sin(kTheta) - mu * std::cos(kTheta));
  const int early = static_cast<int>(std::lround(0.25 / dt)), late = static_cast<int>(std::lround(0.75 / dt));
  std::vector<double> along, speed;
  BlockOnSlope(discretization, mu, dt, late, &along, &speed);
  ASSERT_EQ(static_cast<int>(speed.size()), late);
  const double measured = (speed[late - 1] - speed[early - 1]) / 0.5;
  PetscPrintf(PETSC_COMM_WORLD, "%s, dt 1/%.0f s, mu 0.2: a %.6f m/s^2, Coulomb %.6f (%+.3f%%)\n", discretization,
              1.0 / dt, measured, a, 100.0 * (measured - a) / a);
  EXPECT_NEAR(measured, a, 0.01 * a) << "acceleration along the slope (m/s^2)";
}

/// mu = 0.8: over 1.5 s from rest the block moves less along the slope than a body
/// accelerated at 1% of g sin theta would, 0.01 g sin theta 1.5^2 / 2 = 55.2 mm.
TEST_P(FrictionByDefault, BlockSticksWhenMuExceedsTanTheta) {
  const auto [discretization, dt] = GetParam();
  const double span = 1.5;
  const double bound = 0.5 * 0.01 * kG * std::sin(kTheta) * span * span;
  EXPECT_NEAR(bound, 0.0551813, 1e-6);
  const int steps = static_cast<int>(std::lround(span / dt));
  std::vector<double> along, speed;
  BlockOnSlope(discretization, 0.8, dt, steps, &along, &speed);
  ASSERT_EQ(static_cast<int>(along.size()), steps);
  double worst = 0.0;
  for (double d : along) worst = std::max(worst, std::abs(d));
  PetscPrintf(PETSC_COMM_WORLD, "%s, dt 1/%.0f s, mu 0.8: displacement along the slope after 1.5 s %.4e m "
              "(at most %.4e m; bound %.4e m), mean speed at the end %.3e m/s\n", discretization, 1.0 / dt,
              along.back(), worst, bound, speed.back());
  EXPECT_LT(worst, bound) << "drift along the slope (m)";
}

INSTANTIATE_TEST_SUITE_P(FemDefault, FrictionByDefault,
                         ::testing::Combine(::testing::Values("fem"), ::testing::Values(1.0 / 24.0, 1.0 / 240.0)));
INSTANTIATE_TEST_SUITE_P(MpmPotentialAtTheFrameStep, FrictionByDefault,
                         ::testing::Combine(::testing::Values("mpm"), ::testing::Values(1.0 / 24.0)));

/// A step with the friction potential solves several times (lagged_updates: 3, the
/// normal forces lagged again at each result); under L-BFGS its initializer_applications
/// (stats.csv) count the applications of H0^-1 of all of them: as many as the PETSc event
/// around each application (solvers/Initializer.cpp) counted during the step, and at least
/// one per L-BFGS iteration.
TEST(FrictionPotential, LbfgsStepCountsTheInitializerOfEverySolve) {
  test::StartPetscLogging();
  StartPhaseLogging();
  test::RecordedRun<FemSimulation> run(
      FemSlopeScene(0.8, 1.0 / 24.0, "friction: {lagged_updates: 3}\n"), {"solver.method=lbfgs"});
  ASSERT_EQ(ToString(run.scene().friction.model), "potential");
  for (int n = 0; n < 4; ++n) {
    const int before = test::EventCount("OsInitializerApply");
    run.Step();
    const int applied = test::EventCount("OsInitializerApply") - before;
    ASSERT_EQ(run.records().size(), static_cast<std::size_t>(n + 1));
    const SolveReport& r = run.records().back().solve;
    SCOPED_TRACE("step " + std::to_string(n + 1));
    EXPECT_EQ(run.records().back().method, "lbfgs");
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.initializer_applications, applied) << "H0^-1 applications of the step's solves";
    EXPECT_GE(r.initializer_applications, r.iterations);
    EXPECT_GT(applied, 0);
  }
}

/// The stats.csv column `refreshes` counts the L-BFGS refreshes of H0^-1 of all the step's
/// solves, not the last one's alone: with a stall trigger that fires at nearly every
/// iteration (-lbfgs_refresh_stall 0.999 over a window of 1), each of the step's 3 solves
/// sets H0^-1 up once and then refreshes it, each set-up or refresh one event around
/// the initializer's set-up (solvers/LbfgsMinimizer.cpp).
TEST(FrictionPotential, LbfgsStepCountsTheRefreshesOfEverySolve) {
  test::StartPetscLogging();
  StartPhaseLogging();
  const test::ScopedOptions scoped(std::vector<std::pair<std::string, std::string>>{
      {"-lbfgs_refresh_stall", "0.999"}, {"-lbfgs_refresh_stall_window", "1"}});
  test::RecordedRun<FemSimulation> run(
      FemSlopeScene(0.8, 1.0 / 24.0, "friction: {lagged_updates: 3}\n"), {"solver.method=lbfgs"});
  ASSERT_EQ(ToString(run.scene().friction.model), "potential");
  int refreshed_steps = 0;
  for (int n = 0; n < 4; ++n) {
    const int before = test::EventCount("OsInitializerSetUp");
    run.Step();
    const int set_ups = test::EventCount("OsInitializerSetUp") - before;
    ASSERT_EQ(run.records().size(), static_cast<std::size_t>(n + 1));
    const StepRecord& record = run.records().back();
    SCOPED_TRACE("step " + std::to_string(n + 1));
    ASSERT_TRUE(record.solve.converged);
    EXPECT_EQ(record.solve.refreshes, set_ups - 3) << "set-ups of H0^-1 in the step: one per solve, and the refreshes";
    ASSERT_FALSE(record.extra.empty());
    EXPECT_EQ(record.extra.back(), record.solve.refreshes) << "the stats.csv column";
    refreshed_steps += record.solve.refreshes > 0;
  }
  EXPECT_GT(refreshed_steps, 0) << "the trigger fired in no step: the test checks nothing";
}

}  // namespace
}  // namespace optistep

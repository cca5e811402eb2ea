// FEM Coulomb friction as a lagged, smoothed potential inside the minimization (Li et al.
// 2020, "Incremental Potential Contact", Sec. 5; fem/FrictionPotential.hpp), on 1, 2 and 4
// ranks:
//  - the friction term's gradient and Hessian against central finite differences, with
//    nodes in both branches of IPC's mollifier f_0;
//  - a block on a slope (gravity tilted by theta against a ground y = 0):
//    sliding (mu < tan theta) accelerates at a = g (sin theta - mu cos theta), sticking
//    (mu > tan theta) creeps at the smoothed model's static speed r eps_v only, r the root
//    in [0, 1] of f_1(r eps_v h) = 2 r - r^2 = tan theta / mu, at dt = 1/24 s and 1/96 s;
//  - the same block sticking (mu = 0.8) at small steps (dt = 1/960 s, 1/2400 s), with
//    either friction model: its bounce on the penalty ground and the rocking decay.
#include <gtest/gtest.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>

#include "TestScenes.hpp"
#include "FiniteDifferences.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "fem/FemIncrementalPotential.hpp"

namespace optistep {
namespace {

using test::RandomField;

/// eps_v h = 0.5 m/s * 0.02 s = 0.01 m against displacements of up to 0.02 m per
/// component: some contact nodes are in f_0's cubic branch, some in its linear one.
TEST(FemFrictionPotential, GradientAndHessianMatchFiniteDifferences) {
  const std::string dir = test::SharedTempDir("friction_fd");
  test::WriteBoxMesh(dir + "/box", 3, 2, 2, Vec3(1.5, 1.0, 1.0));
  const std::string plain_text = R"(
time: {dt: 0.02, frame_dt: 0.02, frames: 1}
bodies:
  - mesh: box.node
    material: {E: 1.0e4, nu: 0.3, density: 100}
collision_objects:
  - {type: half_space, point: [0, 0.1, 0], normal: [0, 1, 0], stiffness: 1.0e5, friction: 0.4}
  - {type: sphere, center: [0.75, 1.4, 0.5], radius: 0.5, friction: 0.7}
)";
  const SceneConfig scene = test::MakeScene(dir + "/scene.yaml",
                                            plain_text + "friction: {model: potential, epsilon_v: 0.5}\n");

  FemSimulation sim(PETSC_COMM_WORLD, scene);
  FemIncrementalPotential potential(sim.model(), 0.0);
  ASSERT_TRUE(potential.HasFrictionPotential());
  Vec x = sim.positions(), v = sim.velocities();
  potential.BeginStep(x, v, 0.02, 0.02);
  Vec y, d, g, gp, gm;
  for (Vec* w : {&y, &d, &g, &gp, &gm}) OPTISTEP_PETSC(VecDuplicate(x, w));
  RandomField(y, 0.02, 11);
  OPTISTEP_PETSC(VecAXPY(y, 1.0, x));
  RandomField(d, 1.0, 12);
  const double h = 1e-7;
  const auto [fd_energy, gd] = test::EnergyDifferenceAndSlope(potential, y, d, h, g, gp, gm);
  EXPECT_NEAR(fd_energy, gd, 1e-6 * std::abs(gd) + 1e-8);

  // The friction term alone (its Hessian is exact: IPC's f_0 makes it positive
  // semidefinite without projection; the sphere's penalty Hessian is Gauss-Newton, not
  // exact): the difference of two potentials, with the friction term and with friction
  // after the solve (FEM's default is the potential, so that one asks for after_solve).
  const SceneConfig frictionless =
      test::MakeScene(dir + "/plain.yaml", plain_text + "friction: {model: after_solve}\n");

  FemSimulation plain_sim(PETSC_COMM_WORLD, frictionless);
  FemIncrementalPotential plain(plain_sim.model(), 0.0);
  plain.BeginStep(x, v, 0.02, 0.02);
  const double friction_energy = potential.Energy(y) - plain.Energy(y);
  EXPECT_GT(friction_energy, 0.0) << "no node in frictional contact";
  const test::TermHessianCheck c = test::CheckTermHessian(potential, plain, y, d, h);
  EXPECT_GT(c.norm, 0.0) << "no friction Hessian";
  EXPECT_LT(c.error, 1e-5 * c.norm) << "friction: |H d - FD| vs |H d| = " << c.norm;
  EXPECT_GT(c.curvature, 0.0) << "the friction Hessian is not positive semidefinite";

  for (Vec* w : {&y, &d, &g, &gp, &gm}) VecDestroy(w);
}

/// The scene of SlopeRun and RockingRun: a stiff 1 x 0.5 x 0.5 m block 8 mm deep in the
/// penalty ground y = 0, gravity tilted by theta, friction mu, steps of dt; `tag` names its
/// temporary folder. Collective.
SceneConfig SlopeScene(const std::string& tag, double theta, double mu, double dt,
                       const std::string& friction_block) {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/block", 2, 1, 1, Vec3(1.0, 0.5, 0.5));
  const double g = 9.81;
  char gravity[128];
  std::snprintf(gravity, sizeof(gravity), "[%.17g, %.17g, 0]", g * std::sin(theta),
                -g * std::cos(theta));
  char time[128];
  std::snprintf(time, sizeof(time), "{dt: %.17g, frame_dt: %.17g, frames: 1}", dt, dt);
  return test::MakeScene(dir + "/slope.yaml", std::string("gravity: ") +
      gravity + "\ntime: " + time + R"(
bodies:
  - mesh: block.node
    material: {E: 1.0e7, nu: 0.3, density: 1000}
    transform: {translate: [0, -0.008, 0]}
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], stiffness: 1.0e5, friction: )" +
      std::to_string(mu) + "}\n" + friction_block +
      "solver: {cn_epsilon: 1.0e-8}\n");
}

/// Collective: a stiff 1 x 0.5 x 0.5 m block resting on the ground y = 0 under gravity
/// tilted by theta (the slope), friction mu with `model`, steps of dt; settles for
/// `settle` s, then returns the mean node displacement along the slope (m) and the mean
/// velocity change (m/s) over the following `span` s, in *drift and *dv. friction_block:
/// the scene's friction key.
void SlopeRun(double theta, double mu, double dt, double settle, double span, double* drift,
              double* dv,
              const std::string& friction_block = "friction: {model: potential}\n") {
  const SceneConfig scene = SlopeScene("slope", theta, mu, dt, friction_block);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  auto mean = [](const std::vector<double>& a) {
    double s = 0.0;
    for (size_t i = 0; i < a.size(); i += 3) s += a[i];
    return s / static_cast<double>(a.size() / 3);
  };
  const int settle_steps = static_cast<int>(std::lround(settle / dt));
  const int span_steps = static_cast<int>(std::lround(span / dt));
  for (int n = 0; n < settle_steps; ++n) sim.AdvanceFrame(nullptr);
  const double x0 = mean(sim.GatherPositions()), v0 = mean(sim.GatherVelocities());
  for (int n = 0; n < span_steps; ++n) {
    sim.AdvanceFrame(nullptr);
    if (getenv("SLOPE_DEBUG")) {
      const auto p = sim.GatherPositions(), w = sim.GatherVelocities();
      double my = 1e9;
      for (size_t i = 1; i < p.size(); i += 3) my = std::min(my, p[i]);
      PetscPrintf(PETSC_COMM_WORLD, "  t %.4f x %.6e v %.6e ymin %.6e\n", (n + 1) * dt, mean(p) - x0, mean(w), my);
    }
  }
  *drift = mean(sim.GatherPositions()) - x0;
  *dv = mean(sim.GatherVelocities()) - v0;
}

class FrictionOnASlope : public ::testing::TestWithParam<double> {};

/// theta = 30 deg, mu = 0.2: a = g (sin theta - mu cos theta) = 3.2057 m/s^2. Backward
/// Euler gives a constant acceleration exactly in the velocity; friction is mu times the
/// lagged normal force, which in steady sliding is the block's weight component m g cos
/// theta however it is shared among the contact nodes.
TEST_P(FrictionOnASlope, SlidingBlockHasCoulombAcceleration) {
  const double theta = M_PI / 6.0, mu = 0.2, g = 9.81, dt = GetParam();
  const double a = g * (std::sin(theta) - mu * std::cos(theta));
  EXPECT_NEAR(a, 3.205858, 1e-6);
  double drift = 0.0, dv = 0.0;
  SlopeRun(theta, mu, dt, 0.25, 0.5, &drift, &dv);
  PetscPrintf(PETSC_COMM_WORLD, "dt %.5f: sliding acceleration %.6f m/s^2 (Coulomb %.6f)\n", dt,
              dv / 0.5, a);
  EXPECT_NEAR(dv / 0.5, a, 0.01 * a);
  // With IPC's outer iterations (normal forces and normals lagged again twice per step).
  SlopeRun(theta, mu, dt, 0.25, 0.5, &drift, &dv, "friction: {model: potential, lagged_updates: 3}\n");
  PetscPrintf(PETSC_COMM_WORLD, "dt %.5f, 3 lagged updates: sliding acceleration %.6f m/s^2\n", dt,
              dv / 0.5);
  EXPECT_NEAR(dv / 0.5, a, 0.01 * a);
}

/// theta = 30 deg, mu = 0.8 > tan theta = 0.577: the block sticks. IPC's smoothed static
/// friction holds a tangential load F_T < mu lambda with a creep of speed r eps_v, where
/// f_1(r eps_v h) = 2 r - r^2 = F_T / (mu lambda) = tan theta / mu (eq. 15): r = 1 -
/// sqrt(1 - tan theta / mu) = 0.4724, independent of dt. After 2 s of settling (the
/// penalty contact's vibration decays slowly at small dt), asserted: the drift over the
/// next 1 s is r eps_v 1 s to 25% (at eps_v = 1e-5 m/s and dt = 1/96 s the vibration's
/// remainder is comparable to the creep), and below
/// eps_v 1 s (1 mm at IPC's eps_v = 1e-3 m/s; 10 um at 1e-5 m/s).
TEST_P(FrictionOnASlope, BlockSticksWhenMuExceedsTanTheta) {
  const double theta = M_PI / 6.0, mu = 0.8, dt = GetParam();
  const double r = 1.0 - std::sqrt(1.0 - std::tan(theta) / mu);
  EXPECT_NEAR(r, 0.472447, 1e-6);
  for (const double eps_v : {1e-3, 1e-5}) {
    double drift = 0.0, dv = 0.0;
    SlopeRun(theta, mu, dt, 2.0, 1.0, &drift, &dv,
             "friction: {model: potential, epsilon_v: " + std::to_string(eps_v) + "}\n");
    PetscPrintf(PETSC_COMM_WORLD, "dt %.5f eps_v %.0e: drift in 1 s %.4e m (r eps_v %.4e m)\n",
                dt, eps_v, drift, r * eps_v);
    EXPECT_NEAR(drift, r * eps_v, 0.25 * r * eps_v);
    EXPECT_LT(std::abs(drift), eps_v * 1.0);
  }
}

/// Collective: the block of SlopeRun (theta = 30 deg, mu = 0.8 > tan theta, friction
/// block `friction_block`, steps of dt) for `span` s from rest 8 mm deep in the penalty
/// ground; per window of `window` s the largest (a) mean square node speed and (b) spread
/// of the contact nodes' (y < 1 mm at rest) tangential velocities v_x (m/s), in *ke and
/// *spread, one entry per window.
void RockingRun(double dt, double span, double window, const std::string& friction_block,
                std::vector<double>* ke, std::vector<double>* spread) {
  const SceneConfig scene = SlopeScene("rocking", M_PI / 6.0, 0.8, dt, friction_block);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const std::vector<double> X = sim.GatherPositions();
  const int steps = static_cast<int>(std::lround(span / dt)), per = static_cast<int>(std::lround(window / dt));
  ke->clear();
  spread->clear();
  for (int n = 0; n < steps; ++n) {
    sim.AdvanceFrame(nullptr);
    if (n % per == 0) {
      ke->push_back(0.0);
      spread->push_back(0.0);
    }
    const std::vector<double> v = sim.GatherVelocities();
    double sq = 0.0, lo = INFINITY, hi = -INFINITY;
    for (std::size_t i = 0; i < v.size(); i += 3) {
      sq += v[i] * v[i] + v[i + 1] * v[i + 1] + v[i + 2] * v[i + 2];
      if (X[i + 1] < 0.001) {
        lo = std::min(lo, v[i]);
        hi = std::max(hi, v[i]);
      }
    }
    ke->back() = std::max(ke->back(), sq / static_cast<double>(v.size() / 3));
    spread->back() = std::max(spread->back(), hi - lo);
  }
}

class RockingOnASlope : public ::testing::TestWithParam<std::tuple<double, const char*>> {};

/// At small dt a rocking motion grows (docs/methods/contact.md). The block starts 8 mm deep in
/// the penalty ground and bounces on it (backward Euler hardly damps at small dt); with
/// either friction model the bounce and the rocking it drives must decay, not grow: over
/// 1 s at dt = 1/960 s and 1/2400 s, asserted that the largest mean square node speed in
/// the last 0.3 s is below 0.75 of the first 0.1 s's, and the largest spread of the
/// contact nodes' tangential velocities in the last 0.3 s below that of the first 0.3 s.
/// (The 4 x 1 x 1 m bar of configs/block_on_slope.yaml does rock ever more at
/// dt = 1/960 s without contact damping: tests/test_fem_contact_damping.cpp.)
TEST_P(RockingOnASlope, DoesNotGrow) {
  const auto [dt, model] = GetParam();
  std::vector<double> ke, spread;
  RockingRun(dt, 1.0, 0.1, std::string("friction: {model: ") + model + "}\n", &ke, &spread);
  for (std::size_t w = 0; w < ke.size(); ++w)
    PetscPrintf(PETSC_COMM_WORLD, "%s dt 1/%.0f: t [%.1f, %.1f) s: max mean |v|^2 %.3e m^2/s^2, contact v_x spread %.3e m/s\n",
                model, 1.0 / dt, 0.1 * w, 0.1 * (w + 1), ke[w], spread[w]);
  ASSERT_EQ(ke.size(), 10u);
  const double ke_late = *std::max_element(ke.end() - 3, ke.end());
  const double spread_early = *std::max_element(spread.begin(), spread.begin() + 3);
  const double spread_late = *std::max_element(spread.end() - 3, spread.end());
  EXPECT_LT(ke_late, 0.75 * ke.front());
  EXPECT_LT(spread_late, spread_early);
}

INSTANTIATE_TEST_SUITE_P(SmallSteps, RockingOnASlope,
                         ::testing::Combine(::testing::Values(1.0 / 960.0, 1.0 / 2400.0),
                                            ::testing::Values("after_solve", "potential")));

INSTANTIATE_TEST_SUITE_P(StepSizes, FrictionOnASlope, ::testing::Values(1.0 / 24.0, 1.0 / 96.0));

}  // namespace
}  // namespace optistep

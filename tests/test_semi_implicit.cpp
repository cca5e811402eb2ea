// integrator: semi_implicit (Schroeder, Kwatra, Zheng, Fedkiw 2010, Sec. 3.1;
// integrators/FemSemiImplicit.hpp) against closed-form answers, on 1, 2 and 4 ranks:
//  - free fall is the exact parabola x0 + v0 t + g t^2 / 2, v0 + g t;
//  - on a linear oscillator (one free node of one tet), every step is the scheme's step
//    matrix; undamped, its discrete amplitude factor and period (derived below);
//  - stable at its CFL step, unstable at 2 and 4 times it, on a box mesh;
//  - rank invariance (to round-off) and bitwise repeatability and restart.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "FemRunChecks.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "integrators/FemSemiImplicit.hpp"

namespace optistep {
namespace {

using test::MakeScene;
using test::SharedTempDir;
using test::WriteBoxMesh;

TEST(SemiImplicit, FreeFallIsExact) {
  const SceneConfig scene = test::FreeFallScene("si_fall", "semi_implicit", 3, 2, 2);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  test::ExpectFreeFall(sim, scene, test::kFallVelocity, test::kFallGravity);
  EXPECT_GT(sim.steps(), 20) << "the CFL limit should cut the 0.01 s steps";
}

/// One tet: nodes 0..2 fixed at z = 0, node 3 at (0, 0, 1) free, linear elasticity with
/// nu = 0: along z node 3 has stiffness k = E V = 100 N/m and lumped mass m = rho V / 4 =
/// 1 kg (E = 600 Pa, rho = 24 kg/m^3), so w^2 = k / m = 100 / s^2; started at rest shape
/// with v = (0, 0, 1) m/s, it stays on z. Rayleigh damping f = -beta k v gives c = beta w^2.
///
/// Derivation, one step of the scheme on x'' = -w^2 x - c x' (u = displacement):
///   v_half = (v - dt/2 w^2 u) / (1 + dt/2 c)          (damping implicit in v_half)
///   u'     = u + dt v_half
///   v'     = (v - dt w^2 u') / (1 + dt c)              (damping implicit in v')
/// a linear map (u, v) -> A (u, v). Without damping, in (u, v/w) and s = w dt:
///   A = [[1 - s^2/2, s], [-s (1 - s^2/2), 1 - s^2]],  det A = 1 - s^2/2,
///   tr A = 2 - 3 s^2/2: eigenvalues r e^(+-i theta) with r = sqrt(1 - s^2/2) (the amplitude
///   factor per step) and cos theta = (1 - 3 s^2/4) / r (the period is 2 pi dt / theta).
///   Cayley-Hamilton: A^n = r^(n-1) (sin(n theta) A - r sin((n-1) theta) I) / sin(theta), so
///   from (0, v0/w): u_n = r^(n-1) sin(n theta) / sin(theta) s v0 / w.
/// At s = 0.1: r = 0.997497, theta = 0.1001359 (period 62.747 steps, against 2 pi / s =
/// 62.832 for the exact oscillator).
/// Collective: the one-tet oscillator scene below (node 3 free), semi_implicit, with
/// `extra` scene lines appended.
SceneConfig OneTetScene(const std::string& tag, const std::string& extra) {
  const std::string dir = SharedTempDir(tag);
  test::WriteUnitTet(dir);
  return MakeScene(dir + "/tet.yaml", R"(
integrator: semi_implicit
gravity: [0, 0, 0]
time: {dt: 1, frame_dt: 1, frames: 1}
bodies:
  - mesh: tet.node
    material: {model: linear, E: 600, nu: 0, density: 24}
    initial_velocity: [0, 0, 1]
boundary_conditions:
  - select: {box: {min: [-1, -1, -1], max: [2, 2, 0.5]}}
)" + extra);
}

struct OscillatorRun {
  std::vector<double> u, v;  ///< z displacement and velocity of node 3 after each step
};

OscillatorRun RunOscillator(const std::string& tag, double dt, int steps, double beta) {
  const SceneConfig scene =
      OneTetScene(tag, "damping: {stiffness_beta: " + std::to_string(beta) + "}\n");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  OscillatorRun run;
  for (int n = 0; n < steps; ++n) {
    EXPECT_TRUE(sim.integrator().TryStep(dt).converged);
    const std::vector<double> x = sim.GatherPositions(), v = sim.GatherVelocities();
    EXPECT_EQ(x[9], 0.0);
    EXPECT_EQ(x[10], 0.0);
    // The Dirichlet nodes 0..2 stay exactly at rest.
    const double rest[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    for (int i = 0; i < 9; ++i) EXPECT_EQ(x[i], rest[i]) << "Dirichlet coordinate " << i;
    run.u.push_back(x[11] - 1.0);
    run.v.push_back(v[11]);
  }
  return run;
}

TEST(SemiImplicit, OscillatorPeriodAndAmplitude) {
  const double w = 10.0, dt = 0.01, s = w * dt, v0 = 1.0;
  const double r = std::sqrt(1.0 - s * s / 2.0);
  const double theta = std::acos((1.0 - 0.75 * s * s) / r);
  EXPECT_NEAR(r, 0.99749686716, 1e-11);
  EXPECT_NEAR(theta, 0.1001358510, 1e-9);
  const int steps = 126;  // two discrete periods
  const OscillatorRun run = RunOscillator("si_osc", dt, steps, 0.0);
  double worst = 0.0;
  for (int n = 1; n <= steps; ++n) {
    const double u = std::pow(r, n - 1) * std::sin(n * theta) / std::sin(theta) * s * v0 / w;
    // v/w is the second row of A^n applied to (0, v0/w): r^(n-1)/sin(theta) (sin(n theta)
    // A22 - r sin((n-1) theta)) v0/w with A22 = 1 - s^2.
    const double v = std::pow(r, n - 1) / std::sin(theta) *
                     (std::sin(n * theta) * (1.0 - s * s) - r * std::sin((n - 1) * theta)) * v0;
    worst = std::max({worst, std::abs(run.u[n - 1] - u) / (v0 / w), std::abs(run.v[n - 1] - v) / v0});
  }
  EXPECT_LT(worst, 1e-8) << "relative deviation from the derived discrete solution";
  // The amplitude factor and the period, from the run: the energy-like invariant of A
  // decays by r^2 per step, and the zero crossings of u are pi / theta steps apart.
  int crossing = 0;
  for (int n = 1; n < steps && !crossing; ++n)
    if (run.u[n - 1] > 0.0 && run.u[n] <= 0.0) crossing = n;
  EXPECT_EQ(crossing, static_cast<int>(std::floor(M_PI / theta)));
  PetscPrintf(PETSC_COMM_WORLD,
              "semi_implicit oscillator: amplitude factor %.12f / step, period %.6f s "
              "(exact oscillator %.6f s), worst relative deviation %.2e\n",
              r, 2.0 * M_PI * dt / theta, 2.0 * M_PI / w, worst);
}

TEST(SemiImplicit, DampedOscillatorFollowsTheStepMatrix) {
  const double w2 = 100.0, dt = 0.02, beta = 0.05, c = beta * w2;
  const OscillatorRun run = RunOscillator("si_damped", dt, 50, beta);
  double u = 0.0, v = 1.0, worst = 0.0;
  for (int n = 0; n < 50; ++n) {
    const double v_half = (v - 0.5 * dt * w2 * u) / (1.0 + 0.5 * dt * c);
    u += dt * v_half;
    v = (v - dt * w2 * u) / (1.0 + dt * c);
    worst = std::max({worst, std::abs(run.u[n] - u) * 10.0, std::abs(run.v[n] - v)});
  }
  // CG's tolerance (rtol 1e-10 on a 1-unknown-per-direction system) bounds the deviation.
  EXPECT_LT(worst, 1e-8);
  EXPECT_LT(std::abs(run.v.back()), 0.2) << "damping should take energy out";
}

/// Collective: a linear-elastic box perturbed at random (deterministic, by node id) from
/// its rest shape, stepped 300 times at `multiple` times its CFL step; the growth of the
/// largest displacement (inf if the state blew up).
double Growth(double multiple, double* dt_cfl) {
  const std::string dir = SharedTempDir("si_cfl");
  WriteBoxMesh(dir + "/box", 4, 3, 3, Vec3(1.0, 0.6, 0.6));
  const SceneConfig scene = MakeScene(dir + "/cfl.yaml", R"(
integrator: semi_implicit
gravity: [0, 0, 0]
time: {dt: 1, frame_dt: 1, frames: 1}
bodies:
  - mesh: box.node
    material: {model: linear, E: 1.0e6, nu: 0.3, density: 1000}
)");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const std::vector<double> X = sim.GatherPositions();
  const DistributedTetMesh& mesh = sim.model().mesh();
  PetscScalar* xa = nullptr;
  OPTISTEP_PETSC(VecGetArray(sim.positions(), &xa));
  for (PetscInt l = 0; l < mesh.n_owned; ++l)
    for (int d = 0; d < 3; ++d) {
      const unsigned k = static_cast<unsigned>(3 * mesh.node_original_id[l] + d) * 2654435761u;
      xa[3 * l + d] += 1e-4 * ((k % 2001u) / 1000.0 - 1.0);
    }
  OPTISTEP_PETSC(VecRestoreArray(sim.positions(), &xa));
  auto largest = [&] {
    const std::vector<double> x = sim.GatherPositions();
    double m = 0.0;
    for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - X[i]));
    return m;
  };
  const double start = largest();
  *dt_cfl = sim.integrator().MaxStep();
  for (int n = 0; n < 300; ++n)
    if (!sim.integrator().TryStep(multiple * *dt_cfl).converged) return INFINITY;
  const double end = largest();
  return std::isfinite(end) ? end / start : INFINITY;
}

TEST(SemiImplicit, StableAtTheCflStepUnstableAtTwiceIt) {
  double dt_cfl = 0.0;
  const double at_cfl = Growth(1.0, &dt_cfl);
  // c_d = sqrt((lambda + 2 mu) / rho) = 37.2 m/s on 0.2 m elements: dt_cfl is a few
  // c_d / h; the bound is the element eigenvalue inequality (FemSemiImplicit.hpp).
  const double c_d = std::sqrt(1.0e6 * 0.7 / (1.3 * 0.4) / 1000.0);
  EXPECT_NEAR(c_d, 36.69, 0.01);
  EXPECT_GT(dt_cfl, 0.01 * 0.15 / c_d);
  EXPECT_LT(dt_cfl, 0.15 / c_d);
  EXPECT_LT(at_cfl, 2.0) << "growth of the perturbation over 300 steps at dt_cfl = " << dt_cfl;
  double unused = 0.0;
  const double at_four = Growth(4.0, &unused);
  EXPECT_GT(at_four, 1e6) << "growth at 4 dt_cfl";
  const double at_two = Growth(2.0, &unused);
  EXPECT_GT(at_two, 1e6) << "growth at 2 dt_cfl";
  PetscPrintf(PETSC_COMM_WORLD,
              "semi_implicit CFL: dt_cfl %.4e s; growth over 300 steps x1 %.3g, x2 %.3g, x4 %.3g\n",
              dt_cfl, at_cfl, at_two, at_four);
}

/// Single tet: the bound w_e >= the true largest frequency 10 / s (node 3 along z).
TEST(SemiImplicit, ElementFrequencyBoundsTheOscillator) {
  const SceneConfig scene = OneTetScene("si_bound", "");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const auto& integrator = dynamic_cast<FemSemiImplicit&>(sim.integrator());
  EXPECT_GE(integrator.MaxElementFrequency(), 10.0);
  EXPECT_DOUBLE_EQ(integrator.MaxStep(), std::sqrt(2.0) / integrator.MaxElementFrequency());
}

/// A bar twisted at one end (Dirichlet rotation), gravity, a penalty ground, optional
/// Rayleigh damping: 4 frames of CFL-limited steps.
SceneConfig BarScene(const std::string& tag, const std::vector<std::string>& overrides = {}) {
  const std::string dir = SharedTempDir(tag);
  WriteBoxMesh(dir + "/bar", 6, 2, 2, Vec3(2.0, 0.5, 0.5));
  std::vector<std::string> all = {"output.directory=" + dir + "/out"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return MakeScene(dir + "/bar.yaml", R"(
integrator: semi_implicit
time: {dt: 0.02, frame_dt: 0.02, frames: 4}
gravity: [0, -9.81, 0]
bodies:
  - mesh: bar.node
    material: {E: 1.0e5, nu: 0.4, density: 1000}
    transform: {translate: [0, 0.02, 0]}
boundary_conditions:
  - select: {axis: x, end: min, within: 0.01}
    motion: [{rotate: {axis: [1, 0, 0], angular_velocity: 3.0}}]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0]}
)", all);
}

class SemiImplicitBar : public ::testing::TestWithParam<double> {};

TEST_P(SemiImplicitBar, SameTrajectoryOnAnyRanksBitwiseOnTheSame) {
  const SceneConfig scene =
      BarScene("si_ranks", {"damping.stiffness_beta=" + std::to_string(GetParam())});
  EXPECT_GT(test::ExpectSameOnAnyRanks(scene, 1e-9), 8.0) << "CFL-limited: more than 2 steps per frame";
}

TEST_P(SemiImplicitBar, ResumedMidFrameIsBitwiseTheUninterruptedRun) {
  const SceneConfig scene =
      BarScene("si_restart", {"damping.stiffness_beta=" + std::to_string(GetParam())});
  test::ExpectResumedBitwise(scene, 2, 0);
}

INSTANTIATE_TEST_SUITE_P(Damping, SemiImplicitBar, ::testing::Values(0.0, 0.002));

}  // namespace
}  // namespace optistep

// FEM verification against closed-form answers, on 1, 2 and 4 ranks:
//  - backward-Euler linear oscillator: amplitude x 1/sqrt(1 + w^2 dt^2) per step,
//    energy x (1 + w^2 dt^2)^-100 = 0.369711 after 100 steps (w = 10, dt = 0.01);
//  - free fall: x_n = x_0 + v_0 t_n - g t_n (t_n + dt) / 2, also for bodies of E = 1e5 to
//    1e20 Pa with the default tolerances (to the rigid-motion test's tolerance); a very
//    stiff box resting on a penalty ground: the contact forces 3 k m_i phi_i^2 sum to its
//    weight;
//  - column under self-weight (nu = 0, base fixed): settlement rho g (2 H y - y^2) / (2E).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"

namespace optistep {
namespace {

using test::MakeScene;
using test::SharedTempDir;
using test::WriteBoxMesh;

/// One tet: nodes 0..2 fixed at z = 0, node 3 at (0, 0, 1) free. Linear elasticity with
/// nu = 0 gives node 3 the stiffness mu V diag(1, 1, 2), so along z k = E V = E / 6;
/// its lumped mass is rho V / 4. E = 600, rho = 24 give k = 100 N/m and m = 1 kg.
TEST(FemVerification, BackwardEulerOscillator) {
  const std::string dir = SharedTempDir("oscillator");
  test::WriteUnitTet(dir);
  const SceneConfig scene = MakeScene(dir + "/oscillator.yaml", R"(
gravity: [0, 0, 0]
time: {dt: 0.01, frame_dt: 0.01, frames: 100}
bodies:
  - mesh: tet.node
    material: {model: linear, E: 600, nu: 0, density: 24}
    initial_velocity: [0, 0, 1]
boundary_conditions:
  - select: {box: {min: [-1, -1, -1], max: [2, 2, 0.5]}}
solver: {cn_epsilon: 1.0e-12}
)");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const double m = 1.0, k = 100.0, omega_dt = 10.0 * 0.01;
  auto energy = [&] {
    const std::vector<double> x = sim.GatherPositions(), v = sim.GatherVelocities();
    const Vec3 u(x[9], x[10], x[11] - 1.0), w(v[9], v[10], v[11]);
    return 0.5 * m * w.squaredNorm() + 0.5 * k * u.squaredNorm();
  };
  const double e0 = energy();
  EXPECT_NEAR(e0, 0.5, 1e-14);
  double previous = e0;
  for (int step = 1; step <= 100; ++step) {
    sim.AdvanceFrame(nullptr);
    const double e = energy();
    // Amplitude factor per step 1/sqrt(1 + w^2 dt^2) = 0.995037...
    EXPECT_NEAR(std::sqrt(e / previous), 1.0 / std::sqrt(1.0 + omega_dt * omega_dt), 1e-8)
        << "step " << step;
    previous = e;
  }
  EXPECT_NEAR(previous / e0, 0.369711, 5e-7);
}

/// Collective: a 1.5 x 1 x 1 m box thrown in free fall for 10 steps, with `overrides` on
/// the scene below; the largest deviation (m) of a node from the backward-Euler parabola
/// x_n = x_0 + v_0 t_n + g t_n (t_n + dt) / 2.
double FreeFallDeviation(const std::string& tag, const std::vector<std::string>& overrides) {
  const std::string dir = SharedTempDir(tag);
  WriteBoxMesh(dir + "/box", 3, 2, 2, Vec3(1.5, 1.0, 1.0));
  const SceneConfig scene = MakeScene(dir + "/fall.yaml", R"(
gravity: [0, -9.81, 0]
time: {dt: 0.025, frame_dt: 0.025, frames: 10}
bodies:
  - mesh: box.node
    material: {E: 1.0e5, nu: 0.3, density: 1000}
)", overrides);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const std::vector<double> x0 = sim.GatherPositions();
  for (int n = 1; n <= 10; ++n) sim.AdvanceFrame(nullptr);
  const double dt = scene.time.dt, t = 10 * dt;
  const Vec3 shift = scene.bodies[0].initial_velocity * t + scene.gravity * t * (t + dt) / 2.0;
  const std::vector<double> x = sim.GatherPositions();
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - (x0[i] + shift[i % 3])));
  return worst;
}

TEST(FemVerification, FreeFallIsExact) {
  const double worst = FreeFallDeviation(
      "freefall", {"time.dt=0.05", "time.frame_dt=0.05", "bodies.0.initial_velocity=[0.5,2.0,-0.25]",
                   "solver.cn_epsilon=1e-12"});
  EXPECT_LT(worst, 1e-10) << "largest deviation from x0 + v0 t - g t (t + dt) / 2";
}

/// Stiff bodies fall as soft ones do (the reason for the rigid-motion test: with the elastic characteristic norm alone a
/// body of E = 1e14 Pa fell 0.05 m instead of 0.34 m in 10 steps, and at E >= 1e20 hovered,
/// every step reported converged). With the solver's defaults, 10 steps of 0.025 s from
/// rest: every node drops by g t (t + dt) / 2 = 0.3372188 m (backward Euler), to what the
/// termination allows.
class StiffFreeFall : public ::testing::TestWithParam<double> {};

TEST_P(StiffFreeFall, DropsByTheBackwardEulerDistance) {
  const double dt = 0.025, t = 10 * dt;
  EXPECT_NEAR(9.81 * t * (t + dt) / 2.0, 0.3372188, 1e-7);
  const double worst =
      FreeFallDeviation("stifffall", {"bodies.0.material.E=" + std::to_string(GetParam())});
  // Each step's rigid motion is right to the rigid-motion test, rigid_epsilon g dt^2 =
  // 6.1e-6 m (solvers/ConvergenceTest.hpp): 10 steps, 6.1e-5 m. (The free-fall start makes
  // it exact to round-off.)
  EXPECT_LT(worst, 10 * 1e-3 * 9.81 * dt * dt)
      << "E = " << GetParam() << " Pa: largest deviation from the drop (m)";
}

INSTANTIATE_TEST_SUITE_P(Stiffness, StiffFreeFall, ::testing::Values(1e5, 1e9, 1e14, 1e17, 1e20));

/// A stiff box (E = 1e15 Pa) dropped 0.05 m onto a penalty ground comes to rest carried by
/// the ground: the contact forces of its bottom nodes, 3 k m_i phi_i^2 each at penetration
/// phi_i (Gast et al. 2015 Sec. 5.2), add up to its weight M g. (The box rests slightly
/// tilted: the Kuhn split lumps the masses unevenly, and the contact force is per unit
/// mass.) The fall ends in contact, where the exact free-fall start no longer helps: the
/// steps are right only if the termination sees the net force of the residual, which the
/// elastic characteristic norm of so stiff a body does not (without the rigid-motion test
/// the ground carried 78% of the weight). After 1 s of backward Euler, which damps the
/// bounce, the contact force is M g to 1e-3.
TEST(FemVerification, StiffBoxRestsOnTheContactForce) {
  const std::string dir = SharedTempDir("stiffrest");
  WriteBoxMesh(dir + "/box", 2, 1, 2, Vec3(1.0, 0.5, 1.0));
  const SceneConfig scene = MakeScene(dir + "/rest.yaml", R"(
gravity: [0, -9.81, 0]
time: {dt: 0.025, frame_dt: 0.025, frames: 40}
bodies:
  - mesh: box.node
    transform: {translate: [0, 0.05, 0]}
    material: {E: 1.0e15, nu: 0.3, density: 1000}
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], stiffness: 1.0e5}
)");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  const FemModel& model = sim.model();
  const DistributedTetMesh& mesh = model.mesh();
  const PetscScalar* x = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.positions(), &x));
  double force = 0.0, deepest = 0.0;
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    const double phi = std::min(0.0, x[3 * l + 1]);  // the ground is y = 0
    force += 3.0 * 1.0e5 * model.Mass(static_cast<int>(l)) * phi * phi;
    deepest = std::min(deepest, phi);
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.positions(), &x));
  MPI_Allreduce(MPI_IN_PLACE, &force, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &deepest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  const double weight = model.TotalMass() * 9.81;
  EXPECT_NEAR(model.TotalMass(), 1000.0 * 0.5, 1e-9);
  PetscPrintf(PETSC_COMM_WORLD, "stiff box at rest: contact force %.6e N, weight %.6e N, deepest %.3e m\n",
              force, weight, deepest);
  EXPECT_NEAR(force, weight, 1e-3 * weight) << "the ground does not carry the box's weight";
}

/// A 1 x 25 x 1 column (y up) of 25 layers, base fixed, linear elasticity with nu = 0,
/// under gravity: the static settlement is u(y) = rho g (2 H y - y^2) / (2 E), at the top
/// rho g H^2 / (2 E) = 0.0613125 m for H = 25, E = 5e4, rho = 1, g = 9.81. One
/// backward-Euler step of 1000 s from rest is the static solve to within (m/dt^2)/k ~ 1e-11.
/// P1 tets are not nodally exact in 3D: the Kuhn split of each hex loads the four corners
/// of a layer unevenly, so single corners deviate by up to 1.5%; the settlement averaged
/// over each layer's four nodes matches u(y) to 2e-5 relative, and that is what is checked.
TEST(FemVerification, ColumnUnderSelfWeight) {
  const std::string dir = SharedTempDir("column");
  WriteBoxMesh(dir + "/column", 1, 25, 1, Vec3(1.0, 25.0, 1.0));
  const SceneConfig scene = MakeScene(dir + "/column.yaml", R"(
gravity: [0, -9.81, 0]
time: {dt: 1000, frame_dt: 1000, frames: 1}
bodies:
  - mesh: column.node
    material: {model: linear, E: 5.0e4, nu: 0, density: 1}
boundary_conditions:
  - select: {axis: y, end: min, within: 0.001}
solver: {cn_epsilon: 1.0e-10, forcing_sigma: 1.0e-6}
)");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  sim.AdvanceFrame(nullptr);
  const std::vector<double> x = sim.GatherPositions();
  // Node n = i + 2 (j + 26 k): layer j = (n / 2) % 26, four nodes per layer.
  std::vector<double> settlement(26, 0.0);
  for (size_t n = 0; n < x.size() / 3; ++n) {
    const int j = static_cast<int>((n / 2) % 26);
    settlement[j] += (j - x[3 * n + 1]) / 4.0;
  }
  const double top = 9.81 * 25.0 * 25.0 / (2.0 * 5.0e4);
  EXPECT_NEAR(top, 0.0613125, 1e-16);
  EXPECT_NEAR(settlement[25], top, 5e-5 * top);
  for (int j = 0; j <= 25; ++j)
    EXPECT_NEAR(settlement[j], 9.81 / (2.0 * 5.0e4) * (2.0 * 25.0 * j - j * j), 5e-5 * top)
        << "layer " << j;
}

}  // namespace
}  // namespace optistep

// XPBD with small steps on tet meshes (integrator: xpbd; integrators/FemXpbd.hpp; Macklin et
// al. 2019). Against closed forms and the backward-Euler optimization integrator:
//  - the same scene on these ranks and on one rank: bitwise the same trajectory (the colored
//    Gauss-Seidel order does not depend on the rank count), and Dirichlet nodes exactly on
//    their scripted targets;
//  - free fall: v = v0 + g t and x = x0 + v0 t + g t (t + dt_s) / 2 (symplectic Euler over
//    the substeps, the sequence backward Euler takes too) to round-off, undeformed, and the
//    frames' per-tet force estimates lambda / dt_s^2 are the rest shape's closed form
//    (-sqrt(3) mu V0 deviatoric, mu V0 hydrostatic);
//  - a box hanging from its top face, settled: the forces its tets' force estimates put on the
//    held nodes add up to the weight of the free nodes (to 1e-3);
//  - internal constraints conserve linear momentum to round-off; angular momentum drifts by
//    O(dt_s) (halving dt_s must halve it);
//  - contacts: no node below the ground after any step, and a block sliding on the ground with
//    Coulomb friction mu stops after v0^2 / (2 mu g);
//  - xpbd.order: jacobi (averaged corrections) is rank-invariant too, and free fall under it
//    is the same closed form;
//  - the depenetration speed limit v_max (Sec. 4.2): a box started entirely below the ground
//    by d rises by exactly v_max dt_s per substep, rigidly, and is out after d / (v_max dt_s)
//    substeps, at no more than v_max;
//  - a slow (quasi-static) stretch: XPBD approaches backward Euler as the substeps grow (to
//    1.2, 0.55, 0.46 mm of a 5 cm pull at 10, 50, 200 substeps: the rest is the two stable
//    Neo-Hookean energies' difference at 5% strain, with and without the log term).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "FemSceneRun.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/GhostedVector.hpp"
#include "fem/TetElement.hpp"
#include "integrators/FemXpbd.hpp"
#include "materials/Material.hpp"

namespace optistep {
namespace {

/// The twisted bar of the rank-invariance suite (TestScenes.hpp) under XPBD: stable
/// Neo-Hookean, 10 substeps, a little damping.
SceneConfig TwistScene() {
  return test::TwistedBarScene("xpbd_twist",
                               {"integrator=xpbd", "xpbd.substeps=10", "damping.stiffness_beta=0.001",
                                "bodies.0.material.model=stable_neo_hookean"});
}

class FemXpbdOrder : public ::testing::TestWithParam<std::string> {};

TEST_P(FemXpbdOrder, SameTrajectoryBitwiseOnAnyRankCount) {
  SceneConfig scene = TwistScene();
  ASSERT_TRUE(FromString(GetParam(), &scene.xpbd.order)) << GetParam();
  const test::OneRankComparison c =
      test::CompareWithOneRank([&](MPI_Comm comm) { return test::RunFemScene(comm, scene); });
  const std::vector<double>& parallel = c.parallel;
  EXPECT_EQ(test::DifferingValues(parallel, c.serial), 0u) << "against the 1-rank run";
  const std::vector<double> again = test::RunFemScene(PETSC_COMM_WORLD, scene);
  EXPECT_EQ(test::DifferingValues(parallel, again), 0u) << "same ranks, second run";
  double speed = 0.0;
  for (size_t i = parallel.size() / 2; i < parallel.size(); ++i)
    speed = std::max(speed, std::abs(parallel[i]));
  EXPECT_GT(speed, 0.5) << "the bar should actually twist";
}

INSTANTIATE_TEST_SUITE_P(Orders, FemXpbdOrder, ::testing::Values("coloring", "jacobi"));

TEST(FemXpbd, DirichletNodesFollowTheirScript) {
  const SceneConfig scene = TwistScene();
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  const FemModel& model = sim.model();
  const PetscScalar* x = nullptr;
  VecGetArrayRead(sim.positions(), &x);
  double worst = 0.0;
  int held = 0;
  for (PetscInt l = 0; l < model.mesh().n_owned; ++l) {
    if (!model.IsConstrained(static_cast<int>(l))) continue;
    const Vec3 target = model.DirichletTarget(static_cast<int>(l), sim.time());
    for (int d = 0; d < 3; ++d) worst = std::max(worst, std::abs(x[3 * l + d] - target[d]));
    ++held;
  }
  VecRestoreArrayRead(sim.positions(), &x);
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &held, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  EXPECT_EQ(held, 18);
  EXPECT_EQ(worst, 0.0) << "m";
}

/// A free 1 x 0.5 x 0.5 m box (4 x 2 x 2 hexes) thrown upward, no obstacles.
SceneConfig FreeBox(const std::string& tag, const std::string& extra) {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/box", 4, 2, 2, Vec3(1.0, 0.5, 0.5));
  return test::MakeScene(dir + "/box.yaml", R"(
integrator: xpbd
xpbd: {substeps: 8}
time: {dt: 0.02, frame_dt: 0.04, frames: 5}
bodies:
  - mesh: box.node
    material: {E: 1.0e5, nu: 0.3, density: 1000}
    initial_velocity: [0.5, 2.0, -0.25]
)" + extra);
}

TEST_P(FemXpbdOrder, FreeFallIsTheClosedForm) {
  SceneConfig scene = FreeBox("xpbd_fall_" + GetParam(), "");
  ASSERT_TRUE(FromString(GetParam(), &scene.xpbd.order)) << GetParam();
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const std::vector<double> x0 = sim.GatherPositions();
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  const std::vector<double> x = sim.GatherPositions(), v = sim.GatherVelocities();
  const double t = sim.time(), dt_s = 0.02 / 8;
  EXPECT_NEAR(t, 0.2, 1e-15);
  const Vec3 v0(0.5, 2.0, -0.25), g = scene.gravity;
  double worst_x = 0.0, worst_v = 0.0;
  for (size_t n = 0; n < x.size() / 3; ++n)
    for (int d = 0; d < 3; ++d) {
      const double closed = x0[3 * n + d] + v0[d] * t + 0.5 * g[d] * t * (t + dt_s);
      worst_x = std::max(worst_x, std::abs(x[3 * n + d] - closed));
      worst_v = std::max(worst_v, std::abs(v[3 * n + d] - (v0[d] + g[d] * t)));
    }
  EXPECT_LT(worst_x, 1e-12) << "m";
  EXPECT_LT(worst_v, 1e-10) << "m/s";
  // The frames' force estimates lambda / dt_s^2 (Macklin et al. 2019, Fig. 4) at the rest
  // shape: rhs = -C = (-sqrt(3), mu / lambda_H) and the pair's nodal forces cancel
  // (dC_D/dF = I / sqrt(3), dC_H/dF = I), so alpha~ dlambda = -C: lambda_D / dt_s^2 =
  // -sqrt(3) mu V0 and lambda_H / dt_s^2 = mu V0 per tet, on every tet.
  const auto fields = sim.integrator().FrameCellFields();
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].first, "force_deviatoric");
  EXPECT_EQ(fields[1].first, "force_hydrostatic");
  const MaterialConfig& material = scene.bodies[0].material;
  const double mu = LameParameters::FromYoungPoisson(material.E, material.nu).mu;
  const DistributedTetMesh& mesh = sim.model().mesh();
  double worst_D = 0.0, worst_H = 0.0;
  size_t k = 0;
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    if (!mesh.tet_counted[e]) continue;
    const double muV0 = mu * sim.model().RestVolume(static_cast<int>(e));
    worst_D = std::max(worst_D, std::abs(fields[0].second[k] / (-std::sqrt(3.0) * muV0) - 1.0));
    worst_H = std::max(worst_H, std::abs(fields[1].second[k] / muV0 - 1.0));
    ++k;
  }
  EXPECT_EQ(k, fields[0].second.size());
  MPI_Allreduce(MPI_IN_PLACE, &worst_D, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &worst_H, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  if (test::Rank() == 0)
    std::printf("[ measured ] %s: force estimates at rest against -sqrt(3) mu V0, mu V0: %.3g, %.3g "
                "relative\n", GetParam().c_str(), worst_D, worst_H);
  EXPECT_LT(worst_D, 1e-8);
  EXPECT_LT(worst_H, 1e-8);
}

TEST(FemXpbd, ForceEstimatesOfAHangingBoxCarryItsWeight) {
  // FreeBox hanging from its top face (y = 0.5 m, held), at rest, settled by stiffness damping
  // (2 s). At a steady state every free node's corrections cancel its substep's gravity,
  // sum_t lambda_t grad_a C_t / dt_s^2 = -m_a g, and since grad C sums to zero over a tet's
  // corners the forces the tets put on the held nodes add up to the weight of the free nodes
  // (the tet counterpart of the cloth's corners, from the per-tet force estimates: C_D = F's
  // nine, Lambda_D / dt_s^2, and the frames' force_hydrostatic).
  const SceneConfig scene = FreeBox("xpbd_hanging_box", R"(
boundary_conditions:
  - select: {axis: y, end: max, within: 0.01}
damping: {stiffness_beta: 0.02}
)");
  SceneConfig changed = scene;
  changed.bodies[0].initial_velocity = Vec3::Zero();
  changed.bodies[0].material.density = 100.0;
  changed.time.frames = 50;
  // The tet's forces cancel each other to within the weight's order (at rest each is about
  // mu V0 |beta| = 400 N per tet against 184 N in all), so the check below, which takes the
  // gradients at the final positions rather than where each tet was projected, is good to
  // O(dt_s^2 g / h) of them (1.15 N at 8 substeps, 0.089 N at 32): 32 put it under 1e-3.
  changed.xpbd.substeps = 32;
  FemSimulation sim(PETSC_COMM_WORLD, changed);
  for (int f = 0; f < changed.time.frames; ++f) sim.AdvanceFrame(nullptr);
  const auto fields = sim.integrator().FrameCellFields();
  ASSERT_EQ(fields.size(), 2u);
  const auto* xpbd = dynamic_cast<const FemXpbd*>(&sim.integrator());
  ASSERT_NE(xpbd, nullptr);
  const std::vector<Mat3> deviatoric = xpbd->DeviatoricForceEstimates();
  ASSERT_EQ(deviatoric.size(), fields[1].second.size());
  const FemModel& model = sim.model();
  const DistributedTetMesh& mesh = model.mesh();
  Vec3 on_held = Vec3::Zero();
  double free_mass = 0.0;
  {
    const GhostedLocalView x(sim.positions());
    size_t k = 0;
    for (size_t e = 0; e < mesh.tets.size(); ++e) {
      if (!mesh.tet_counted[e]) continue;
      const Mat3 F = DeformationGradient(TetPositions(x.data(), mesh.tets[e]), model.Beta(static_cast<int>(e)));
      Mat3 cof;
      cof.col(0) = F.col(1).cross(F.col(2));
      cof.col(1) = F.col(2).cross(F.col(0));
      cof.col(2) = F.col(0).cross(F.col(1));
      for (int a = 0; a < 4; ++a) {
        if (!(mesh.X[mesh.tets[e][a]][1] > 0.5 - 1e-9)) continue;  // a held node
        const Vec3 beta = model.Beta(static_cast<int>(e)).col(a);
        on_held += deviatoric[k] * beta + fields[1].second[k] * cof * beta;
      }
      ++k;
    }
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      if (!model.IsConstrained(static_cast<int>(l))) free_mass += model.Mass(static_cast<int>(l));
  }
  MPI_Allreduce(MPI_IN_PLACE, on_held.data(), 3, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &free_mass, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  const double weight = free_mass * 9.81;
  const std::vector<double> v = sim.GatherVelocities();
  double speed = 0.0;
  for (double c : v) speed = std::max(speed, std::abs(c));
  if (test::Rank() == 0)
    std::printf("[ measured ] hanging box: held nodes pulled by (%.6g, %.6g, %.6g) N, weight of the "
                "free nodes %.6g N; largest speed %.3g m/s\n", on_held[0], on_held[1], on_held[2],
                weight, speed);
  EXPECT_LT(speed, 1e-3) << "m/s: settled";
  EXPECT_NEAR(-on_held[1], weight, 1e-3 * weight) << "N";
  EXPECT_NEAR(on_held[0], 0.0, 1e-3 * weight) << "N";
  EXPECT_NEAR(on_held[2], 0.0, 1e-3 * weight) << "N";
}

/// The box of FreeBox without gravity, started with a spinning, shearing, stretching velocity
/// field, run for 0.2 s with `substeps`; the change of its linear and angular momentum
/// (kg m/s, kg m^2/s) and its final angular momentum.
struct MomentumChange {
  Vec3 linear, angular, final_angular;
};
MomentumChange RunSpinningBox(int substeps) {
  const SceneConfig scene = FreeBox("xpbd_momentum", "gravity: [0, 0, 0]\n");
  SceneConfig changed = scene;
  changed.xpbd.substeps = substeps;
  FemSimulation sim(PETSC_COMM_WORLD, changed);
  const FemModel& model = sim.model();
  const PetscInt n_owned = model.mesh().n_owned;
  {
    const PetscScalar* x = nullptr;
    PetscScalar* v = nullptr;
    VecGetArrayRead(sim.positions(), &x);
    VecGetArray(sim.velocities(), &v);
    for (PetscInt l = 0; l < n_owned; ++l) {
      const Vec3 p(x[3 * l] - 0.5, x[3 * l + 1] - 0.25, x[3 * l + 2] - 0.25);
      const Vec3 u = Vec3(0.3, -0.2, 0.1) + Vec3(0.0, 0.0, 4.0).cross(p) +
                     Vec3(2.0 * p[0] + p[1], -p[2], 3.0 * p[0] * p[0]);
      for (int d = 0; d < 3; ++d) v[3 * l + d] = u[d];
    }
    VecRestoreArray(sim.velocities(), &v);
    VecRestoreArrayRead(sim.positions(), &x);
  }
  const auto momenta = [&] {
    const PetscScalar *x = nullptr, *v = nullptr;
    VecGetArrayRead(sim.positions(), &x);
    VecGetArrayRead(sim.velocities(), &v);
    double P[6] = {0, 0, 0, 0, 0, 0};
    for (PetscInt l = 0; l < n_owned; ++l) {
      const double m = model.Mass(static_cast<int>(l));
      const Vec3 xi(x[3 * l], x[3 * l + 1], x[3 * l + 2]), vi(v[3 * l], v[3 * l + 1], v[3 * l + 2]);
      const Vec3 L = m * xi.cross(vi);
      for (int d = 0; d < 3; ++d) {
        P[d] += m * vi[d];
        P[3 + d] += L[d];
      }
    }
    VecRestoreArrayRead(sim.velocities(), &v);
    VecRestoreArrayRead(sim.positions(), &x);
    MPI_Allreduce(MPI_IN_PLACE, P, 6, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    return std::make_pair(Vec3(P[0], P[1], P[2]), Vec3(P[3], P[4], P[5]));
  };
  const auto before = momenta();
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  const auto after = momenta();
  return {after.first - before.first, after.second - before.second, after.second};
}

TEST(FemXpbd, InternalConstraintsConserveMomentum) {
  // Linear momentum: every correction sums to zero (sum_a beta_a = 0), to round-off. Angular
  // momentum sum m x x v with v = (x - x_prev) / dt_s: the corrections' torque vanishes at
  // the predicted positions, not at x_prev, so it drifts by O(dt_s): halving dt_s halves it.
  const MomentumChange coarse = RunSpinningBox(8), fine = RunSpinningBox(16),
                       finer = RunSpinningBox(32);
  const double M = 250.0;  // kg
  EXPECT_LT(coarse.linear.norm(), 1e-12 * M) << "kg m/s";
  EXPECT_LT(fine.linear.norm(), 1e-12 * M) << "kg m/s";
  const double L = coarse.final_angular.norm();
  const double r1 = fine.angular.norm() / coarse.angular.norm();
  const double r2 = finer.angular.norm() / fine.angular.norm();
  if (test::Rank() == 0)
    std::printf("[ measured ] angular momentum drift over 0.2 s: %.3g, %.3g, %.3g kg m^2/s of %.3g "
                "at 8, 16, 32 substeps (ratios %.3f, %.3f)\n",
                coarse.angular.norm(), fine.angular.norm(), finer.angular.norm(), L, r1, r2);
  EXPECT_GT(coarse.angular.norm(), 0.0);
  EXPECT_NEAR(r1, 0.5, 0.02) << "first order in dt_s";
  EXPECT_NEAR(r2, 0.5, 0.02) << "first order in dt_s";
}

TEST(FemXpbd, ContactsHoldAndCoulombFrictionStopsTheBlock) {
  // A stiff 0.4 x 0.1 x 0.4 m block resting on the ground, pushed along it at 1 m/s with
  // mu = 0.5: it slides v0^2 / (2 mu g) = 0.10194 m in v0 / (mu g) = 0.2039 s.
  const std::string dir = test::SharedTempDir("xpbd_friction");
  test::WriteBoxMesh(dir + "/block", 4, 1, 4, Vec3(0.4, 0.1, 0.4));
  const SceneConfig scene = test::MakeScene(dir + "/slide.yaml", R"(
integrator: xpbd
xpbd: {substeps: 20}
time: {dt: 0.01, frame_dt: 0.05, frames: 8}
bodies:
  - mesh: block.node
    material: {E: 1.0e6, nu: 0.3, density: 1000}
    initial_velocity: [1, 0, 0]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], friction: 0.5}
damping: {stiffness_beta: 0.001}
)");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const std::vector<double> x0 = sim.GatherPositions();
  double lowest = 0.0;
  for (int f = 0; f < scene.time.frames; ++f) {
    sim.AdvanceFrame(nullptr);
    const std::vector<double> x = sim.GatherPositions();
    for (size_t n = 0; n < x.size() / 3; ++n) lowest = std::min(lowest, x[3 * n + 1]);
  }
  const std::vector<double> x = sim.GatherPositions(), v = sim.GatherVelocities();
  double slide = 0.0, speed = 0.0;
  for (size_t n = 0; n < x.size() / 3; ++n) {
    slide += (x[3 * n] - x0[3 * n]) / static_cast<double>(x.size() / 3);
    speed = std::max(speed, Vec3(v[3 * n], v[3 * n + 1], v[3 * n + 2]).norm());
  }
  EXPECT_GE(lowest, -1e-12) << "m below the ground";
  const double expected = 1.0 / (2.0 * 0.5 * 9.81);
  EXPECT_NEAR(slide, expected, 0.03 * expected) << "m slid";
  EXPECT_LT(speed, 1e-3) << "m/s: at rest after 0.4 s";
  if (test::Rank() == 0)
    std::printf("[ measured ] slide %.5f m (Coulomb %.5f m), lowest node %.3g m\n", slide, expected,
                lowest);
}

TEST(FemXpbd, DepenetrationSpeedIsLimited) {
  // A 0.4 x 0.1 x 0.4 m box, no gravity, at rest entirely below the ground: top at -0.05 m,
  // bottom at d = 0.15 m deep. v_max = 0.5 m/s, dt_s = 1 ms: 0.5 mm per substep, out after
  // d / (v_max dt_s) = 300 substeps (30 steps of 10), rigidly, and on at v_max (no gravity).
  const std::string dir = test::SharedTempDir("xpbd_depenetration");
  test::WriteBoxMesh(dir + "/block", 4, 1, 4, Vec3(0.4, 0.1, 0.4));
  const SceneConfig scene = test::MakeScene(dir + "/sunk.yaml", R"(
integrator: xpbd
xpbd: {substeps: 10, max_depenetration_speed: 0.5}
gravity: [0, 0, 0]
time: {dt: 0.01, frame_dt: 0.01, frames: 32}
bodies:
  - mesh: block.node
    transform: {translate: [0, -0.15, 0]}
    material: {E: 1.0e6, nu: 0.3, density: 1000}
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0]}
)");
  const double d = 0.15, v_max = 0.5, per_step = 10 * v_max * 1e-3;
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const auto lowest = [&] {
    const std::vector<double> x = sim.GatherPositions();
    double y = 1e30;
    for (size_t n = 0; n < x.size() / 3; ++n) y = std::min(y, x[3 * n + 1]);
    return y;
  };
  ASSERT_NEAR(lowest(), -d, 1e-15);
  double worst = 0.0, fastest = 0.0;
  int out_after = -1;
  for (int k = 1; k <= scene.time.frames; ++k) {
    sim.AdvanceFrame(nullptr);
    const double y = lowest(), expected = -d + k * per_step;  // and on at v_max once out
    worst = std::max(worst, std::abs(y - expected));
    if (out_after < 0 && y >= -1e-12) out_after = k;
    const std::vector<double> v = sim.GatherVelocities();
    for (size_t i = 0; i < v.size(); ++i) fastest = std::max(fastest, std::abs(v[i]));
  }
  EXPECT_LT(worst, 1e-10) << "m off -d + k v_max dt";
  EXPECT_EQ(out_after, 30) << "steps of 10 substeps: d / (v_max dt_s) = 300 substeps";
  EXPECT_LT(fastest, v_max * (1.0 + 1e-9)) << "m/s";
  EXPECT_GT(fastest, v_max * (1.0 - 1e-9)) << "m/s: it leaves at v_max";
  if (test::Rank() == 0)
    std::printf("[ measured ] lowest node off the limit by at most %.3g m; out after %d steps "
                "(300 substeps); fastest node %.12g m/s (v_max 0.5)\n", worst, out_after, fastest);
}

/// The bar of the quasi-static test under one integrator: a 1 x 0.2 x 0.2 m bar, held at
/// x = 0, its x = 1 end pulled along x at 0.05 m/s for 1 s (5% stretch), no gravity.
std::vector<double> SlowStretch(const std::string& integrator, int substeps = 50) {
  const std::string dir = test::SharedTempDir("xpbd_stretch_" + integrator + std::to_string(substeps));
  test::WriteBoxMesh(dir + "/bar", 5, 1, 1, Vec3(1.0, 0.2, 0.2));
  const SceneConfig scene = test::MakeScene(dir + "/stretch.yaml", R"(
integrator: )" + integrator + R"(
xpbd: {substeps: )" + std::to_string(substeps) + R"(}
gravity: [0, 0, 0]
time: {dt: 0.01, frame_dt: 0.1, frames: 10}
bodies:
  - mesh: bar.node
    material: {model: stable_neo_hookean, E: 1.0e5, nu: 0.3, density: 100}
boundary_conditions:
  - select: {axis: x, end: min, within: 0.01}
  - select: {axis: x, end: max, within: 0.01}
    motion: [{translate: {velocity: [0.05, 0, 0]}}]
damping: {stiffness_beta: 0.01}
solver: {cn_epsilon: 1.0e-9}
)");
  // Each rank runs it alone: 100 steps of up to 200 substeps would be thousands of halo
  // exchanges per step, and XPBD's trajectory does not depend on the rank count (the first
  // test of this suite).
  FemSimulation sim(PETSC_COMM_SELF, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  return sim.GatherPositions();
}

TEST(FemXpbd, SlowStretchApproachesBackwardEuler) {
  const std::vector<double> be = SlowStretch("backward_euler");
  const auto distance = [&](const std::vector<double>& x) {
    double worst = 0.0;
    for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - be[i]));
    return worst;
  };
  const double worst = distance(SlowStretch("xpbd"));
  const double coarse = distance(SlowStretch("xpbd", 10)), fine = distance(SlowStretch("xpbd", 200));
  if (test::Rank() == 0)
    std::printf("[ measured ] XPBD vs backward Euler at 10, 50, 200 substeps: %.3g, %.3g, %.3g m\n",
                coarse, worst, fine);
  // Against the end's 0.05 m travel.
  if (test::Rank() == 0)
    std::printf("[ measured ] XPBD vs backward Euler after a 0.05 m stretch: %.3g m (%.2f%%)\n",
                worst, 100.0 * worst / 0.05);
  EXPECT_LT(worst, 0.05 * 0.05);
  EXPECT_LT(fine, worst);
  EXPECT_LT(worst, coarse);
}

}  // namespace
}  // namespace optistep

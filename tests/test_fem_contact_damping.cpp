// Damping of the FEM penalty contact (fem/ContactDamping.hpp: a dashpot c = 2 zeta
// sqrt(m k_n) along the lagged normal, k_n the cubic penalty's stiffness at the step's
// start), on 1, 2 and 4 ranks:
//  - its gradient and Hessian against central finite differences (a half space and a
//    sphere, nodes in and out of contact);
//  - a stiff regular tet dropped on a face without gravity rebounds with the restitution e(zeta_e) of
//    the continuous model delta'' = -3 k_e delta^2 - 2 sqrt(2) zeta_e sqrt(3 k_e delta)
//    delta' (integrated here by RK4), zeta_e = zeta sqrt(M_b / M), k_e = k M_b / M for a
//    rigid body whose bottom nodes (mass M_b of M) touch;
//  - a damped tet settles on the ground and the contact holds its weight: sum of the
//    nodes' normal forces M g, bottom penetration sqrt(M g / (3 k M_b));
//  - the rocking bar: a 4 x 1 x 1 m bar resting 8 mm deep on a 30 degree slope with mu =
//    0.8 at dt = 1/960 s rocks ever more without contact damping; with it the pitching
//    decays.
#include <gtest/gtest.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <string>
#include <vector>

#include "FiniteDifferences.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "fem/FemIncrementalPotential.hpp"

namespace optistep {
namespace {

using test::RandomField;

/// The damping term alone (the difference of two potentials, with and without it) is
/// quadratic: its Hessian is exact. x_n: the box 8 mm deep in the ground and touching a
/// sphere, with velocities so that x_hat differs from x_n.
TEST(ContactDamping, GradientAndHessianMatchFiniteDifferences) {
  const std::string dir = test::SharedTempDir("damping_fd");
  test::WriteBoxMesh(dir + "/box", 3, 2, 2, Vec3(1.5, 1.0, 1.0));
  const auto scene_text = [](const std::string& damping) {
    return R"(
time: {dt: 0.02, frame_dt: 0.02, frames: 1}
bodies:
  - mesh: box.node
    material: {E: 1.0e4, nu: 0.3, density: 100}
    transform: {translate: [0, -0.008, 0]}
    initial_velocity: [0.3, -0.2, 0.1]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], stiffness: 1.0e5)" + damping + R"(}
  - {type: sphere, center: [0.75, 1.4, 0.5], radius: 0.5)" + damping + R"(}
)";
  };
  const SceneConfig damped = test::MakeScene(dir + "/damped.yaml", scene_text(", damping: 0.7"));
  const SceneConfig plain = test::MakeScene(dir + "/plain.yaml", scene_text(""));
  FemSimulation sim(PETSC_COMM_WORLD, damped), plain_sim(PETSC_COMM_WORLD, plain);
  FemIncrementalPotential potential(sim.model(), 0.0), undamped(plain_sim.model(), 0.0);
  Vec x = sim.positions(), v = sim.velocities();
  potential.BeginStep(x, v, 0.02, 0.02);
  undamped.BeginStep(x, v, 0.02, 0.02);
  Vec y, d, g, gp, gm, fd;
  for (Vec* w : {&y, &d, &g, &gp, &gm, &fd}) OPTISTEP_PETSC(VecDuplicate(x, w));
  RandomField(y, 0.01, 21);
  OPTISTEP_PETSC(VecAXPY(y, 1.0, x));
  RandomField(d, 1.0, 22);
  const double h = 1e-6;
  const auto [fd_energy, gd] = test::EnergyDifferenceAndSlope(potential, y, d, h, g, gp, gm);
  EXPECT_NEAR(fd_energy, gd, 1e-7 * std::abs(gd) + 1e-9);

  const double damping_energy = potential.Energy(y) - undamped.Energy(y);
  EXPECT_GT(damping_energy, 0.0) << "no node in damped contact";
  const test::TermHessianCheck c = test::CheckTermHessian(potential, undamped, y, d, h);
  EXPECT_GT(c.norm, 0.0) << "no damping Hessian";
  EXPECT_LT(c.error, 1e-6 * c.norm) << "damping: |H d - FD| vs |H d| = " << c.norm;
  EXPECT_GT(c.curvature, 0.0) << "the damping Hessian is not positive semidefinite";
  // At x = x_n the dashpots carry no force: the damped and undamped gradients agree.
  potential.Gradient(x, g);
  undamped.Gradient(x, fd);
  OPTISTEP_PETSC(VecAXPY(fd, -1.0, g));
  PetscReal g_norm = 0.0, err = 0.0;
  OPTISTEP_PETSC(VecNorm(g, NORM_2, &g_norm));
  OPTISTEP_PETSC(VecNorm(fd, NORM_2, &err));
  EXPECT_LE(err, 1e-14 * g_norm);
  for (Vec* w : {&y, &d, &g, &gp, &gm, &fd}) VecDestroy(w);
}

/// Restitution of the continuous model u'' = -u^2 - 2 sqrt(2) zeta sqrt(u) u' (delta'' =
/// -3 k delta^2 - 2 zeta sqrt(6 k delta) delta' in units where 3 k A T^2 = 1: the impact
/// speed scales out), from u = 0, u' = 1 until u returns to 0: RK4 with step 1e-4, whose
/// error on e is below 1e-8 (halving the step changes e in the 9th digit).
double ModelRestitution(double zeta) {
  auto f = [zeta](double u, double w) {
    const double s = std::sqrt(std::max(u, 0.0));
    return std::array<double, 2>{w, -s * s * s * s - 2.0 * std::sqrt(2.0) * zeta * s * w};
  };
  const double h = 1e-4;
  double u = 0.0, w = 1.0;
  for (int n = 0; n < 10000000; ++n) {
    const auto k1 = f(u, w);
    const auto k2 = f(u + 0.5 * h * k1[0], w + 0.5 * h * k1[1]);
    const auto k3 = f(u + 0.5 * h * k2[0], w + 0.5 * h * k2[1]);
    const auto k4 = f(u + h * k3[0], w + h * k3[1]);
    const double un = u + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]);
    const double wn = w + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]);
    if (n > 0 && un < 0.0) return -(w + (wn - w) * u / (u - un));
    u = un;
    w = wn;
  }
  return 0.0;
}

/// Collective: over the owned free nodes of sim, {M, M_b} with M_b the mass of the nodes
/// whose position y is below y_bottom.
std::array<double, 2> MassAndBottomMass(FemSimulation& sim, double y_bottom) {
  std::array<double, 2> s = {0.0, 0.0};
  const PetscScalar* xa = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.positions(), &xa));
  for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l) {
    const double m = sim.model().Mass(static_cast<int>(l));
    s[0] += m;
    if (xa[3 * l + 1] < y_bottom) s[1] += m;
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.positions(), &xa));
  MPI_Allreduce(MPI_IN_PLACE, s.data(), 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return s;
}

/// Collective: the mean velocity y component (m/s, mass-weighted) and the sum over nodes of
/// the penalty's normal force 3 k m min(y, 0)^2 (N) against the ground y = 0.
std::array<double, 2> VerticalMomentumAndContactForce(FemSimulation& sim, double k) {
  std::array<double, 3> s = {0.0, 0.0, 0.0};
  const PetscScalar *xa = nullptr, *va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.positions(), &xa));
  OPTISTEP_PETSC(VecGetArrayRead(sim.velocities(), &va));
  for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l) {
    const double m = sim.model().Mass(static_cast<int>(l)), y = std::min(xa[3 * l + 1], 0.0);
    s[0] += m;
    s[1] += m * va[3 * l + 1];
    s[2] += 3.0 * k * m * y * y;
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.positions(), &xa));
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.velocities(), &va));
  MPI_Allreduce(MPI_IN_PLACE, s.data(), 3, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return {s[1] / s[0], s[2]};
}

/// Writes <stem>.node/.ele: a regular tet of edge 0.2 m on a face in the plane y = 0, its
/// apex above the face's centre, so that its 3 face nodes (3/4 of the lumped mass) lie
/// symmetrically about the centre of mass. Rank 0 writes; everyone waits.
void WriteRegularTet(const std::string& stem) {
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) {
    std::ofstream(stem + ".node") << std::setprecision(17) << "4 3 0 0\n0 0 0 0\n1 0.2 0 0\n2 "
                                  << 0.1 << " " << 0.2 * std::sqrt(2.0 / 3.0) << " "
                                  << 0.2 * std::sqrt(3.0) / 6.0 << "\n3 0.1 0 "
                                  << 0.2 * std::sqrt(3.0) / 2.0 << "\n";
    std::ofstream(stem + ".ele") << "1 4 0\n0 0 1 2 3\n";
  }
  MPI_Barrier(PETSC_COMM_WORLD);
}

class DropRebound : public ::testing::TestWithParam<double> {};

/// A stiff regular tet (edge 0.2 m, E = 1e9 Pa: its elastic modes ~1e4 rad/s against the
/// contact's ~43 rad/s, so it moves as a rigid body) standing on a face 0.1 mm above the
/// ground, moving down at v0 = 0.1 m/s without gravity, dt = 1e-4 s (about 850 steps per
/// contact). Its 3 bottom nodes carry M_b = 3/4 M and lie symmetrically about the centre of
/// mass (a box mesh's Kuhn tets do not: their lumped masses tip it, and e came out 0.013
/// high). e = v_out / v0 against the model's e(zeta_e), tolerance 0.008: backward Euler
/// damps the contact oscillation by itself, zeta_num ~ omega dt / 2 with omega = sqrt(6 k_e
/// delta_max) = 43 rad/s, costing up to pi zeta_num = 0.7% of e; the gap halves with dt. The linear
/// spring-dashpot's exp(-pi zeta / sqrt(1 - zeta^2)) at zeta_e is 0.03 to 0.06 higher
/// (printed): the cubic spring's dashpot weakens with the penetration.
TEST_P(DropRebound, RestitutionFollowsTheDampedContactModel) {
  const double zeta = GetParam(), k = 1.0e5, v0 = 0.1, dt = 1e-4;
  const std::string dir = test::SharedTempDir("damping_drop");
  WriteRegularTet(dir + "/tet");
  char text[1024];
  std::snprintf(text, sizeof(text), R"(gravity: [0, 0, 0]
time: {dt: %.17g, frame_dt: %.17g, frames: 1}
bodies:
  - mesh: tet.node
    material: {E: 1.0e9, nu: 0.3, density: 1000}
    transform: {translate: [0, 0.0001, 0]}
    initial_velocity: [0, %.17g, 0]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], stiffness: %.17g, damping: %.17g}
solver: {cn_epsilon: 1.0e-9}
)",
                dt, dt, -v0, k, zeta);
  const SceneConfig scene = test::MakeScene(dir + "/drop.yaml", text);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const auto [M, M_b] = MassAndBottomMass(sim, 0.0005);
  const double zeta_e = zeta * std::sqrt(M_b / M);
  double v_out = 0.0;
  bool touched = false;
  for (int n = 0; n < 20000; ++n) {
    sim.AdvanceFrame(nullptr);
    const auto [v, force] = VerticalMomentumAndContactForce(sim, k);
    if (force > 0.0) touched = true;
    if (touched && force == 0.0) {
      v_out = v;
      break;
    }
  }
  ASSERT_TRUE(touched);
  const double e = v_out / v0, e_model = ModelRestitution(zeta_e);
  PetscPrintf(PETSC_COMM_WORLD,
              "zeta %.2f (zeta_e %.4f, M_b/M %.4f): restitution %.4f, model %.4f, linear spring "
              "exp(-pi z / sqrt(1 - z^2)) %.4f\n",
              zeta, zeta_e, M_b / M, e, e_model,
              std::exp(-M_PI * zeta_e / std::sqrt(1.0 - zeta_e * zeta_e)));
  EXPECT_NEAR(e, e_model, 0.008);
}

INSTANTIATE_TEST_SUITE_P(Ratios, DropRebound, ::testing::Values(0.0, 0.1, 0.3, 0.6));

/// A damped contact holds a body's weight: the regular tet of DropRebound (rigid, E = 1e9
/// Pa) set down touching the ground under gravity at dt = 1/960 s with zeta = 1. After 0.5 s
/// the nodes' normal forces 3 k m_i delta_i^2 sum to M g and the face's penetration is
/// sqrt(M g / (3 k M_b)) = sqrt(4 g / (9 k)) = 6.60 mm (the dashpots carry no force at
/// rest), both to 1e-3. Without damping the tet still bounces then (backward Euler alone
/// damps the contact's ~54 rad/s by zeta_num ~ omega dt / 2 = 0.03 only), so this fails when
/// the dashpot does not act.
TEST(ContactDamping, HoldsTheWeightAtRest) {
  const double k = 1.0e5, g = 9.81, dt = 1.0 / 960.0;
  const double zeta = 1.0;
  const std::string dir = test::SharedTempDir("damping_rest");
  WriteRegularTet(dir + "/tet");
  char text[1024];
  std::snprintf(text, sizeof(text), R"(gravity: [0, %.17g, 0]
time: {dt: %.17g, frame_dt: %.17g, frames: 1}
bodies:
  - mesh: tet.node
    material: {E: 1.0e9, nu: 0.3, density: 1000}
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], stiffness: %.17g, damping: %.17g}
solver: {cn_epsilon: 1.0e-9}
)",
                -g, dt, dt, k, zeta);
  const SceneConfig scene = test::MakeScene(dir + "/rest.yaml", text);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const auto [M, M_b] = MassAndBottomMass(sim, 1e-9);
  for (int n = 0; n < 480; ++n) sim.AdvanceFrame(nullptr);
  const auto [v, force] = VerticalMomentumAndContactForce(sim, k);
  double depth = 0.0;
  const std::vector<double> x = sim.GatherPositions();
  for (std::size_t i = 1; i < x.size(); i += 3) depth = std::max(depth, -x[i]);
  const double expected_depth = std::sqrt(M * g / (3.0 * k * M_b));
  PetscPrintf(PETSC_COMM_WORLD,
              "zeta %.2f at 0.5 s: normal forces %.6f M g, depth %.6e m (sqrt(M g / (3 k M_b)) = "
              "%.6e m), mean v_y %.3e m/s\n",
              zeta, force / (M * g), depth, expected_depth, v);
  EXPECT_NEAR(force, M * g, 1e-3 * M * g);
  EXPECT_NEAR(depth, expected_depth, 1e-3 * expected_depth);
}

/// The RK4 reference itself: at zeta = 0 energy is conserved (e = 1); e falls with zeta,
/// near the linear spring-dashpot's exp(-pi zeta / sqrt(1 - zeta^2)) (the cubic spring's
/// dashpot follows its stiffness, so the two differ by a few hundredths).
TEST(DropReboundModel, Reference) {
  EXPECT_NEAR(ModelRestitution(0.0), 1.0, 1e-9);
  double last = 1.0;
  for (const double zeta : {0.05, 0.1, 0.2, 0.3, 0.5}) {
    const double e = ModelRestitution(zeta);
    EXPECT_LT(e, last);
    EXPECT_NEAR(e, std::exp(-M_PI * zeta / std::sqrt(1.0 - zeta * zeta)), 0.06);
    last = e;
  }
}

}  // namespace
}  // namespace optistep

namespace optistep {
namespace {

/// Collective: the pitch rate omega_z (rad/s) of sim's body: L_z / I_zz about its centre of
/// mass, over the lumped node masses.
double PitchRate(FemSimulation& sim) {
  std::array<double, 8> s{};  // M, M c_x, M c_y, P_x, P_y, sum m (x v_y - y v_x), sum m (x^2 + y^2)
  const PetscScalar *xa = nullptr, *va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.positions(), &xa));
  OPTISTEP_PETSC(VecGetArrayRead(sim.velocities(), &va));
  for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l) {
    const double m = sim.model().Mass(static_cast<int>(l));
    const double x = xa[3 * l], y = xa[3 * l + 1], vx = va[3 * l], vy = va[3 * l + 1];
    s[0] += m;
    s[1] += m * x;
    s[2] += m * y;
    s[3] += m * vx;
    s[4] += m * vy;
    s[5] += m * (x * vy - y * vx);
    s[6] += m * (x * x + y * y);
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.positions(), &xa));
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.velocities(), &va));
  MPI_Allreduce(MPI_IN_PLACE, s.data(), 8, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  const double cx = s[1] / s[0], cy = s[2] / s[0];
  const double L = s[5] - (cx * s[4] - cy * s[3]);
  const double I = s[6] - s[0] * (cx * cx + cy * cy);
  return L / I;
}

/// Collective: the 4 x 1 x 1 m bar of configs/block_on_slope.yaml as a 16 x 4 x 4 box mesh,
/// resting 8 mm deep on the ground y = 0 under gravity tilted by 30 degrees, mu = 0.8 (so it
/// must stick), friction model `model`, contact damping zeta, dt = 1/960 s, for `span` s.
/// Returns per window of 0.1 s the largest |pitch rate| (rad/s).
std::vector<double> SlopeBarPitch(const std::string& model, double zeta, double span) {
  const double dt = 1.0 / 960.0, theta = M_PI / 6.0, g = 9.81;
  const std::string dir = test::SharedTempDir("damping_slope_bar");
  test::WriteBoxMesh(dir + "/bar", 16, 4, 4, Vec3(4.0, 1.0, 1.0));
  char text[1024];
  std::snprintf(text, sizeof(text), R"(gravity: [%.17g, %.17g, 0]
time: {dt: %.17g, frame_dt: %.17g, frames: 1}
bodies:
  - mesh: bar.node
    material: {model: fixed_corotated, E: 1.0e7, nu: 0.3, density: 1000}
    transform: {translate: [0, -0.008, 0]}
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], friction: 0.8, damping: %.17g}
friction: {model: %s}
)",
                g * std::sin(theta), -g * std::cos(theta), dt, dt, zeta, model.c_str());
  const SceneConfig scene = test::MakeScene(dir + "/slope.yaml", text);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const int steps = static_cast<int>(std::lround(span / dt)), per = 96;
  std::vector<double> peak;
  for (int n = 0; n < steps; ++n) {
    sim.AdvanceFrame(nullptr);
    if (n % per == 0) peak.push_back(0.0);
    peak.back() = std::max(peak.back(), std::abs(PitchRate(sim)));
  }
  return peak;
}

class SlopeBarRocking : public ::testing::TestWithParam<const char*> {};

/// At small dt a rocking motion grows (docs/methods/contact.md). The bar drops from 8 mm into
/// the penalty contact and bounces (backward Euler hardly damps it at dt = 1/960 s); the
/// normal force swings, friction lets go once a cycle and pumps the pitching. Without
/// contact damping the largest |pitch rate| per 0.1 s grows; with zeta = 0.5 it decays
/// (after_solve 0.053 0.024 0.018 0.006 0.005 0.002; potential 0.055 0.034 0.018 0.009
/// 0.004 0.001 in the first 0.6 s, then below 0.003). (The 8 x 2 x 2 mesh of the same bar
/// does not rock more undamped: 0.058 -> 0.008 in 1 s.) Asserted over 0.5 s: the largest
/// |pitch rate| in [0.3, 0.5) s is below a quarter of the first 0.1 s's (undamped: 1.9 and
/// 1.8 times it; damped: 0.11 with after_solve, 0.16 with potential, on 1 and 2 ranks).
TEST_P(SlopeBarRocking, DecaysWithContactDamping) {
  const auto peak = SlopeBarPitch(GetParam(), 0.5, 0.5);
  ASSERT_EQ(peak.size(), 5u);
  for (std::size_t w = 0; w < peak.size(); ++w)
    PetscPrintf(PETSC_COMM_WORLD, "%s, zeta 0.5: t [%.1f, %.1f) s: max |pitch rate| %.4f rad/s\n",
                GetParam(), 0.1 * w, 0.1 * (w + 1), peak[w]);
  const double late = *std::max_element(peak.begin() + 3, peak.end());
  EXPECT_LT(late, 0.25 * peak.front());
}

INSTANTIATE_TEST_SUITE_P(FrictionModels, SlopeBarRocking, ::testing::Values("after_solve", "potential"));

}  // namespace
}  // namespace optistep

// The quasi-static integrator (integrators/FemQuasiStatic), on 1, 2 and
// 4 ranks: a cantilever of length L = 2 m and square section h = 0.2 m, clamped at x = 0,
// under its own weight in one step of dt = 1000 s.
//  - Large deflection (E = 2e6 Pa, tip drop ~ 0.4 L): Newton with the true Hessian
//    converges to |g| <= 1e-8 |f_ext| in at most 25 iterations, against more than twice
//    as many with the per-element SPD projection, whose error falls only linearly near
//    the bent shape.
//  - Small load (E = 1e9 Pa, nu = 0; tolerance 1e-6, 4 Newton iterations per mesh): the tip deflection against Euler-Bernoulli's
//    w = q L^4 / (8 E I), q = rho g h^2, I = h^4 / 12, on two meshes: P1 tets are too
//    stiff in bending, so the error is the mesh's and falls with refinement.
//  - Ramped gravity: the last of 4 ramped steps ends at the one-step solution, the first at
//    a quarter of its load.
//  - Loads alone (no gravity): a clamped bar pulled by a ramped traction stretches by
//    tau t L / E, converged relative to the traction's |f_ext|.
#include <gtest/gtest.h>

#include <cmath>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "integrators/FemBackwardEuler.hpp"
#include "integrators/FemQuasiStatic.hpp"

namespace optistep {
namespace {

/// The scene of the cantilever on an n x n/10 x n/10 mesh with Young's modulus E (Pa),
/// Poisson ratio nu and the quasi-static tolerance; frames = 1: one step of 1000 s under the
/// full load; frames > 1: that many steps of 1000 / frames s with gravity ramped.
SceneConfig Cantilever(const std::string& tag, int n, double E, double nu, double tolerance,
                       int frames = 1, const std::vector<std::string>& overrides = {}) {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/beam", n, n / 10, n / 10, Vec3(2.0, 0.2, 0.2));
  char text[512];
  std::snprintf(text, sizeof(text), R"(integrator: quasi_static
quasi_static: {ramp: %s, tolerance: %.17g}
time: {frame_dt: %.17g, frames: %d}
bodies:
  - mesh: beam.node
    material: {model: fixed_corotated, E: %.17g, nu: %.17g, density: 1000}
boundary_conditions:
  - select: {axis: x, end: min, within: 0.001}
)", frames > 1 ? "true" : "false", tolerance, 1000.0 / frames, frames, E, nu);
  return test::MakeScene(dir + "/beam.yaml", text, overrides);
}

/// Mean y displacement (m) of the nodes at the free end x = L of Cantilever's n-mesh
/// (test::WriteBoxMesh numbers node (i, j, k) i + (n + 1) (j + (n/10 + 1) k)).
double TipDeflection(FemSimulation& sim, int n) {
  const std::vector<double> x = sim.GatherPositions();
  const int m = n / 10;
  double sum = 0.0;
  for (int k = 0; k <= m; ++k)
    for (int j = 0; j <= m; ++j) {
      const size_t id = static_cast<size_t>(n + (n + 1) * (j + (m + 1) * k));
      sum += x[3 * id + 1] - 0.2 * j / m;
    }
  return sum / ((m + 1) * (m + 1));
}

TEST(FemQuasiStatic, LargeDeflectionConvergesQuadratically) {
  const SceneConfig scene = Cantilever("qs_large", 20, 2.0e6, 0.3, 1e-8);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  FemQuasiStatic integrator(scene, sim.model(), sim.positions(), sim.velocities());
  const SolveReport report = integrator.TryStep(1000.0);
  ASSERT_TRUE(report.converged) << report.reason;
  PetscPrintf(PETSC_COMM_WORLD, "quasi-static large deflection: %d Newton iterations, |g| %.3e N (tau %.3e N)\n",
              report.iterations, report.gradient_norm, integrator.Tau());
  EXPECT_LE(report.iterations, 25);
  EXPECT_LE(report.gradient_norm, integrator.Tau());

  // The same solve with the SPD-projected Hessian: linear convergence.
  const SceneConfig element = Cantilever("qs_large_element", 20, 2.0e6, 0.3, 1e-8, 1,
                                         {"solver.hessian_projection=element"});
  FemSimulation projected_sim(PETSC_COMM_WORLD, element);
  FemQuasiStatic projected(element, projected_sim.model(), projected_sim.positions(),
                           projected_sim.velocities());
  const SolveReport slow = projected.TryStep(1000.0);
  PetscPrintf(PETSC_COMM_WORLD, "with the SPD projection: %d Newton iterations (%s)\n", slow.iterations,
              slow.reason.c_str());
  EXPECT_GT(slow.iterations, 2 * report.iterations);
}

/// The same cantilever by backward Euler in one step of 1000 s (the static limit: m / dt^2
/// is 1e-6 of the stiffness), to cn_epsilon 1e-10: with solver.hessian_projection: none it
/// converges as fast as the quasi-static step, with the default per-element projection
/// linearly.
TEST(FemQuasiStatic, BackwardEulerAtTheStaticLimitConvergesWithTheTrueHessian) {
  int iterations[2] = {0, 0};
  const char* projections[2] = {"none", "element"};
  for (int k = 0; k < 2; ++k) {
    const SceneConfig scene =
        Cantilever("be_static", 20, 2.0e6, 0.3, 1e-8, 1,
                   {"integrator=backward_euler", "solver.cn_epsilon=1e-10",
                    std::string("solver.hessian_projection=") + projections[k]});
    FemSimulation sim(PETSC_COMM_WORLD, scene);
    FemBackwardEuler integrator(scene, sim.model(), sim.positions(), sim.velocities());
    const SolveReport report = integrator.TryStep(1000.0);
    ASSERT_TRUE(report.converged) << projections[k] << ": " << report.reason;
    iterations[k] = report.iterations;
    PetscPrintf(PETSC_COMM_WORLD, "backward Euler, dt 1000 s, projection %s: %d Newton iterations\n",
                projections[k], report.iterations);
  }
  EXPECT_LE(iterations[0], 25);
  EXPECT_GT(iterations[1], 2 * iterations[0]);
}

TEST(FemQuasiStatic, SmallLoadMatchesEulerBernoulli) {
  const double E = 1.0e9, h = 0.2, L = 2.0, q = 1000.0 * 9.81 * h * h, I = h * h * h * h / 12.0;
  const double w = q * L * L * L * L / (8.0 * E * I);
  EXPECT_NEAR(w, 5.886e-3, 1e-6);
  double error[2] = {0.0, 0.0};
  const int meshes[2] = {20, 40};
  for (int r = 0; r < 2; ++r) {
    const SceneConfig scene = Cantilever("qs_small", meshes[r], E, 0.0, 1e-6);
    FemSimulation sim(PETSC_COMM_WORLD, scene);
    sim.AdvanceFrame(nullptr);
    const double tip = -TipDeflection(sim, meshes[r]);
    error[r] = (w - tip) / w;
    PetscPrintf(PETSC_COMM_WORLD, "mesh %d: tip deflection %.6e m, Euler-Bernoulli %.6e m, error %.2f%%\n",
                meshes[r], tip, w, 100.0 * error[r]);
  }
  EXPECT_GT(error[0], 0.0) << "P1 tets are stiffer than the beam";
  EXPECT_LT(error[1], 0.5 * error[0]) << "the error does not fall with the mesh";
  // Shear adds ~0.8% to w at L/h = 10, within the mesh error.
  EXPECT_LT(error[0], 0.5);
  EXPECT_LT(error[1], 0.2);
}

/// Load stepping: 4 steps with gravity ramped as t / 1000 s. The small-load cantilever is
/// linear to w / L = 0.15%: after the first step the tip is a quarter of the full-load
/// tip (to 1e-3), and after the last it is the one-step full-load tip (the elastic
/// solution does not depend on the path; to 1e-5, the tolerance's order).
TEST(FemQuasiStatic, RampedGravityReachesTheFullLoadSolution) {
  FemSimulation once(PETSC_COMM_WORLD, Cantilever("qs_once", 20, 1.0e9, 0.0, 1e-6));
  once.AdvanceFrame(nullptr);
  const double full = TipDeflection(once, 20);
  FemSimulation ramped(PETSC_COMM_WORLD, Cantilever("qs_ramp", 20, 1.0e9, 0.0, 1e-6, 4));
  ramped.AdvanceFrame(nullptr);
  const double first = TipDeflection(ramped, 20);
  for (int f = 1; f < 4; ++f) ramped.AdvanceFrame(nullptr);
  const double last = TipDeflection(ramped, 20);
  PetscPrintf(PETSC_COMM_WORLD, "ramp: tip %.6e m after step 1, %.6e m after step 4, %.6e m in one step\n",
              first, last, full);
  EXPECT_NEAR(first / full, 0.25, 1e-3);
  EXPECT_NEAR(last, full, 1e-5 * std::abs(full));
}

/// Loads alone (no gravity): a clamped bar (L = 2 m, 0.2 x 0.2 m, linear material, nu = 0
/// so that the clamp does not hinder a lateral contraction) pulled at its free end by a
/// traction t = 1e3 Pa ramped over the run, in 2 quasi-static steps. Its convergence is
/// relative to the loads' magnitude (|f_ext| = |t A0 / 3 per face corner|_2 at the ramp's
/// peak; a scene loaded by loads alone must not need gravity). Uniaxial
/// stress: the end moves by tau t L / E, exact for linear tets (uniform strain).
TEST(FemQuasiStatic, LoadsAloneStretchABarByTLOverE) {
  const double L = 2.0, E = 1.0e6, t = 1.0e3;
  const std::string dir = test::SharedTempDir("qs_loads");
  test::WriteBoxMesh(dir + "/bar", 10, 1, 1, Vec3(L, 0.2, 0.2));
  const SceneConfig scene = test::MakeScene(dir + "/bar.yaml", R"(integrator: quasi_static
gravity: [0, 0, 0]
time: {frame_dt: 1000, frames: 2}
bodies:
  - mesh: bar.node
    material: {model: linear, E: 1.0e6, nu: 0, density: 1000}
boundary_conditions:
  - select: {axis: x, end: min, within: 0.001}
loads:
  - {type: traction, select: {axis: x, end: max, within: 0.001}, traction: [1.0e3, 0, 0],
     time_function: {type: ramp, start: 0, end: 2000}}
)");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  FemQuasiStatic integrator(scene, sim.model(), sim.positions(), sim.velocities());
  // |f_ext|: the end face (A = 0.04 m^2) is two triangles of A / 2, each giving its corners
  // t A / 6; the two corners on their shared diagonal take two shares: |f_ext| = t A / 6
  // sqrt(2^2 + 2^2 + 1 + 1) = 21.08 N at the ramp's peak, times the default tolerance 1e-6.
  const double f_ext = t * 0.04 / 6.0 * std::sqrt(10.0);
  EXPECT_NEAR(integrator.Tau(), 1e-6 * f_ext, 1e-12 * f_ext);
  const std::vector<double> X = sim.GatherPositions();
  for (int step = 1; step <= 2; ++step) {
    const SolveReport report = integrator.TryStep(1000.0);
    ASSERT_TRUE(report.converged) << report.reason;
    const std::vector<double> x = sim.GatherPositions();
    double stretch = 0.0;
    int count = 0;
    for (std::size_t n = 0; n < X.size() / 3; ++n)
      if (std::abs(X[3 * n] - L) < 1e-9) {
        stretch += x[3 * n] - X[3 * n];
        ++count;
      }
    stretch /= count;
    const double expected = 0.5 * step * t * L / E;
    PetscPrintf(PETSC_COMM_WORLD, "quasi-static, loads only: step %d: end moves %.9e m (tau t L / E = %.9e m), "
                "%d Newton iterations, |g| %.3e N <= %.3e N\n", step, stretch, expected,
                report.iterations, report.gradient_norm, integrator.Tau());
    EXPECT_NEAR(stretch, expected, 1e-5 * expected);
  }
}

}  // namespace
}  // namespace optistep

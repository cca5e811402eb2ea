// The FEM incremental potential's gradient and Hessian against central finite
// differences of its energy and gradient, on 1, 2 and 4 ranks, for every material and
// with the collision penalty, lagged Rayleigh damping and every kind of load (point,
// traction, dead and follower pressure, body force; time functions, ramped gravity)
// switched on; Project zeroes exactly the Dirichlet rows.
#include <gtest/gtest.h>
#include <petscvec.h>

#include <cmath>

#include "FiniteDifferences.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "fem/FemIncrementalPotential.hpp"

namespace optistep {
namespace {

using test::RandomField;

class FemDerivatives : public ::testing::TestWithParam<const char*> {};

TEST_P(FemDerivatives, GradientAndHessianMatchFiniteDifferences) {
  const std::string dir = test::SharedTempDir("derivatives");
  test::WriteBoxMesh(dir + "/box", 3, 2, 2, Vec3(1.5, 1.0, 1.0));
  const SceneConfig scene = test::MakeScene(dir + "/scene.yaml", std::string(R"(
time: {dt: 0.02, frame_dt: 0.02, frames: 1}
bodies:
  - mesh: box.node
    material: {model: )") + GetParam() + R"(, E: 1.0e4, nu: 0.3, density: 100}
    transform: {translate: [0, 0.05, 0]}
    initial_velocity: [0.1, -1.0, 0.3]
boundary_conditions:
  - select: {axis: x, end: max, within: 0.01}
    motion: [{rotate: {axis: [1, 0, 0], angular_velocity: 2.0}}]
collision_objects:
  - {type: half_space, point: [0, 0.1, 0], normal: [0, 1, 0], stiffness: 1.0e5}
damping: {stiffness_beta: 0.01}
time_functions:
  up: {type: ramp, start: 0, end: 0.04}
  wave: {type: table, points: [[0, 1], [0.01, 3], [1, 2]]}
gravity_time_function: wave
loads:
  - {type: point, select: {axis: x, end: min, within: 0.01}, force: [10, -20, 5], time_function: up}
  - {type: traction, select: {axis: y, end: max, within: 0.01}, traction: [100, -300, 50]}
  - {type: pressure, select: {axis: z, end: max, within: 0.01}, pressure: 400, follower: false}
  - {type: pressure, select: {box: {min: [-1, -1, -1], max: [2, 2, 2]}}, pressure: 700,
     time_function: {type: constant, value: 1.5}}
  - {type: body_force, acceleration: [1, 2, 3], time_function: wave}
)");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  FemIncrementalPotential potential(sim.model(), scene.damping.stiffness_beta);
  Vec x = sim.positions(), v = sim.velocities();
  potential.BeginStep(x, v, 0.02, 0.02);

  // A deformed, partly penetrating state: x + random displacement of 5% of the size.
  Vec y, d, g, gp, gm, Hd;
  OPTISTEP_PETSC(VecDuplicate(x, &y));
  for (Vec* w : {&d, &g, &gp, &gm, &Hd}) OPTISTEP_PETSC(VecDuplicate(x, w));
  RandomField(y, 0.05, 1);
  OPTISTEP_PETSC(VecAXPY(y, 1.0, x));
  potential.ApplyDirichlet(y);
  // A random direction that leaves the Dirichlet rows alone: d = P(y + r) - y.
  RandomField(gp, 1.0, 2);
  OPTISTEP_PETSC(VecWAXPY(d, 1.0, gp, y));
  potential.ApplyDirichlet(d);
  OPTISTEP_PETSC(VecAXPY(d, -1.0, y));

  // Directional derivative of E vs g . d, and the Hessian-vector product vs the
  // difference of gradients, with the true tangent (the projected one differs wherever an
  // element's tangent is indefinite, e.g. FCR under any compression).
  Mat H = potential.CreateHessian();
  potential.SetProjectHessian(false);
  potential.Hessian(y, H);
  const test::DirectionalCheck c = test::CheckAlong(potential, H, y, d, 1e-6, Hd);
  EXPECT_NEAR(c.energy_fd, c.gradient_dot, 1e-6 * std::abs(c.gradient_dot) + 1e-8);
  EXPECT_LT(c.hessian_error, 1e-5 * c.hessian_norm)
      << "|H d - (g(y + h d) - g(y - h d)) / 2h| vs |H d| = " << c.hessian_norm;

  // Symmetry: d2^T H d = d^T H d2.
  RandomField(gp, 1.0, 3);
  OPTISTEP_PETSC(VecWAXPY(gm, 1.0, gp, y));
  potential.ApplyDirichlet(gm);
  OPTISTEP_PETSC(VecAXPY(gm, -1.0, y));
  PetscScalar a = 0.0, b = 0.0;
  OPTISTEP_PETSC(MatMult(H, gm, gp));
  OPTISTEP_PETSC(VecDot(gp, d, &a));
  OPTISTEP_PETSC(VecDot(Hd, gm, &b));
  EXPECT_NEAR(a, b, 1e-10 * (std::abs(a) + std::abs(b)));

  // The projected Hessian is symmetric positive definite: d^T H d > 0 and it bounds the
  // true curvature from below only where clamped, so just check positivity here.
  potential.SetProjectHessian(true);
  potential.Hessian(y, H);
  OPTISTEP_PETSC(MatMult(H, d, Hd));
  PetscScalar dHd = 0.0;
  OPTISTEP_PETSC(VecDot(d, Hd, &dHd));
  EXPECT_GT(dHd, 0.0);

  // Project (what L-BFGS applies to its directions) zeroes the Dirichlet rows and nothing
  // else: a random vector projected equals the one whose Dirichlet rows ApplyDirichlet
  // replaced, minus those targets (d was built that way above).
  OPTISTEP_PETSC(VecCopy(d, gp));
  potential.Project(gp);
  OPTISTEP_PETSC(VecAXPY(gp, -1.0, d));
  PetscReal moved = 0.0;
  OPTISTEP_PETSC(VecNorm(gp, NORM_INFINITY, &moved));
  EXPECT_EQ(moved, 0.0) << "Project changed an admissible direction";
  RandomField(gm, 1.0, 4);
  potential.Project(gm);
  const PetscScalar* ga = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(gm, &ga));
  long held = 0, nonzero = 0;
  for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l) {
    const bool dirichlet = sim.model().IsConstrained(static_cast<int>(l));
    held += dirichlet;
    for (int c = 0; c < 3; ++c) nonzero += dirichlet ? ga[3 * l + c] != 0.0 : ga[3 * l + c] == 0.0;
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(gm, &ga));
  MPI_Allreduce(MPI_IN_PLACE, &held, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &nonzero, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(held, 0);
  EXPECT_EQ(nonzero, 0) << "Dirichlet components left, or free components zeroed, by Project";
  ASSERT_NE(potential.Elements(), nullptr);
  EXPECT_EQ(potential.Grid(), nullptr);
  EXPECT_EQ(potential.Elements()->tets.size(), sim.model().mesh().tets.size());

  MatDestroy(&H);
  for (Vec* w : {&y, &d, &g, &gp, &gm, &Hd}) VecDestroy(w);
}

INSTANTIATE_TEST_SUITE_P(Materials, FemDerivatives,
                         ::testing::Values("fixed_corotated", "stable_neo_hookean", "linear"));

}  // namespace
}  // namespace optistep

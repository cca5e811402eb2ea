// The implicit MPM step's potential E(dv) (HOT, Wang et al. 2020, Sec. 3.1 eq. 1;
// mpm/MpmIncrementalPotential) on a distributed grid, on 1, 2 and 4 ranks: its gradient
// against central differences of the energy, the assembled Hessian against central
// differences of the gradient, and the matrix-free Hessian (PN-PCG(MF)) against the
// assembled one: products and the inverse 3x3 diagonal blocks that point-block Jacobi
// (HOT's PN-PCG preconditioner) uses; the friction potential's derivatives against central
// differences; Project removes exactly the constrained components. Sticky nodes
// (x < 0.25 m) and slip nodes (z < 0.25 m, normal +z) are in the grid, so the projections
// are checked too.
#include "FiniteDifferences.hpp"
#include "MpmPotentialFixture.hpp"

namespace optistep {
namespace {

using test::kDt;
using test::kDx;
using test::MpmPotentialTest;
using test::Norm;
using test::RelativeDifference;
using mpm::NodeConstraint;

TEST_F(MpmPotentialTest, TheGridHasStickySlipAndFreeNodes) {
  const auto [sticky, slip] = ConstrainedNodeCounts();
  EXPECT_GT(sticky, 0);
  EXPECT_GT(slip, 0);
  EXPECT_LT(sticky + slip, step_->n_global);
}

TEST_F(MpmPotentialTest, GradientMatchesCentralDifferencesOfTheEnergy) {
  auto potential = Potential(false);
  Vec dv = RandomVector(*potential, 1, 0.2, false);
  Vec d = RandomVector(*potential, 2, 1.0, true);
  Vec g = potential->CreateVector(), x = potential->CreateVector();
  Vec y = potential->CreateVector();
  const auto [fd, gd] = test::EnergyDifferenceAndSlope(*potential, dv, d, 1e-5, g, x, y);  // h in m/s
  ASSERT_GT(std::abs(gd), 0.0);
  EXPECT_NEAR(gd, fd, 1e-6 * std::abs(gd));
  for (Vec* v : {&dv, &d, &g, &x, &y}) VecDestroy(v);
}

/// Nodal forces f_i (the MPM point loads, tractions and pressures: SetNodalForces) add the
/// linear term -dt sum_i f_i . dv_i: the energy changes between two points by exactly
/// -dt f . (x2 - x1) over the owned nodes (to round-off), and the gradient still matches
/// central differences of the energy.
TEST_F(MpmPotentialTest, NodalForcesAddMinusDtFDotDv) {
  auto plain = Potential(false), loaded = Potential(false);
  std::vector<double> f(3 * static_cast<std::size_t>(step_->grid.NodeCount()));
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = 100.0 * std::sin(1.0 + static_cast<double>(i));  // N
  loaded->SetNodalForces(f);
  Vec x1 = RandomVector(*loaded, 11, 0.2, false), x2 = RandomVector(*loaded, 12, 0.2, false);
  const PetscScalar *a1 = nullptr, *a2 = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(x1, &a1));
  OPTISTEP_PETSC(VecGetArrayRead(x2, &a2));
  double work = 0.0;
  for (std::size_t k = 0; k < step_->owned_nodes.size(); ++k)
    for (int c = 0; c < 3; ++c)
      work += f[3 * static_cast<std::size_t>(step_->owned_nodes[k]) + c] * (a2[3 * k + c] - a1[3 * k + c]);
  OPTISTEP_PETSC(VecRestoreArrayRead(x1, &a1));
  OPTISTEP_PETSC(VecRestoreArrayRead(x2, &a2));
  MPI_Allreduce(MPI_IN_PLACE, &work, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  const double change = (loaded->Energy(x2) - plain->Energy(x2)) - (loaded->Energy(x1) - plain->Energy(x1));
  ASSERT_GT(std::abs(work), 0.0);
  EXPECT_NEAR(change, -kDt * work, 1e-9 * kDt * std::abs(work));
  Vec d = RandomVector(*loaded, 13, 1.0, true);
  Vec g = loaded->CreateVector(), x = loaded->CreateVector(), y = loaded->CreateVector();
  const auto [fd, gd] = test::EnergyDifferenceAndSlope(*loaded, x1, d, 1e-5, g, x, y);  // h in m/s
  EXPECT_NEAR(gd, fd, 1e-6 * std::abs(gd));
  for (Vec* v : {&x1, &x2, &d, &g, &x, &y}) VecDestroy(v);
}

TEST_F(MpmPotentialTest, HessianMatchesCentralDifferencesOfTheGradient) {
  auto potential = Potential(false);
  Vec dv = RandomVector(*potential, 3, 0.2, false);
  Vec d = RandomVector(*potential, 4, 1.0, true);
  Mat H = potential->CreateHessian();
  potential->Hessian(dv, H);
  Vec Hd = potential->CreateVector(), x = potential->CreateVector();
  Vec g_plus = potential->CreateVector(), fd = potential->CreateVector();
  OPTISTEP_PETSC(MatMult(H, d, Hd));
  const double h = 1e-6;  // m/s
  OPTISTEP_PETSC(VecWAXPY(x, h, d, dv));
  potential->Gradient(x, g_plus);
  OPTISTEP_PETSC(VecWAXPY(x, -h, d, dv));
  potential->Gradient(x, fd);
  OPTISTEP_PETSC(VecAYPX(fd, -1.0, g_plus));  // g(+) - g(-)
  OPTISTEP_PETSC(VecScale(fd, 1.0 / (2.0 * h)));
  EXPECT_LT(RelativeDifference(Hd, fd), 1e-6);
  // The stiffness term outweighs the mass term, so the check is not of the masses alone.
  PetscScalar dHd = 0.0;
  OPTISTEP_PETSC(VecDot(d, Hd, &dHd));
  double dMd = 0.0;
  const PetscScalar* da = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(d, &da));
  for (std::size_t k = 0; k < step_->owned_nodes.size(); ++k)
    for (int c = 0; c < 3; ++c) dMd += step_->grid.m[step_->owned_nodes[k]] * da[3 * k + c] * da[3 * k + c];
  OPTISTEP_PETSC(VecRestoreArrayRead(d, &da));
  MPI_Allreduce(MPI_IN_PLACE, &dMd, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(dHd, 2.0 * dMd);
  for (Vec* v : {&dv, &d, &Hd, &x, &g_plus, &fd}) VecDestroy(v);
  MatDestroy(&H);
}

TEST_F(MpmPotentialTest, MatrixFreeHessianEqualsTheAssembledOne) {
  auto assembled = Potential(false);
  auto matrix_free = Potential(true);
  Vec dv = RandomVector(*assembled, 5, 0.2, false);
  Vec x = RandomVector(*assembled, 6, 1.0, false);
  Mat H = assembled->CreateHessian(), H_mf = matrix_free->CreateHessian();
  assembled->Hessian(dv, H);
  matrix_free->Hessian(dv, H_mf);
  Vec y = assembled->CreateVector(), y_mf = assembled->CreateVector();
  // Any x, admissible or not: both forms are P K P + M with the same projections.
  OPTISTEP_PETSC(MatMult(H, x, y));
  OPTISTEP_PETSC(MatMult(H_mf, x, y_mf));
  EXPECT_LT(RelativeDifference(y_mf, y), 1e-12);

  // Point-block Jacobi's inverse 3x3 diagonal blocks.
  const PetscScalar* inverse = nullptr;
  const PetscScalar* inverse_mf = nullptr;
  OPTISTEP_PETSC(MatInvertBlockDiagonal(H, &inverse));
  OPTISTEP_PETSC(MatInvertBlockDiagonal(H_mf, &inverse_mf));
  double diff = 0.0, size = 0.0;
  for (std::size_t e = 0; e < 9 * step_->owned_nodes.size(); ++e) {
    diff = std::max(diff, std::abs(inverse_mf[e] - inverse[e]));
    size = std::max(size, std::abs(inverse[e]));
  }
  MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &size, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  ASSERT_GT(size, 0.0);
  EXPECT_LT(diff, 1e-12 * size);
  for (Vec* v : {&dv, &x, &y, &y_mf}) VecDestroy(v);
  MatDestroy(&H);
  MatDestroy(&H_mf);
}

/// Friction as IPC's smoothed potential on the slip nodes (mu = 0.5, a normal impulse of
/// 2 m/s per unit mass, eps_v = 0.3 m/s against relative speeds up to ~0.35 m/s: nodes in
/// both branches of f_0): the gradient and the assembled Hessian against central
/// differences, and the matrix-free Hessian (products and diagonal blocks) against the
/// assembled one.
TEST_F(MpmPotentialTest, FrictionPotentialDerivativesMatchFiniteDifferences) {
  for (NodeConstraint& c : constraints_)
    if (c.kind == NodeConstraint::Kind::kSlip) c.friction = 0.5;
  auto assembled = Potential(false);
  auto matrix_free = Potential(true);
  const std::vector<double> impulse(constraints_.size(), 2.0);
  Vec dv = RandomVector(*assembled, 7, 0.2, false);
  Vec d = RandomVector(*assembled, 8, 1.0, true);
  Vec g = assembled->CreateVector(), x = assembled->CreateVector();
  const double plain = assembled->Energy(dv);
  assembled->SetFrictionPotential(impulse, 0.3);
  matrix_free->SetFrictionPotential(impulse, 0.3);
  EXPECT_GT(assembled->Energy(dv) - plain, 0.0) << "no friction energy";
  const double h = 1e-6;  // m/s
  Vec x_minus = assembled->CreateVector();
  const auto [fd_energy, gd] = test::EnergyDifferenceAndSlope(*assembled, dv, d, h, g, x, x_minus);
  EXPECT_NEAR(gd, fd_energy, 1e-6 * std::abs(gd));
  VecDestroy(&x_minus);

  Mat H = assembled->CreateHessian(), H_mf = matrix_free->CreateHessian();
  assembled->Hessian(dv, H);
  matrix_free->Hessian(dv, H_mf);
  Vec Hd = assembled->CreateVector(), Hd_mf = assembled->CreateVector();
  Vec g_plus = assembled->CreateVector(), fd = assembled->CreateVector();
  OPTISTEP_PETSC(MatMult(H, d, Hd));
  OPTISTEP_PETSC(MatMult(H_mf, d, Hd_mf));
  OPTISTEP_PETSC(VecWAXPY(x, h, d, dv));
  assembled->Gradient(x, g_plus);
  OPTISTEP_PETSC(VecWAXPY(x, -h, d, dv));
  assembled->Gradient(x, fd);
  OPTISTEP_PETSC(VecAYPX(fd, -1.0, g_plus));
  OPTISTEP_PETSC(VecScale(fd, 1.0 / (2.0 * h)));
  EXPECT_LT(RelativeDifference(Hd, fd), 1e-6);
  EXPECT_LT(RelativeDifference(Hd_mf, Hd), 1e-12);
  Vec diag = assembled->CreateVector(), diag_mf = assembled->CreateVector();
  OPTISTEP_PETSC(MatGetDiagonal(H, diag));
  OPTISTEP_PETSC(MatGetDiagonal(H_mf, diag_mf));
  EXPECT_LT(RelativeDifference(diag_mf, diag), 1e-12);
  for (Vec* v : {&dv, &d, &g, &x, &Hd, &Hd_mf, &g_plus, &fd, &diag, &diag_mf}) VecDestroy(v);
  MatDestroy(&H);
  MatDestroy(&H_mf);
}

// Project (what L-BFGS applies to its directions) removes exactly the constrained part:
// sticky nodes' whole vector, slip nodes' normal component; free nodes are untouched.
// Compared with the admissible vector drawn from the same random numbers, which removes
// the same parts by hand; the gradient is already admissible, so Project leaves it alone.
// Grid() lists the owned unknown nodes in the PETSc order of u.
TEST_F(MpmPotentialTest, ProjectRemovesExactlyTheConstrainedComponents) {
  const auto [sticky, slip] = ConstrainedNodeCounts();
  ASSERT_GT(sticky, 0);
  ASSERT_GT(slip, 0);
  auto potential = Potential(false);
  Vec x = RandomVector(*potential, 7, 1.0, false);
  Vec expected = RandomVector(*potential, 7, 1.0, true);
  potential->Project(x);
  EXPECT_EQ(RelativeDifference(x, expected), 0.0);

  Vec dv = RandomVector(*potential, 8, 0.1, true), g = potential->CreateVector(),
      projected = potential->CreateVector();
  potential->Gradient(dv, g);
  OPTISTEP_PETSC(VecCopy(g, projected));
  potential->Project(projected);
  EXPECT_EQ(RelativeDifference(projected, g), 0.0);

  const GridInfo* grid = potential->Grid();
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ(potential->Elements(), nullptr);
  EXPECT_EQ(grid->dx, kDx);
  EXPECT_EQ(grid->n_global, step_->n_global);
  EXPECT_EQ(grid->first_global, step_->begin);
  ASSERT_EQ(grid->owned_nodes.size(), step_->owned_nodes.size());
  for (std::size_t k = 0; k < step_->owned_nodes.size(); ++k) {
    const Eigen::Vector3i node = step_->grid.Node(step_->owned_nodes[k]);
    EXPECT_EQ(grid->owned_nodes[k], (std::array<int, 3>{node[0], node[1], node[2]}));
  }
  for (Vec* v : {&x, &expected, &dv, &g, &projected}) VecDestroy(v);
}

}  // namespace
}  // namespace optistep

// DOT's initializer (solvers/SubdomainInitializer.hpp; Li et al. 2019) on the twisted bar
// (configs/twisted_bar.yaml, DOT's twist scene, 2605 nodes) after one step, on 1, 2 and 4
// ranks, 1 and 2 subdomains per rank. Expected numbers, from elsewhere:
//  - every subdomain matrix is the principal submatrix H[S_j,S_j] of the global projected
//    Hessian: for a random v supported on S_j, (H v)|S_j = H_j v|S_j, with H v a MatMult of
//    the global matrix (not the extraction under test); every node with a tet is in some
//    subdomain;
//  - with one subdomain in all (the bar on rank 0 alone), H_1 = H and the initializer's
//    direction is LBFGS-H's with an exact (Cholesky, MUMPS) solve to round-off; with two it
//    is not (negative control);
//  - the symmetric merge sum_j R_j^T W_j^(1/2) H_j^-1 W_j^(1/2) R_j is symmetric positive
//    definite, q2^T M q1 = q1^T M q2 to round-off; the average merge W sum_j R_j^T H_j^-1 R_j
//    is not symmetric (negative control);
//  - a factorization that fails (an indefinite matrix, as a projection bug would give) makes
//    the step fall back to LBFGS-H's CG, and the next step factors again;
//  - more subdomains than a rank has tets, a negative count or target, is an InputError
//    naming the key or option;
//  - the coarse space (dot.coarse rigid): span(Z) holds the whole body's six rigid-body
//    modes to round-off (least squares), not a non-rigid field; the balanced two-level
//    initializer is symmetric positive definite on random vectors, LBFGS-H's exact inverse
//    with one subdomain in all, and nearer to it than one level with many;
//  - sized subdomains (dot.subdomain_nodes 300: 9 parts of the bar): the parts are the same
//    tets on 1 rank as on 2 and 4, shares of a part cut by a rank boundary add up to it;
//  - -dot_overlap 1 brings two subdomains' direction closer to LBFGS-H's exact one; a
//    factorization lagged by -dot_refactor_every 2 gives bitwise the first step's
//    back-solves on the second step and is remade on the third.
#include <gtest/gtest.h>
#include <petscksp.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ScopedOptions.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "integrators/FemBackwardEuler.hpp"
#include "solvers/InitializerFactory.hpp"
#include "solvers/SubdomainInitializer.hpp"

namespace optistep {
namespace {

using test::ScopedOptions;

/// The twisted bar on comm after one step (so that the Hessian is a deformed state's).
std::unique_ptr<FemSimulation> SteppedTwistedBar(MPI_Comm comm) {
  const SceneConfig scene = ReadSceneConfig(test::SourcePath("configs/twisted_bar.yaml"));
  auto sim = std::make_unique<FemSimulation>(comm, scene);
  sim->AdvanceStep(nullptr);
  return sim;
}

FemIncrementalPotential& PotentialOf(FemSimulation& sim) {
  return dynamic_cast<FemBackwardEuler&>(sim.integrator()).potential();
}

/// DOT's options: per_rank subdomains per rank (0: sized by subdomain_nodes), the merge,
/// the coarse space (DOT's one level unless said).
DotConfig Dot(int per_rank, const std::string& merge, const std::string& coarse = "none", int subdomain_nodes = 3000) {
  DotConfig config;
  config.subdomains_per_rank = per_rank;
  config.subdomain_nodes = subdomain_nodes;
  config.merge = merge;
  config.coarse = coarse;
  return config;
}

/// Collective: DOT's initializer set up at the simulation's current positions.
std::unique_ptr<SubdomainInitializer> SetUpDot(MPI_Comm comm, FemSimulation& sim, const DotConfig& config) {
  auto dot = std::make_unique<SubdomainInitializer>(comm, config, MinimizerDefaults{PCJACOBI});
  dot->SetFromOptions();
  dot->SetUp(PotentialOf(sim), sim.positions());
  return dot;
}

std::unique_ptr<SubdomainInitializer> SetUpDot(MPI_Comm comm, FemSimulation& sim, int per_rank,
                                               const std::string& merge) {
  auto dot = std::make_unique<SubdomainInitializer>(comm, Dot(per_rank, merge),
                                                    MinimizerDefaults{PCJACOBI});
  dot->SetFromOptions();
  dot->SetUp(PotentialOf(sim), sim.positions());
  return dot;
}

/// Collective: a vector of u's layout with reproducible random entries in [-1, 1],
/// constrained components zeroed.
Vec RandomDirection(FemSimulation& sim, unsigned seed) {
  Vec q = nullptr;
  OPTISTEP_PETSC(VecDuplicate(sim.positions(), &q));
  PetscInt n = 0;
  OPTISTEP_PETSC(VecGetLocalSize(q, &n));
  std::mt19937 random(seed + 1000u * static_cast<unsigned>(test::Rank()));
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArray(q, &a));
  for (PetscInt i = 0; i < n; ++i) a[i] = uniform(random);
  OPTISTEP_PETSC(VecRestoreArray(q, &a));
  PotentialOf(sim).Project(q);
  return q;
}

class DotSubdomains : public ::testing::TestWithParam<int> {};

TEST_P(DotSubdomains, EachMatrixIsThePrincipalSubmatrixOfTheHessian) {
  const int per_rank = GetParam();
  auto sim = SteppedTwistedBar(PETSC_COMM_WORLD);
  const auto dot = SetUpDot(PETSC_COMM_WORLD, *sim, per_rank, "average");
  const Mat H = dot->LaggedHessian();
  ASSERT_NE(H, nullptr);

  int total = dot->SubdomainCount(), most = dot->SubdomainCount();
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  EXPECT_EQ(total, per_rank * test::Size());

  // Every node is in at least one subdomain; with several subdomains some are in two.
  Vec count = nullptr, v = nullptr, Hv = nullptr;
  OPTISTEP_PETSC(VecDuplicate(sim->positions(), &count));
  OPTISTEP_PETSC(VecSet(count, 0.0));
  for (int j = 0; j < dot->SubdomainCount(); ++j)
    for (PetscInt node : dot->SubdomainNodes(j))
      OPTISTEP_PETSC(VecSetValue(count, 3 * node, 1.0, ADD_VALUES));
  OPTISTEP_PETSC(VecAssemblyBegin(count));
  OPTISTEP_PETSC(VecAssemblyEnd(count));
  PetscReal fewest = 0.0, most_shared = 0.0;
  OPTISTEP_PETSC(VecStrideMin(count, 0, nullptr, &fewest));
  OPTISTEP_PETSC(VecStrideMax(count, 0, nullptr, &most_shared));
  EXPECT_GE(fewest, 1.0);
  if (total > 1) EXPECT_GE(most_shared, 2.0);

  // One subdomain at a time, (rank r, j): v random on S_j, zero elsewhere.
  OPTISTEP_PETSC(VecDuplicate(sim->positions(), &v));
  OPTISTEP_PETSC(VecDuplicate(sim->positions(), &Hv));
  double worst = 0.0;
  for (int r = 0; r < test::Size(); ++r) {
    for (int j = 0; j < most; ++j) {
      const bool mine = test::Rank() == r && j < dot->SubdomainCount();
      std::vector<PetscInt> dofs;
      std::vector<PetscScalar> values;
      if (mine) {
        std::mt19937 random(17u * static_cast<unsigned>(r) + static_cast<unsigned>(j));
        std::uniform_real_distribution<double> uniform(-1.0, 1.0);
        for (PetscInt node : dot->SubdomainNodes(j))
          for (int c = 0; c < 3; ++c) {
            dofs.push_back(3 * node + c);
            values.push_back(uniform(random));
          }
      }
      OPTISTEP_PETSC(VecSet(v, 0.0));
      OPTISTEP_PETSC(VecSetValues(v, static_cast<PetscInt>(dofs.size()), dofs.data(), values.data(),
                                  INSERT_VALUES));
      OPTISTEP_PETSC(VecAssemblyBegin(v));
      OPTISTEP_PETSC(VecAssemblyEnd(v));
      OPTISTEP_PETSC(MatMult(H, v, Hv));
      // (H v)|S_j onto rank r.
      const PetscInt n = static_cast<PetscInt>(dofs.size());
      IS is = nullptr;
      Vec restricted = nullptr;
      VecScatter gather = nullptr;
      OPTISTEP_PETSC(ISCreateGeneral(PETSC_COMM_SELF, n, dofs.data(), PETSC_COPY_VALUES, &is));
      OPTISTEP_PETSC(VecCreateSeq(PETSC_COMM_SELF, n, &restricted));
      OPTISTEP_PETSC(VecScatterCreate(Hv, is, restricted, nullptr, &gather));
      OPTISTEP_PETSC(VecScatterBegin(gather, Hv, restricted, INSERT_VALUES, SCATTER_FORWARD));
      OPTISTEP_PETSC(VecScatterEnd(gather, Hv, restricted, INSERT_VALUES, SCATTER_FORWARD));
      if (mine) {
        Vec local = nullptr, Hj_v = nullptr;
        OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, n, values.data(), &local));
        OPTISTEP_PETSC(VecDuplicate(restricted, &Hj_v));
        OPTISTEP_PETSC(MatMult(dot->SubdomainMatrix(j), local, Hj_v));
        PetscReal scale = 0.0, difference = 0.0;
        OPTISTEP_PETSC(VecNorm(restricted, NORM_INFINITY, &scale));
        OPTISTEP_PETSC(VecAXPY(Hj_v, -1.0, restricted));
        OPTISTEP_PETSC(VecNorm(Hj_v, NORM_INFINITY, &difference));
        EXPECT_GT(scale, 0.0);
        worst = std::max(worst, difference / scale);
        VecDestroy(&local);
        VecDestroy(&Hj_v);
      }
      VecScatterDestroy(&gather);
      VecDestroy(&restricted);
      ISDestroy(&is);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  PetscPrintf(PETSC_COMM_WORLD, "[          ] %d subdomain(s) in all: |(H v)|S - H_S v|S| / |(H v)|S| <= %.2e\n",
              total, worst);
  EXPECT_LT(worst, 1e-13);
  VecDestroy(&count);
  VecDestroy(&v);
  VecDestroy(&Hv);
}

INSTANTIATE_TEST_SUITE_P(PerRank, DotSubdomains, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "PerRank";
                         });

/// Collective: |a - b| / |b| (a is overwritten by a - b).
double RelativeDistance(Vec a, Vec b) {
  PetscReal scale = 0.0, difference = 0.0;
  OPTISTEP_PETSC(VecNorm(b, NORM_2, &scale));
  OPTISTEP_PETSC(VecAXPY(a, -1.0, b));
  OPTISTEP_PETSC(VecNorm(a, NORM_2, &difference));
  return difference / scale;
}

/// |r_dot - r_h| / |r_h| for one random q, the bar on rank 0 alone with `per_rank`
/// subdomains: DOT's initializer against LBFGS-H with a Cholesky solve.
double DirectionDifferenceFromLbfgsH(const DotConfig& config, int overlap = 0) {
  const ScopedOptions layers({{std::string("-dot_overlap"), std::to_string(overlap)}});
  auto sim = SteppedTwistedBar(PETSC_COMM_SELF);
  const auto dot = SetUpDot(PETSC_COMM_SELF, *sim, config);
  const ScopedOptions exact({{"-lbfgsh_ksp_type", "preonly"},
                             {"-lbfgsh_pc_type", "cholesky"},
                             {"-lbfgsh_pc_factor_mat_solver_type", "mumps"}});
  const auto lagged =
      CreateInitializer(PETSC_COMM_SELF, "lagged_hessian", SolverConfig{}, MinimizerDefaults{PCJACOBI}, "test");
  lagged->SetFromOptions();
  lagged->SetUp(PotentialOf(*sim), sim->positions());
  Vec q = RandomDirection(*sim, 7), r_dot = nullptr, r_h = nullptr;
  OPTISTEP_PETSC(VecDuplicate(q, &r_dot));
  OPTISTEP_PETSC(VecDuplicate(q, &r_h));
  EXPECT_EQ(dot->Apply(q, r_dot), 0);
  lagged->Apply(q, r_h);
  const double difference = RelativeDistance(r_dot, r_h);
  VecDestroy(&q);
  VecDestroy(&r_dot);
  VecDestroy(&r_h);
  return difference;
}

TEST(DotInitializer, OneSubdomainInAllGivesLbfgsHsExactDirection) {
  if (test::Rank() == 0) {
    const double one = DirectionDifferenceFromLbfgsH(Dot(1, "average"));
    const double two = DirectionDifferenceFromLbfgsH(Dot(2, "average"));
    std::printf("[          ] relative difference from LBFGS-H's exact direction: %.2e with one "
                "subdomain, %.2e with two\n",
                one, two);
    EXPECT_LT(one, 1e-10);
    EXPECT_GT(two, 1e-3) << "two subdomains are not the global solve";
  }
  MPI_Barrier(PETSC_COMM_WORLD);
}

TEST(DotInitializer, OverlapBringsTheDirectionCloserToLbfgsHs) {
  // Restricted additive Schwarz with one layer of overlap approximates H^-1 better than
  // disjoint subdomains (Smith, Bjorstad, Gropp 1996, Ch. 1); with one subdomain in all
  // the core is every node and the solve stays exact.
  if (test::Rank() == 0) {
    const double one = DirectionDifferenceFromLbfgsH(Dot(1, "average"), 1);
    const double disjoint = DirectionDifferenceFromLbfgsH(Dot(2, "average"), 0);
    const double overlapped = DirectionDifferenceFromLbfgsH(Dot(2, "average"), 1);
    std::printf("[          ] relative difference from LBFGS-H's exact direction, overlap 1: %.2e "
                "with one subdomain; two: %.2e disjoint, %.2e with overlap 1\n",
                one, disjoint, overlapped);
    EXPECT_LT(one, 1e-10);
    EXPECT_LT(overlapped, 0.75 * disjoint);
  }
  MPI_Barrier(PETSC_COMM_WORLD);
}

/// Collective: r = H0^-1 q for the random q of seed 5 (r of the caller's layout, new).
Vec ApplyToRandom(SubdomainInitializer& dot, FemSimulation& sim) {
  Vec q = RandomDirection(sim, 5), r = nullptr;
  OPTISTEP_PETSC(VecDuplicate(q, &r));
  dot.Apply(q, r);
  VecDestroy(&q);
  return r;
}

/// Collective: whether a and b are bitwise equal.
bool Equal(Vec a, Vec b) {
  PetscBool equal = PETSC_FALSE;
  OPTISTEP_PETSC(VecEqual(a, b, &equal));
  return equal == PETSC_TRUE;
}

TEST(DotInitializer, ALaggedFactorizationServesTheStepsAskedThenRefactors) {
  const ScopedOptions lag({{std::string("-dot_refactor_every"), std::string("2")},
                           {std::string("-dot_refactor_growth"), std::string("0")}});
  auto sim = SteppedTwistedBar(PETSC_COMM_WORLD);
  auto dot = SetUpDot(PETSC_COMM_WORLD, *sim, 1, "average");
  Vec first = ApplyToRandom(*dot, *sim);
  sim->AdvanceStep(nullptr);
  dot->SetUp(PotentialOf(*sim), sim->positions());  // served by the first factorization
  Vec second = ApplyToRandom(*dot, *sim);
  EXPECT_TRUE(Equal(first, second)) << "the second step reuses the first step's factors";
  dot->SetUp(PotentialOf(*sim), sim->positions());  // two steps served: refactored
  Vec third = ApplyToRandom(*dot, *sim);
  EXPECT_FALSE(Equal(first, third)) << "the third step factors the current Hessian";
  // Without the lag (DOT: every step) the second step's factors are the current ones.
  const ScopedOptions every({{std::string("-dot_refactor_every"), std::string("1")}});
  auto fresh = SetUpDot(PETSC_COMM_WORLD, *sim, 1, "average");
  Vec current = ApplyToRandom(*fresh, *sim);
  EXPECT_TRUE(Equal(third, current));
  VecDestroy(&first);
  VecDestroy(&second);
  VecDestroy(&third);
  VecDestroy(&current);
}

/// Collective: (q2^T M q1 - q1^T M q2) / |q1^T M q2| and q1^T M q1 for the merge `merge`.
std::pair<double, double> Asymmetry(const std::string& merge, int per_rank) {
  auto sim = SteppedTwistedBar(PETSC_COMM_WORLD);
  const auto dot = SetUpDot(PETSC_COMM_WORLD, *sim, per_rank, merge);
  Vec q1 = RandomDirection(*sim, 1), q2 = RandomDirection(*sim, 2), r = nullptr;
  OPTISTEP_PETSC(VecDuplicate(q1, &r));
  PetscScalar q2Mq1 = 0.0, q1Mq2 = 0.0, q1Mq1 = 0.0;
  dot->Apply(q1, r);
  OPTISTEP_PETSC(VecDot(q2, r, &q2Mq1));
  OPTISTEP_PETSC(VecDot(q1, r, &q1Mq1));
  dot->Apply(q2, r);
  OPTISTEP_PETSC(VecDot(q1, r, &q1Mq2));
  VecDestroy(&q1);
  VecDestroy(&q2);
  VecDestroy(&r);
  return {std::abs(q2Mq1 - q1Mq2) / std::abs(q1Mq2), q1Mq1};
}

TEST(DotInitializer, TheSymmetricMergeIsSymmetricPositiveDefiniteAndTheAverageIsNot) {
  const auto [symmetric, energy] = Asymmetry("symmetric", 2);
  const auto [average, unused] = Asymmetry("average", 2);
  PetscPrintf(PETSC_COMM_WORLD, "[          ] |q2^T M q1 - q1^T M q2| / |q1^T M q2|: symmetric %.2e, average %.2e\n",
              symmetric, average);
  EXPECT_LT(symmetric, 1e-10);
  EXPECT_GT(energy, 0.0);
  EXPECT_GT(average, 1e-6) << "averaging is not symmetric";
}

/// The FEM potential with its Hessian shifted by -shift I: indefinite, as a projection bug
/// would leave it.
class IndefinitePotential : public IncrementalPotential {
 public:
  IndefinitePotential(FemIncrementalPotential& fem, double shift) : fem_(fem), shift_(shift) {}
  void Hessian(Vec u, Mat H) override {
    fem_.Hessian(u, H);
    OPTISTEP_PETSC(MatShift(H, -shift_));
  }
  Mat CreateHessian() override { return fem_.CreateHessian(); }
  void CharacteristicNormWeights(double epsilon, Vec w) override { fem_.CharacteristicNormWeights(epsilon, w); }
  PetscInt GlobalNodeCount() const override { return fem_.GlobalNodeCount(); }
  void Project(Vec d) const override { fem_.Project(d); }
  const ElementSets* Elements() const override { return fem_.Elements(); }

 protected:
  PetscReal Evaluate(Vec u, Vec g) override { return g ? fem_.EnergyAndGradient(u, g) : fem_.Energy(u); }

 private:
  FemIncrementalPotential& fem_;
  double shift_;
};

TEST(DotInitializer, AFailedFactorizationFallsBackToLbfgsH) {
  auto sim = SteppedTwistedBar(PETSC_COMM_WORLD);
  SubdomainInitializer dot(PETSC_COMM_WORLD, Dot(1, "average"), MinimizerDefaults{PCJACOBI});
  dot.SetFromOptions();
  // The largest diagonal entry of the Hessian, so that the shifted matrix is negative
  // definite: every subdomain's Cholesky fails at its first pivot.
  PetscReal largest = 0.0;
  {
    Mat H = PotentialOf(*sim).CreateHessian();
    PotentialOf(*sim).Hessian(sim->positions(), H);
    Vec diagonal = nullptr;
    OPTISTEP_PETSC(MatCreateVecs(H, &diagonal, nullptr));
    OPTISTEP_PETSC(MatGetDiagonal(H, diagonal));
    OPTISTEP_PETSC(VecMax(diagonal, nullptr, &largest));
    VecDestroy(&diagonal);
    MatDestroy(&H);
  }
  IndefinitePotential indefinite(PotentialOf(*sim), 2.0 * largest);
  dot.SetUp(indefinite, sim->positions());
  EXPECT_TRUE(dot.FellBack());
  Vec q = RandomDirection(*sim, 3), r = nullptr;
  OPTISTEP_PETSC(VecDuplicate(q, &r));
  EXPECT_GT(dot.Apply(q, r), 0) << "the fallback is LBFGS-H's CG";
  VecDestroy(&q);
  VecDestroy(&r);
  // The next step with a projected Hessian factors again.
  dot.SetUp(PotentialOf(*sim), sim->positions());
  EXPECT_FALSE(dot.FellBack());
}

TEST(DotInitializer, BadSubdomainCountsNameTheKeyOrOption) {
  auto sim = SteppedTwistedBar(PETSC_COMM_WORLD);
  try {
    SetUpDot(PETSC_COMM_WORLD, *sim, 1000000, "average");
    ADD_FAILURE() << "a million subdomains per rank on 10307 tets";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("dot.subdomains_per_rank", 0), 0u) << e.what();
  }
  for (const auto& [option, value] : {std::pair<std::string, std::string>{"-dot_refactor_every", "0"},
                                      std::pair<std::string, std::string>{"-dot_overlap", "-1"},
                                      std::pair<std::string, std::string>{"-dot_subdomains_per_rank", "-1"},
                                      std::pair<std::string, std::string>{"-dot_subdomain_nodes", "0"},
                                      std::pair<std::string, std::string>{"-dot_krylov_its", "-1"}}) {
    const ScopedOptions bad({{option, value}});
    try {
      SetUpDot(PETSC_COMM_WORLD, *sim, 1, "average");
      ADD_FAILURE() << option << " " << value;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(option + " " + value, 0), 0u) << e.what();
    }
  }
}

// --- Coarse space (dot.coarse rigid) -----------------------------------------------------

/// Collective: a rank-replicated dense copy of the distributed matrix A.
Eigen::MatrixXd Replicated(Mat A) {
  PetscInt rows = 0, columns = 0;
  OPTISTEP_PETSC(MatGetSize(A, &rows, &columns));
  IS all_rows = nullptr, all_columns = nullptr;
  OPTISTEP_PETSC(ISCreateStride(PETSC_COMM_SELF, rows, 0, 1, &all_rows));
  OPTISTEP_PETSC(ISCreateStride(PETSC_COMM_SELF, columns, 0, 1, &all_columns));
  Mat* copy = nullptr;
  OPTISTEP_PETSC(MatCreateSubMatrices(A, 1, &all_rows, &all_columns, MAT_INITIAL_MATRIX, &copy));
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(rows, columns);
  for (PetscInt r = 0; r < rows; ++r) {
    PetscInt n = 0;
    const PetscInt* c = nullptr;
    const PetscScalar* v = nullptr;
    OPTISTEP_PETSC(MatGetRow(copy[0], r, &n, &c, &v));
    for (PetscInt k = 0; k < n; ++k) dense(r, c[k]) = v[k];
    OPTISTEP_PETSC(MatRestoreRow(copy[0], r, &n, &c, &v));
  }
  OPTISTEP_PETSC(MatDestroySubMatrices(1, &copy));
  ISDestroy(&all_rows);
  ISDestroy(&all_columns);
  return dense;
}

/// Collective: |Z c - r| / |r| for the least-squares c (the part of r that span(Z) misses).
double DistanceFromSpan(Mat Z, Vec r) {
  Mat ZtZ = nullptr;
  OPTISTEP_PETSC(MatTransposeMatMult(Z, Z, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &ZtZ));
  const Eigen::MatrixXd normal = Replicated(ZtZ);
  MatDestroy(&ZtZ);
  Vec c = nullptr, Zc = nullptr;
  OPTISTEP_PETSC(MatCreateVecs(Z, &c, nullptr));
  OPTISTEP_PETSC(VecDuplicate(r, &Zc));
  OPTISTEP_PETSC(MatMultTranspose(Z, r, c));
  Vec all = nullptr;
  VecScatter to_all = nullptr;
  OPTISTEP_PETSC(VecScatterCreateToAll(c, &to_all, &all));
  OPTISTEP_PETSC(VecScatterBegin(to_all, c, all, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecScatterEnd(to_all, c, all, INSERT_VALUES, SCATTER_FORWARD));
  PetscInt n = 0;
  OPTISTEP_PETSC(VecGetSize(all, &n));
  const PetscScalar* b = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(all, &b));
  const Eigen::VectorXd coefficients = normal.ldlt().solve(Eigen::Map<const Eigen::VectorXd>(b, n));
  OPTISTEP_PETSC(VecRestoreArrayRead(all, &b));
  PetscInt first = 0, end = 0;
  OPTISTEP_PETSC(VecGetOwnershipRange(c, &first, &end));
  PetscScalar* mine = nullptr;
  OPTISTEP_PETSC(VecGetArray(c, &mine));
  for (PetscInt i = first; i < end; ++i) mine[i - first] = coefficients[i];
  OPTISTEP_PETSC(VecRestoreArray(c, &mine));
  OPTISTEP_PETSC(MatMult(Z, c, Zc));
  const double miss = RelativeDistance(Zc, r);
  VecScatterDestroy(&to_all);
  VecDestroy(&all);
  VecDestroy(&c);
  VecDestroy(&Zc);
  return miss;
}

/// Collective: at the simulation's positions x, mode 0-2 the translation e_m, 3-5 the
/// rotation e_(m-3) x (x - p) about a point p off the bar's axis; 6 a field that is not
/// rigid (x_0^2 along e_0); zero at constrained components.
Vec RigidMode(FemSimulation& sim, int mode) {
  Vec r = nullptr;
  OPTISTEP_PETSC(VecDuplicate(sim.positions(), &r));
  PetscInt n = 0;
  OPTISTEP_PETSC(VecGetLocalSize(r, &n));
  const PetscScalar* x = nullptr;
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.positions(), &x));
  OPTISTEP_PETSC(VecGetArray(r, &a));
  const Vec3 p(0.3, -0.2, 0.1);
  for (PetscInt i = 0; i < n / 3; ++i) {
    const Vec3 xi(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
    Vec3 value = Vec3::Zero();
    if (mode < 3) value[mode] = 1.0;
    else if (mode < 6) value = Vec3::Unit(mode - 3).cross(xi - p);
    else value[0] = xi[0] * xi[0];
    for (int d = 0; d < 3; ++d) a[3 * i + d] = value[d];
  }
  OPTISTEP_PETSC(VecRestoreArray(r, &a));
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.positions(), &x));
  PotentialOf(sim).Project(r);
  return r;
}

// Z's columns are each subdomain's rigid-body modes weighted by a partition of unity (the
// weights sum to 1 at every node), so the whole body's rigid-body modes lie in span(Z)
// exactly (to round-off), and a smooth non-rigid field does not.
TEST(DotCoarseSpace, ReproducesTheRigidBodyModesOfTheWholeBody) {
  auto sim = SteppedTwistedBar(PETSC_COMM_WORLD);
  const auto dot = SetUpDot(PETSC_COMM_WORLD, *sim, Dot(0, "symmetric", "rigid", 400));
  const Mat Z = dot->CoarseBasis();
  ASSERT_NE(Z, nullptr);
  PetscInt n_coarse = 0;
  OPTISTEP_PETSC(MatGetSize(Z, nullptr, &n_coarse));
  double worst = 0.0;
  for (int mode = 0; mode < 6; ++mode) {
    Vec r = RigidMode(*sim, mode);
    worst = std::max(worst, DistanceFromSpan(Z, r));
    VecDestroy(&r);
  }
  Vec bent = RigidMode(*sim, 6);
  const double other = DistanceFromSpan(Z, bent);
  VecDestroy(&bent);
  PetscPrintf(PETSC_COMM_WORLD,
              "[          ] %ld coarse modes: |Z c - r| / |r| <= %.2e for the 6 rigid-body modes, %.2e for "
              "a non-rigid field\n",
              static_cast<long>(n_coarse), worst, other);
  EXPECT_GE(n_coarse, 6 * 6) << "about 2605 / 400 subdomains, 6 modes each";
  EXPECT_LT(worst, 1e-10);
  EXPECT_GT(other, 1e-3) << "span(Z) is not everything";
}

TEST(DotCoarseSpace, TheTwoLevelInitializerIsSymmetricPositiveDefinite) {
  auto sim = SteppedTwistedBar(PETSC_COMM_WORLD);
  const auto dot = SetUpDot(PETSC_COMM_WORLD, *sim, Dot(0, "symmetric", "rigid", 400));
  ASSERT_NE(dot->CoarseBasis(), nullptr);
  const int n = 5;
  std::vector<Vec> q(n), Mq(n);
  for (int i = 0; i < n; ++i) {
    q[i] = RandomDirection(*sim, 20 + i);
    OPTISTEP_PETSC(VecDuplicate(q[i], &Mq[i]));
    dot->Apply(q[i], Mq[i]);
  }
  double asymmetry = 0.0, lowest = INFINITY;
  for (int i = 0; i < n; ++i) {
    PetscScalar qMq = 0.0, qq = 0.0;
    OPTISTEP_PETSC(VecDot(q[i], Mq[i], &qMq));
    OPTISTEP_PETSC(VecDot(q[i], q[i], &qq));
    lowest = std::min(lowest, qMq / qq);
    for (int j = 0; j < i; ++j) {
      PetscScalar a = 0.0, b = 0.0;
      OPTISTEP_PETSC(VecDot(q[j], Mq[i], &a));
      OPTISTEP_PETSC(VecDot(q[i], Mq[j], &b));
      asymmetry = std::max(asymmetry, std::abs(a - b) / std::max(std::abs(a), std::abs(b)));
    }
  }
  for (int i = 0; i < n; ++i) {
    VecDestroy(&q[i]);
    VecDestroy(&Mq[i]);
  }
  PetscPrintf(PETSC_COMM_WORLD,
              "[          ] two-level: |q_j^T M q_i - q_i^T M q_j| / |q_j^T M q_i| <= %.2e, q^T M q / q^T q >= %.3e\n",
              asymmetry, lowest);
  EXPECT_LT(asymmetry, 1e-10);
  EXPECT_GT(lowest, 0.0);
}

TEST(DotCoarseSpace, WithOneSubdomainInAllItIsLbfgsHsExactInverseAndWithManyItBeatsOneLevel) {
  if (test::Rank() == 0) {
    const double one = DirectionDifferenceFromLbfgsH(Dot(1, "symmetric", "rigid"));
    const double one_level = DirectionDifferenceFromLbfgsH(Dot(0, "symmetric", "none", 400));
    const double two_level = DirectionDifferenceFromLbfgsH(Dot(0, "symmetric", "rigid", 400));
    std::printf("[          ] relative difference from LBFGS-H's exact direction: two-level with one "
                "subdomain %.2e; subdomains of 400 nodes: one level %.2e, two levels %.2e\n",
                one, one_level, two_level);
    EXPECT_LT(one, 1e-10);
    EXPECT_LT(two_level, one_level);
  }
  MPI_Barrier(PETSC_COMM_WORLD);
}

// --- Sized subdomains (dot.subdomain_nodes) ----------------------------------------------

/// Collective: every subdomain of every rank as (mesh part, its tets' original ids), on
/// rank 0.
std::vector<std::pair<int, std::vector<PetscInt>>> GatherSubdomains(MPI_Comm comm, const SubdomainInitializer& dot) {
  std::vector<long long> mine;
  for (int j = 0; j < dot.SubdomainCount(); ++j) {
    mine.push_back(dot.SubdomainPart(j));
    mine.push_back(static_cast<long long>(dot.SubdomainTets(j).size()));
    mine.insert(mine.end(), dot.SubdomainTets(j).begin(), dot.SubdomainTets(j).end());
  }
  int size = 1, rank = 0, count = static_cast<int>(mine.size());
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  std::vector<int> counts(size), displacements(size, 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (int r = 1; r < size; ++r) displacements[r] = displacements[r - 1] + counts[r - 1];
  std::vector<long long> all(rank == 0 ? displacements.back() + counts.back() : 0);
  MPI_Gatherv(mine.data(), count, MPI_LONG_LONG, all.data(), counts.data(), displacements.data(), MPI_LONG_LONG, 0,
              comm);
  std::vector<std::pair<int, std::vector<PetscInt>>> subdomains;
  for (std::size_t at = 0; at < all.size();) {
    const int part = static_cast<int>(all[at]);
    const std::size_t n = static_cast<std::size_t>(all[at + 1]);
    subdomains.emplace_back(part, std::vector<PetscInt>(all.begin() + at + 2, all.begin() + at + 2 + n));
    at += 2 + n;
  }
  return subdomains;
}

// The mesh is split into parts independently of the ranks, each rank's share of a part is a
// subdomain: a part no rank boundary cuts is the same set of tets on any rank count, and the
// shares of a cut part make up the part.
TEST(DotSizedSubdomains, AreTheSameTetSetsOnAnyRankCountWhereNoRankBoundaryCutsThem) {
  auto sim = SteppedTwistedBar(PETSC_COMM_WORLD);
  const auto dot = SetUpDot(PETSC_COMM_WORLD, *sim, Dot(0, "symmetric", "none", 300));
  const auto pieces = GatherSubdomains(PETSC_COMM_WORLD, *dot);
  if (test::Rank() == 0) {
    auto alone = SteppedTwistedBar(PETSC_COMM_SELF);
    const auto single = SetUpDot(PETSC_COMM_SELF, *alone, Dot(0, "symmetric", "none", 300));
    const auto whole = GatherSubdomains(PETSC_COMM_SELF, *single);
    std::map<int, std::vector<PetscInt>> parts;  // one rank: a subdomain per part
    for (const auto& [part, tets] : whole) {
      EXPECT_EQ(parts.count(part), 0u) << "part " << part << " twice on one rank";
      parts[part] = tets;
    }
    std::map<int, std::vector<PetscInt>> joined;
    std::map<int, int> shares;
    for (const auto& [part, tets] : pieces) {
      joined[part].insert(joined[part].end(), tets.begin(), tets.end());
      ++shares[part];
      if (test::Size() == 1) EXPECT_EQ(tets, parts[part]);
    }
    int uncut = 0;
    for (auto& [part, tets] : joined) {
      std::sort(tets.begin(), tets.end());
      EXPECT_EQ(tets, parts[part]) << "the shares of part " << part << " make up the part";
      if (shares[part] == 1) ++uncut;
    }
    EXPECT_EQ(joined.size(), parts.size());
    // 2605 nodes / 300: 9 parts, each about 300 nodes.
    EXPECT_EQ(parts.size(), 9u);
    std::printf("[          ] %zu parts of the mesh; on %d rank(s) %d of them uncut, %zu subdomains\n",
                parts.size(), test::Size(), uncut, pieces.size());
    EXPECT_GE(uncut, 1);
  }
  MPI_Barrier(PETSC_COMM_WORLD);
}

}  // namespace
}  // namespace optistep

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
//  - more subdomains than a rank has tets, or fewer than one, is an InputError naming the
//    key or option;
//  - -dot_overlap 1 brings two subdomains' direction closer to LBFGS-H's exact one; a
//    factorization lagged by -dot_refactor_every 2 gives bitwise the first step's
//    back-solves on the second step and is remade on the third.
#include <gtest/gtest.h>
#include <petscksp.h>

#include <algorithm>
#include <cmath>
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

/// Collective: DOT's initializer set up at the simulation's current positions.
std::unique_ptr<SubdomainInitializer> SetUpDot(MPI_Comm comm, FemSimulation& sim, int per_rank,
                                               const std::string& merge) {
  auto dot = std::make_unique<SubdomainInitializer>(comm, DotConfig{per_rank, merge},
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

/// |r_dot - r_h| / |r_h| for one random q, the bar on rank 0 alone with `per_rank`
/// subdomains: DOT's initializer against LBFGS-H with a Cholesky solve.
double DirectionDifferenceFromLbfgsH(int per_rank, int overlap = 0) {
  const ScopedOptions layers({{std::string("-dot_overlap"), std::to_string(overlap)}});
  auto sim = SteppedTwistedBar(PETSC_COMM_SELF);
  const auto dot = SetUpDot(PETSC_COMM_SELF, *sim, per_rank, "average");
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
  PetscReal scale = 0.0, difference = 0.0;
  OPTISTEP_PETSC(VecNorm(r_h, NORM_2, &scale));
  OPTISTEP_PETSC(VecAXPY(r_dot, -1.0, r_h));
  OPTISTEP_PETSC(VecNorm(r_dot, NORM_2, &difference));
  VecDestroy(&q);
  VecDestroy(&r_dot);
  VecDestroy(&r_h);
  return difference / scale;
}

TEST(DotInitializer, OneSubdomainInAllGivesLbfgsHsExactDirection) {
  if (test::Rank() == 0) {
    const double one = DirectionDifferenceFromLbfgsH(1);
    const double two = DirectionDifferenceFromLbfgsH(2);
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
    const double one = DirectionDifferenceFromLbfgsH(1, 1);
    const double disjoint = DirectionDifferenceFromLbfgsH(2, 0);
    const double overlapped = DirectionDifferenceFromLbfgsH(2, 1);
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
  SubdomainInitializer dot(PETSC_COMM_WORLD, DotConfig{}, MinimizerDefaults{PCJACOBI});
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
  {
    const ScopedOptions zero({{std::string("-dot_subdomains_per_rank"), std::string("0")}});
    try {
      SetUpDot(PETSC_COMM_WORLD, *sim, 1, "average");
      ADD_FAILURE() << "-dot_subdomains_per_rank 0";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("-dot_subdomains_per_rank 0", 0), 0u) << e.what();
    }
  }
  for (const auto& [option, value] : {std::pair<std::string, std::string>{"-dot_refactor_every", "0"},
                                      std::pair<std::string, std::string>{"-dot_overlap", "-1"}}) {
    const ScopedOptions bad({{option, value}});
    try {
      SetUpDot(PETSC_COMM_WORLD, *sim, 1, "average");
      ADD_FAILURE() << option << " " << value;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(option + " " + value, 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace optistep

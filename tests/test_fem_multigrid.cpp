// The embedded-grid multigrid of tet meshes (solvers/TetGridEmbedding, TetGridMultigrid;
// after Xian, Tong, Liu 2019) on DOT's twisted bar (configs/twisted_bar.yaml, 2605 nodes,
// 10307 tets) on 1, 2 and 4 ranks, checked against numbers from elsewhere:
//  - the first prolongation reproduces affine fields at the free nodes: a coarse field
//    A y + c of the grid coordinates y lands on A (X - o) / h + c at a node at rest position
//    X (o the body's lowest corner), to round-off; held nodes' rows are zero. The grid is
//    exactly the set of cell corners the test's own trilinear weights are non-zero at, and
//    each grid node belongs to the rank whose owned nodes take the most weight from it;
//  - the coarse operators PCMG holds equal P^T H P formed in Eigen: the first from P written
//    out here from the rest positions and H gathered from PETSc, the next ones from the
//    level above and PCMG's grid prolongation;
//  - the V-cycle (default smoother, exact coarsest solve) is symmetric and positive
//    definite on random vectors; with a forward-only Gauss-Seidel smoother (negative
//    control) it is not symmetric;
//  - Newton with it (solver.method: newton_mg) reaches, step by step, the state Newton
//    with Jacobi-PCG reaches, within what the CN tolerance allows (B1 of
//    test_lbfgs_scenes.cpp), in far fewer CG iterations; twice on the same ranks and across
//    a restart it is bitwise the same;
//  - the set-up is reused: one symbolic Galerkin phase per run, and with
//    -newton_mg_coarse_update step one numeric phase per step; LBFGS-H's Cholesky factor
//    (a PETSc factorization) is the same object from step to step (its symbolic phase
//    kept);
//  - bad input: a level count the mesh cannot coarsen to names solver.mg_levels or
//    -newton_pc_mg_levels, a first grid no coarser than the mesh names -newton_mg_grid_ratio.
#include <gtest/gtest.h>
#include <petscksp.h>

#include <Eigen/Sparse>
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "FemRunChecks.hpp"
#include "GatheredMatrix.hpp"
#include "MethodComparison.hpp"
#include "ScopedOptions.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "integrators/FemBackwardEuler.hpp"
#include "core/Exchange.hpp"
#include "solvers/NodeEmbedding.hpp"
#include "solvers/TetGridEmbedding.hpp"
#include "solvers/TetGridMultigrid.hpp"

namespace optistep {
namespace {

using test::Gather;
using test::MaxAbs;
using test::ScopedOptions;
using test::Sparse;
using Options = std::vector<std::pair<std::string, std::string>>;

const std::string kBar = "configs/twisted_bar.yaml";

FemIncrementalPotential& PotentialOf(FemSimulation& sim) {
  return dynamic_cast<FemBackwardEuler&>(sim.integrator()).potential();
}

/// The twisted bar on PETSC_COMM_WORLD after one step (a deformed state's Hessian).
std::unique_ptr<FemSimulation> SteppedBar(const std::vector<std::string>& overrides = {}) {
  auto sim = std::make_unique<FemSimulation>(PETSC_COMM_WORLD,
                                             ReadSceneConfig(test::SourcePath(kBar), overrides));
  sim->AdvanceStep(nullptr);
  return sim;
}

/// Every rank's nodes at rest, in global (PETSc) order: positions and held flags.
struct AllNodes {
  std::vector<std::array<double, 3>> X;
  std::vector<char> held;
  std::vector<int> rank;  ///< the owner
};

AllNodes GatherNodes(const RestNodes& nodes) {
  std::vector<double> x;
  std::vector<int> held, rank;
  for (std::size_t k = 0; k < nodes.X.size(); ++k) {
    x.insert(x.end(), nodes.X[k].begin(), nodes.X[k].end());
    held.push_back(nodes.held[k]);
    rank.push_back(test::Rank());
  }
  const auto all_x = AllGatherLists(MPI_COMM_WORLD, x);
  const auto all_held = AllGatherLists(MPI_COMM_WORLD, held);
  const auto all_rank = AllGatherLists(MPI_COMM_WORLD, rank);
  AllNodes all;
  for (std::size_t k = 0; k < all_held.size(); ++k) {
    all.X.push_back({all_x[3 * k], all_x[3 * k + 1], all_x[3 * k + 2]});
    all.held.push_back(static_cast<char>(all_held[k]));
    all.rank.push_back(all_rank[k]);
  }
  return all;
}

/// The trilinear weights of a node at rest position X on the grid of spacing h with lowest
/// corner o (one body): the 8 corners of the cell holding it, weights prod (1 - t) or t;
/// corners of weight 0 left out.
std::vector<std::pair<GridCoord, double>> TrilinearWeights(const std::array<double, 3>& X,
                                                           const std::array<double, 3>& o, double h) {
  int cell[3];
  double t[3];
  for (int d = 0; d < 3; ++d) {
    const double s = (X[d] - o[d]) / h;
    cell[d] = static_cast<int>(std::floor(s));
    t[d] = s - cell[d];
  }
  std::vector<std::pair<GridCoord, double>> weights;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) {
        const double w = (a ? t[0] : 1 - t[0]) * (b ? t[1] : 1 - t[1]) * (c ? t[2] : 1 - t[2]);
        if (w != 0.0) weights.push_back({GridCoord{cell[0] + a, cell[1] + b, cell[2] + c}, w});
      }
  return weights;
}

std::array<double, 3> LowestCorner(const AllNodes& all) {
  std::array<double, 3> o = all.X[0];
  for (const auto& x : all.X)
    for (int d = 0; d < 3; ++d) o[d] = std::min(o[d], x[d]);
  return o;
}

TEST(FemMultigrid, EmbeddingReproducesAffineFieldsAtTheNodesAndOwnsByBlocks) {
  FemSimulation sim(PETSC_COMM_WORLD, ReadSceneConfig(test::SourcePath(kBar)));
  const RestNodes& nodes = *PotentialOf(sim).Nodes();
  const double h = 0.23;  // m: about 2 mean node spacings of the bar
  GridInfo grid;
  Mat P = BuildTetGridProlongation(PETSC_COMM_WORLD, nodes, h, 2, &grid);
  EXPECT_EQ(grid.dx, h);
  const AllNodes all = GatherNodes(nodes);
  const std::array<double, 3> o = LowestCorner(all);
  const std::vector<GridCoord> coarse = test::GatherGridNodes(grid);
  ASSERT_EQ(static_cast<PetscInt>(coarse.size()), grid.n_global);

  // The test's own grid: the corners free nodes take non-zero weight from, and which ranks'
  // free nodes reference each.
  std::map<GridCoord, std::set<int>> taken;
  for (std::size_t k = 0; k < all.X.size(); ++k)
    if (!all.held[k])
      for (const auto& [c, w] : TrilinearWeights(all.X[k], o, h)) taken[c].insert(all.rank[k]);
  EXPECT_EQ(taken.size(), coarse.size()) << "grid nodes";
  std::vector<int> owner_of_global(coarse.size(), -1);
  {
    std::vector<int> mine(grid.owned_nodes.size(), test::Rank());
    const auto all_owners = AllGatherLists(MPI_COMM_WORLD, mine);
    owner_of_global.assign(all_owners.begin(), all_owners.end());
  }
  // Ownership by HOT's 4^3 blocks (what keeps the colored smoother independent of the rank
  // count): every block on one rank, and that rank references the block.
  int unknown = 0, split_blocks = 0, unreferenced_owner = 0;
  std::map<GridCoord, int> block_owner;
  std::map<GridCoord, std::set<int>> block_referenced_by;
  for (std::size_t n = 0; n < coarse.size(); ++n) {
    const auto it = taken.find(coarse[n]);
    if (it == taken.end()) {
      ++unknown;
      continue;
    }
    const GridCoord b = BlockOf(coarse[n]);
    const auto [at, fresh] = block_owner.emplace(b, owner_of_global[n]);
    if (!fresh && at->second != owner_of_global[n]) ++split_blocks;
    block_referenced_by[b].insert(it->second.begin(), it->second.end());
  }
  for (const auto& [b, r] : block_owner)
    if (!block_referenced_by[b].count(r)) ++unreferenced_owner;
  EXPECT_EQ(unknown, 0) << "grid nodes no free node takes weight from";
  EXPECT_EQ(split_blocks, 0) << "grid nodes whose 4^3 block has another owner";
  EXPECT_EQ(unreferenced_owner, 0) << "blocks owned by a rank none of whose nodes reference them";

  // An affine field of the grid coordinates, prolonged.
  const double A[3][3] = {{0.75, -0.5, 0.25}, {0.125, 1.5, -1.0}, {-0.375, 0.625, 2.0}};
  const double c[3] = {3.0, -2.0, 0.5};
  Vec uc = nullptr, uf = nullptr;
  OPTISTEP_PETSC(MatCreateVecs(P, &uc, &uf));
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArray(uc, &a));
  for (std::size_t n = 0; n < grid.owned_nodes.size(); ++n)
    for (int i = 0; i < 3; ++i) {
      a[3 * n + i] = c[i];
      for (int j = 0; j < 3; ++j) a[3 * n + i] += A[i][j] * grid.owned_nodes[n][j];
    }
  OPTISTEP_PETSC(VecRestoreArray(uc, &a));
  OPTISTEP_PETSC(MatMult(P, uc, uf));
  const PetscScalar* f = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(uf, &f));
  double worst = 0.0, held_worst = 0.0, scale = 0.0;
  for (std::size_t k = 0; k < nodes.X.size(); ++k)
    for (int i = 0; i < 3; ++i) {
      double expected = c[i];
      for (int j = 0; j < 3; ++j) expected += A[i][j] * (nodes.X[k][j] - o[j]) / h;
      scale = std::max(scale, std::abs(expected));
      if (nodes.held[k])
        held_worst = std::max(held_worst, std::abs(f[3 * k + i]));
      else
        worst = std::max(worst, std::abs(f[3 * k + i] - expected));
    }
  OPTISTEP_PETSC(VecRestoreArrayRead(uf, &f));
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &held_worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(worst, 1e-13 * scale) << "largest error of the prolonged affine field";
  EXPECT_EQ(held_worst, 0.0) << "held nodes' rows";
  EXPECT_GT(scale, 10.0);
  VecDestroy(&uc);
  VecDestroy(&uf);
  MatDestroy(&P);
}

/// The bar scene's solver block (automatic levels).
SolverConfig BarSolverConfig() { return ReadSceneConfig(test::SourcePath(kBar)).solver; }

/// The twisted bar after one step, its Hessian H there, and a KSP (KSPPREONLY) whose PC is
/// the embedded-grid multigrid under the prefix "femmg_test_" as Newton has it, set up on H.
struct BarVCycle {
  BarVCycle()
      : sim(SteppedBar()), potential(PotentialOf(*sim)), multigrid(PETSC_COMM_WORLD, "femmg_test_", BarSolverConfig(), /*newton=*/true) {
    H = potential.CreateHessian();
    potential.Hessian(sim->positions(), H);
    OPTISTEP_PETSC(KSPCreate(PETSC_COMM_WORLD, &ksp));
    OPTISTEP_PETSC(KSPSetOptionsPrefix(ksp, "femmg_test_"));
    OPTISTEP_PETSC(KSPSetType(ksp, KSPPREONLY));
    OPTISTEP_PETSC(KSPGetPC(ksp, &pc));
    multigrid.Configure(pc);
    OPTISTEP_PETSC(KSPSetFromOptions(ksp));
    multigrid.SetUp(pc, potential, H);
    OPTISTEP_PETSC(KSPSetOperators(ksp, H, H));
    OPTISTEP_PETSC(KSPSetUp(ksp));
    OPTISTEP_PETSC(PCMGGetLevels(pc, &levels));
  }
  ~BarVCycle() {
    KSPDestroy(&ksp);
    MatDestroy(&H);
  }
  std::unique_ptr<FemSimulation> sim;
  FemIncrementalPotential& potential;
  TetGridMultigrid multigrid;
  Mat H = nullptr;
  KSP ksp = nullptr;
  PC pc = nullptr;
  PetscInt levels = 0;
};

TEST(FemMultigrid, CoarseOperatorsArePtHPFormedIndependently) {
  BarVCycle vcycle;
  const PetscInt levels = vcycle.levels;
  // Automatic levels: 2605 nodes, a first grid of ~700 nodes, one more of ~150 (<= 500).
  EXPECT_EQ(levels, 3);
  const auto& sizes = vcycle.multigrid.level_sizes();
  ASSERT_EQ(static_cast<PetscInt>(sizes.size()), levels);
  EXPECT_EQ(sizes[0].nodes, 2605);
  for (PetscInt m = 1; m < levels; ++m) EXPECT_LT(sizes[m].nodes, sizes[m - 1].nodes);
  EXPECT_LE(sizes.back().nodes, 500);

  // P of the first grid written out from the rest positions; the grid's numbering from
  // BuildTetGridProlongation at the multigrid's spacing.
  const RestNodes& nodes = *vcycle.potential.Nodes();
  GridInfo grid;
  Mat P0 = BuildTetGridProlongation(PETSC_COMM_WORLD, nodes, vcycle.multigrid.grid_spacing(), -1, &grid);
  MatDestroy(&P0);
  const std::vector<GridCoord> coarse = test::GatherGridNodes(grid);
  std::map<GridCoord, int> index;
  for (std::size_t n = 0; n < coarse.size(); ++n) index[coarse[n]] = static_cast<int>(n);
  const AllNodes all = GatherNodes(nodes);
  const std::array<double, 3> o = LowestCorner(all);
  std::vector<Eigen::Triplet<double>> triplets;
  for (std::size_t k = 0; k < all.X.size(); ++k) {
    if (all.held[k]) continue;
    for (const auto& [c, w] : TrilinearWeights(all.X[k], o, grid.dx))
      for (int d = 0; d < 3; ++d) triplets.emplace_back(3 * static_cast<int>(k) + d, 3 * index.at(c) + d, w);
  }
  Sparse P(3 * static_cast<int>(all.X.size()), 3 * static_cast<int>(coarse.size()));
  P.setFromTriplets(triplets.begin(), triplets.end());

  Sparse fine = Gather(vcycle.H);
  for (PetscInt level = levels - 1; level > 0; --level) {
    Mat interpolation = nullptr, coarse_operator = nullptr;
    KSP smoother = nullptr;
    OPTISTEP_PETSC(PCMGGetInterpolation(vcycle.pc, level, &interpolation));
    OPTISTEP_PETSC(PCMGGetSmoother(vcycle.pc, level - 1, &smoother));
    OPTISTEP_PETSC(KSPGetOperators(smoother, &coarse_operator, nullptr));
    const Sparse prolongation = level == levels - 1 ? P : Gather(interpolation);
    if (level == levels - 1) {
      const Sparse used = Gather(interpolation);
      EXPECT_LT(MaxAbs(Sparse(used - P)), 1e-15) << "the first prolongation against the weights written out";
    }
    const Sparse reference = Sparse(prolongation.transpose()) * fine * prolongation;
    const Sparse galerkin = Gather(coarse_operator);
    const double difference = MaxAbs(Sparse(galerkin - reference)), size = MaxAbs(reference);
    PetscPrintf(PETSC_COMM_WORLD, "[          ] level %d: %ld rows, |A - P^T H P| %.3e of %.3e\n",
                static_cast<int>(level - 1), static_cast<long>(galerkin.rows()), difference, size);
    EXPECT_LT(difference, 1e-12 * size) << "level " << level - 1;
    EXPECT_EQ(galerkin.rows(), prolongation.cols());
    fine = galerkin;
  }
}

/// The grid nodes a level's nodes take weight from on the level below through HOT's linear
/// embedding (solvers/NodeEmbedding.hpp, written out here): per axis, an even coordinate
/// 2c lies on coarse node c, an odd one 2c + 1 halfway between c and c + 1.
std::set<GridCoord> CoarsenedLinearly(const std::set<GridCoord>& fine) {
  const auto axis = [](int i) {
    const int c = i >= 0 ? i / 2 : -((-i + 1) / 2);
    return i == 2 * c ? std::vector<int>{c} : std::vector<int>{c, c + 1};
  };
  std::set<GridCoord> coarse;
  for (const GridCoord& g : fine)
    for (int x : axis(g[0]))
      for (int y : axis(g[1]))
        for (int z : axis(g[2])) coarse.insert(GridCoord{x, y, z});
  return coarse;
}

// The hierarchy depends on the mesh alone, not on the partition: on every rank count the
// levels hold the nodes the test derives from the rest positions (the first grid: the
// corners the free nodes take trilinear weight from; each level below: HOT's linear
// embedding of the one above), with as many levels as the automatic rule gives (coarsen
// until a level has at most 500 nodes).
TEST(FemMultigrid, TheHierarchyIsTheSameOnEveryRankCount) {
  BarVCycle vcycle;
  const auto& sizes = vcycle.multigrid.level_sizes();
  const AllNodes all = GatherNodes(*vcycle.potential.Nodes());
  const std::array<double, 3> o = LowestCorner(all);
  std::vector<std::size_t> expected = {all.X.size()};
  std::set<GridCoord> level;
  for (std::size_t k = 0; k < all.X.size(); ++k)
    if (!all.held[k])
      for (const auto& [c, w] : TrilinearWeights(all.X[k], o, vcycle.multigrid.grid_spacing())) level.insert(c);
  expected.push_back(level.size());
  while (level.size() > 500) {
    level = CoarsenedLinearly(level);
    expected.push_back(level.size());
  }
  PetscPrintf(PETSC_COMM_WORLD, "[          ] %d ranks: levels of", test::Size());
  for (const auto& size : sizes) PetscPrintf(PETSC_COMM_WORLD, " %ld", static_cast<long>(size.nodes));
  PetscPrintf(PETSC_COMM_WORLD, " nodes\n");
  ASSERT_EQ(sizes.size(), expected.size()) << "levels";
  EXPECT_EQ(vcycle.levels, static_cast<PetscInt>(expected.size()));
  for (std::size_t m = 0; m < sizes.size(); ++m) {
    EXPECT_EQ(sizes[m].nodes, static_cast<PetscInt>(expected[m])) << "level " << m;
    EXPECT_LE(sizes[m].fewest_owned, sizes[m].most_owned);
    EXPECT_LE(sizes[m].most_owned, sizes[m].nodes);
  }
  // Every level's operator has 3 rows per node of that level (PCMG numbers levels from the
  // coarsest).
  for (PetscInt level_index = 0; level_index < vcycle.levels; ++level_index) {
    KSP smoother = nullptr;
    Mat A = nullptr;
    PetscInt rows = 0;
    OPTISTEP_PETSC(PCMGGetSmoother(vcycle.pc, level_index, &smoother));
    OPTISTEP_PETSC(KSPGetOperators(smoother, &A, nullptr));
    OPTISTEP_PETSC(MatGetSize(A, &rows, nullptr));
    EXPECT_EQ(rows, 3 * static_cast<PetscInt>(expected[vcycle.levels - 1 - level_index]));
  }
}

/// Collective: a vector of u's layout with reproducible random entries in [-1, 1].
Vec RandomVector(Vec like, unsigned seed) {
  Vec v = nullptr;
  OPTISTEP_PETSC(VecDuplicate(like, &v));
  test::RandomField(v, 1.0, seed);
  return v;
}

/// Largest |<Vx, y> - <x, Vy>| / (|Vx| |y|) over pairs of random vectors, and the smallest
/// <Vx, x> / |x|^2 over random x.
std::pair<double, double> SymmetryAndCurvature(KSP ksp, Vec like) {
  double asymmetry = 0.0, curvature = INFINITY;
  for (unsigned s = 0; s < 4; ++s) {
    Vec x = RandomVector(like, 11 + s), y = RandomVector(like, 23 + s), Vx = nullptr, Vy = nullptr;
    OPTISTEP_PETSC(VecDuplicate(like, &Vx));
    OPTISTEP_PETSC(VecDuplicate(like, &Vy));
    OPTISTEP_PETSC(KSPSolve(ksp, x, Vx));
    OPTISTEP_PETSC(KSPSolve(ksp, y, Vy));
    PetscScalar vxy = 0.0, xvy = 0.0, vxx = 0.0, xx = 0.0;
    PetscReal nvx = 0.0, ny = 0.0;
    OPTISTEP_PETSC(VecDot(Vx, y, &vxy));
    OPTISTEP_PETSC(VecDot(x, Vy, &xvy));
    OPTISTEP_PETSC(VecDot(Vx, x, &vxx));
    OPTISTEP_PETSC(VecDot(x, x, &xx));
    OPTISTEP_PETSC(VecNorm(Vx, NORM_2, &nvx));
    OPTISTEP_PETSC(VecNorm(y, NORM_2, &ny));
    asymmetry = std::max(asymmetry, std::abs(vxy - xvy) / (nvx * ny));
    curvature = std::min(curvature, vxx / xx);
    for (Vec* v : {&x, &y, &Vx, &Vy}) VecDestroy(v);
  }
  return {asymmetry, curvature};
}

TEST(FemMultigrid, VCycleIsSymmetricPositiveDefinite) {
  {
    BarVCycle vcycle;
    const auto [asymmetry, curvature] = SymmetryAndCurvature(vcycle.ksp, vcycle.sim->positions());
    PetscPrintf(PETSC_COMM_WORLD, "[          ] V-cycle: asymmetry %.2e, smallest x^T V x / x^T x %.3e\n",
                asymmetry, curvature);
    EXPECT_LT(asymmetry, 1e-12);
    EXPECT_GT(curvature, 0.0);
  }
  {
    const ScopedOptions forward(Options{{"-femmg_test_mg_levels_pc_sor_local_forward", ""}});
    BarVCycle vcycle;
    const auto [asymmetry, curvature] = SymmetryAndCurvature(vcycle.ksp, vcycle.sim->positions());
    PetscPrintf(PETSC_COMM_WORLD, "[          ] forward Gauss-Seidel V-cycle: asymmetry %.2e\n", asymmetry);
    EXPECT_GT(asymmetry, 1e-6) << "the negative control should not be symmetric";
  }
}

/// The twisted bar with newton (Jacobi-PCG) and newton_mg, `steps` steps each, both at the
/// scene's tolerance; their difference in units of B1 (test_lbfgs_scenes.cpp).
void CompareWithJacobi(int steps, const std::vector<std::string>& overrides) {
  const std::string path = test::SourcePath(kBar);
  std::vector<std::string> mg = {"solver.method=newton_mg"};
  mg.insert(mg.end(), overrides.begin(), overrides.end());
  test::RecordedRun<FemSimulation> jacobi(path, overrides);
  test::RecordedRun<FemSimulation> multigrid(path, mg);
  for (int n = 0; n < steps; ++n) {
    jacobi.Step();
    multigrid.Step();
  }
  ASSERT_EQ(jacobi.records().size(), multigrid.records().size());
  int cg_jacobi = 0, cg_multigrid = 0;
  for (std::size_t k = 0; k < jacobi.records().size(); ++k) {
    const StepRecord& a = jacobi.records()[k];
    const StepRecord& b = multigrid.records()[k];
    EXPECT_EQ(a.t, b.t);
    EXPECT_EQ(b.method, "newton_mg");
    for (const StepRecord* r : {&a, &b}) {
      EXPECT_EQ(r->halvings, 0);
      EXPECT_TRUE(r->solve.converged);
      EXPECT_LT(r->solve.cn_residual, 1.0);
    }
    cg_jacobi += a.solve.linear_iterations;
    cg_multigrid += b.solve.linear_iterations;
  }
  const double B1 = test::OneSolveBound(jacobi.sim(), jacobi.scene().solver.cn_epsilon, jacobi.records().back().dt);
  const double rms = test::MassWeightedDifference(jacobi.sim(), multigrid.sim());
  const test::Difference d = test::Compare(jacobi.sim().GatherPositions(), multigrid.sim().GatherPositions(), {});
  PetscPrintf(PETSC_COMM_WORLD,
              "[          ] twisted bar, %d steps: CG iterations %d (Jacobi) and %d (multigrid); positions differ "
              "by %.3e m RMS (%.2f B1), %.3e m at most (%.2f B1)\n",
              steps, cg_jacobi, cg_multigrid, rms, rms / B1, d.largest, d.largest / B1);
  EXPECT_LT(rms, 4.0 * B1);
  EXPECT_LT(d.largest, 15.0 * B1);
  EXPECT_GT(rms, 0.0) << "the two runs should be different preconditioners";
  EXPECT_LT(3 * cg_multigrid, cg_jacobi) << "the multigrid should need far fewer CG iterations";
}

TEST(FemMultigrid, NewtonWithItReachesJacobisStateWithinTheCnTolerance) { CompareWithJacobi(10, {}); }

// The fast twist (the ends at -/+pi rad/s), where Newton takes 2-4 iterations per
// step: the later ones run on coarse levels of the step's first Hessian.
TEST(FemMultigrid, NewtonWithCoarseLevelsPerStepReachesJacobisStateWithinTheCnTolerance) {
  const ScopedOptions step(Options{{"-newton_mg_coarse_update", "step"}});
  CompareWithJacobi(4, {"boundary_conditions.0.motion.0.rotate.angular_velocity=-3.141592653589793",
                        "boundary_conditions.1.motion.0.rotate.angular_velocity=3.141592653589793"});
}

TEST(FemMultigrid, NewtonWithItIsBitwiseRepeatableAndAcrossARestart) {
  const std::string dir = test::SharedTempDir("femmg_restart");
  SceneConfig scene = ReadSceneConfig(test::SourcePath(kBar),
                                      {"solver.method=newton_mg", "time.frames=2", "output.directory=" + dir});
  FemSimulation a(PETSC_COMM_WORLD, scene), b(PETSC_COMM_WORLD, scene);
  EXPECT_EQ(test::DifferingValues(test::RunToEnd(a, scene), test::RunToEnd(b, scene)), 0u);
  test::ExpectResumedBitwise(scene, 1, 1);
}

TEST(FemMultigrid, TheHierarchyIsFormedOnceAndRefilled) {
  BarVCycle vcycle;
  // Newton's use: every iteration a new Hessian in the same matrix.
  for (int k = 0; k < 2; ++k) {
    OPTISTEP_PETSC(VecShift(vcycle.sim->positions(), 1e-3));
    vcycle.potential.Hessian(vcycle.sim->positions(), vcycle.H);
    vcycle.multigrid.SetUp(vcycle.pc, vcycle.potential, vcycle.H, false);
  }
  EXPECT_EQ(vcycle.multigrid.symbolic_setups(), 1);
  EXPECT_EQ(vcycle.multigrid.numeric_setups(), 2);
  EXPECT_EQ(vcycle.multigrid.lagged_setups(), 0);
}

/// Collective: the operator of PCMG level `level` (0 the coarsest) gathered.
Sparse LevelOperator(PC pc, PetscInt level) {
  KSP smoother = nullptr;
  Mat A = nullptr;
  OPTISTEP_PETSC(PCMGGetSmoother(pc, level, &smoother));
  OPTISTEP_PETSC(KSPGetOperators(smoother, &A, nullptr));
  return Gather(A);
}

// -<prefix>mg_coarse_update step: a solve's later Hessians keep the coarse levels of its
// first; the finest level is the Hessian as it is.
TEST(FemMultigrid, CoarseLevelsPerStepKeepTheFirstHessiansProducts) {
  const ScopedOptions step(Options{{"-femmg_test_mg_coarse_update", "step"}});
  BarVCycle vcycle;
  const PetscInt levels = vcycle.levels;
  const Sparse first_coarse = LevelOperator(vcycle.pc, levels - 2);
  // Another state: the bar stretched by 1% along x.
  Vec x = nullptr;
  OPTISTEP_PETSC(VecDuplicate(vcycle.sim->positions(), &x));
  OPTISTEP_PETSC(VecCopy(vcycle.sim->positions(), x));
  PetscInt n = 0;
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetLocalSize(x, &n));
  OPTISTEP_PETSC(VecGetArray(x, &a));
  for (PetscInt i = 0; i < n; i += 3) a[i] *= 1.01;
  OPTISTEP_PETSC(VecRestoreArray(x, &a));
  vcycle.potential.Hessian(x, vcycle.H);
  vcycle.multigrid.SetUp(vcycle.pc, vcycle.potential, vcycle.H, false);
  Vec q = RandomVector(x, 3), r = nullptr;
  OPTISTEP_PETSC(VecDuplicate(q, &r));
  OPTISTEP_PETSC(KSPSolve(vcycle.ksp, q, r));
  EXPECT_EQ(vcycle.multigrid.lagged_setups(), 1);
  EXPECT_EQ(MaxAbs(Sparse(LevelOperator(vcycle.pc, levels - 2) - first_coarse)), 0.0) << "coarse levels kept";
  EXPECT_EQ(MaxAbs(Sparse(LevelOperator(vcycle.pc, levels - 1) - Gather(vcycle.H))), 0.0) << "the finest is H";
  // A solve's first Hessian forms them again.
  vcycle.multigrid.SetUp(vcycle.pc, vcycle.potential, vcycle.H, true);
  EXPECT_GT(MaxAbs(Sparse(LevelOperator(vcycle.pc, levels - 2) - first_coarse)), 1e-6 * MaxAbs(first_coarse));
  for (Vec* v : {&x, &q, &r}) VecDestroy(v);
}

TEST(FemMultigrid, LbfgsHsFactorizationKeepsItsSymbolicPhaseAcrossSteps) {
  test::StartPetscLogging();
  // PETSc's own Cholesky on one rank, MUMPS on more: both log their symbolic phase.
  const ScopedOptions cholesky(Options{{"-lbfgsh_ksp_type", "preonly"}, {"-lbfgsh_pc_type", "cholesky"},
                                {"-lbfgsh_pc_factor_mat_solver_type", test::Size() == 1 ? "petsc" : "mumps"}});
  FemSimulation sim(PETSC_COMM_WORLD, ReadSceneConfig(test::SourcePath(kBar), {"solver.method=lbfgs"}));
  const int before = test::EventCount("MatCholFctrSym"), numeric_before = test::EventCount("MatCholFctrNum");
  for (int step = 0; step < 2; ++step) sim.AdvanceStep(nullptr);
  const int symbolic = test::EventCount("MatCholFctrSym") - before;
  const int numeric = test::EventCount("MatCholFctrNum") - numeric_before;
  EXPECT_EQ(symbolic, 1) << "one symbolic factorization in 2 steps";
  EXPECT_EQ(numeric, 2) << "one numeric factorization per step";
}

// Bad input stops the run with one line naming the key or option: a level count the mesh
// cannot coarsen to, a first grid no coarser than the mesh (ratio <= 1, or a ratio whose
// grid still has as many nodes as the mesh when levels are asked for).
TEST(FemMultigrid, BadLevelsAndGridRatiosAreRefusedNamingTheirKey) {
  const auto message = [](const std::vector<std::string>& overrides) {
    try {
      SteppedBar(overrides);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto expect_one_line = [](const std::string& text, const std::string& start) {
    EXPECT_NE(text.find(start), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
  };
  expect_one_line(message({"solver.method=newton_mg", "solver.mg_levels=12"}),
                  "twisted_bar.yaml: solver.mg_levels: 12 levels, but this step's grid");
  {
    const ScopedOptions option(Options{{"-newton_pc_mg_levels", "12"}});
    expect_one_line(message({"solver.method=newton_mg"}), "-newton_pc_mg_levels: 12 levels");
  }
  for (const char* ratio : {"0.5", "1"}) {
    const ScopedOptions option(Options{{"-newton_mg_grid_ratio", ratio}});
    expect_one_line(message({"solver.method=newton_mg"}),
                    std::string("-newton_mg_grid_ratio ") + ratio + ": expected a number > 1");
  }
  {
    const ScopedOptions option(Options{{"-vcycle_mg_grid_ratio", "1"}});
    expect_one_line(message({"solver.method=lbfgs", "solver.initializer=vcycle"}),
                    "-vcycle_mg_grid_ratio 1: expected a number > 1");
  }
  {
    const ScopedOptions option(Options{{"-newton_mg_grid_ratio", "1.01"}, {"-newton_pc_mg_levels", "3"}});
    expect_one_line(message({"solver.method=newton_mg"}), "-newton_mg_grid_ratio 1.01: the first grid");
  }
  // The same ratio with automatic levels is not an error: the smoother alone serves.
  {
    const ScopedOptions option(Options{{"-newton_mg_grid_ratio", "1.01"}});
    EXPECT_EQ(message({"solver.method=newton_mg"}), "no error");
  }
}

}  // namespace
}  // namespace optistep

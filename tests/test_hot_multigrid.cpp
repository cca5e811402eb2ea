// HOT's multigrid on the MPM grid (Wang et al. 2020, Secs. 4-5; solvers/NodeEmbedding,
// solvers/GridMultigrid, solvers/MultigridInitializer) on 1, 2 and 4 ranks, checked against
// numbers from elsewhere:
//  - the prolongation reproduces linear fields exactly (both embeddings: a field linear in
//    the node index, with halves, eighths and their products exact in binary), so every row
//    sums to 1 and a coarse node set that misses a weight cannot pass;
//  - the coarse operators PETSc forms (PCMG, Galerkin) equal P^T H P formed independently:
//    P from the node coordinates by the weights of HOT Sec. 4 (and HOT's quadratic table)
//    written out here, H gathered from PETSc, the products in Eigen on rank 0, level by
//    level; the coarse node set is exactly the nodes some fine node takes weight from;
//  - the V-cycle with an exact coarsest solve is symmetric and positive definite on random
//    vectors (<Vx, y> = <x, Vy> to round-off, <Vx, x> > 0); a forward-only Gauss-Seidel
//    smoother, as a negative control, is not symmetric;
//  - iterated on H x = b, that V-cycle reduces the H-norm error every cycle, never less than
//    the symmetric Gauss-Seidel smoother alone (on 4 ranks the rank-local smoother diverges
//    on this small cube, and the fallback must catch the V-cycle);
//  - a hierarchy kept for an unchanged grid (a second SetUp at another dv) gives bitwise
//    the V-cycle of a hierarchy built anew there, and not that of the first dv;
//  - bad input: a level count the grid cannot coarsen to names solver.mg_levels (or
//    -hot_pc_mg_levels), the matrix-free or BAIJ Hessian names its key, hot on FEM names
//    solver.method; a V-cycle that is not positive definite (a smoother with damping -1)
//    falls back to the PN-PCG solve, and HOT still converges;
//  - HOT on HOT's twisting bar (dx = 0.03 m, 3840 particles, 2 steps): the same particles as
//    on one rank to solver tolerance, and twice on the same ranks bitwise the same.
// The grid: test/MpmPotentialFixture.hpp (a cube of 2000 particles, dx = 0.1 m, 1331 nodes,
// sticky, slip and free).
#include <Eigen/Sparse>
#include <algorithm>
#include <cmath>
#include <map>

#include "MpmPotentialFixture.hpp"
#include "MpmTestUtil.hpp"
#include "TestUtil.hpp"
#include "core/Exchange.hpp"
#include "solvers/LbfgsMinimizer.hpp"
#include "solvers/MinimizerFactory.hpp"
#include "solvers/MultigridInitializer.hpp"
#include "solvers/NodeEmbedding.hpp"

namespace optistep {
namespace {

using Coord = std::array<int, 3>;
using Sparse = Eigen::SparseMatrix<double>;
using test::MpmPotentialTest;

/// Collective: every node of a level, in global (PETSc) order, on every rank.
std::vector<Coord> AllNodes(const GridInfo& level) {
  std::vector<int> mine;
  for (const Coord& c : level.owned_nodes) mine.insert(mine.end(), c.begin(), c.end());
  const std::vector<int> all = AllGatherLists(MPI_COMM_WORLD, mine);
  std::vector<Coord> nodes(all.size() / 3);
  for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n] = {all[3 * n], all[3 * n + 1], all[3 * n + 2]};
  return nodes;
}

/// Collective: the whole matrix A on every rank, as an Eigen sparse matrix.
Sparse Gather(Mat A) {
  PetscInt begin = 0, end = 0, rows = 0, cols = 0;
  OPTISTEP_PETSC(MatGetOwnershipRange(A, &begin, &end));
  OPTISTEP_PETSC(MatGetSize(A, &rows, &cols));
  std::vector<std::int64_t> index;
  std::vector<double> value;
  for (PetscInt r = begin; r < end; ++r) {
    PetscInt n = 0;
    const PetscInt* c = nullptr;
    const PetscScalar* v = nullptr;
    OPTISTEP_PETSC(MatGetRow(A, r, &n, &c, &v));
    for (PetscInt k = 0; k < n; ++k) {
      index.insert(index.end(), {r, c[k]});
      value.push_back(v[k]);
    }
    OPTISTEP_PETSC(MatRestoreRow(A, r, &n, &c, &v));
  }
  const auto all_index = AllGatherLists(MPI_COMM_WORLD, index);
  const auto all_value = AllGatherLists(MPI_COMM_WORLD, value);
  std::vector<Eigen::Triplet<double>> triplets;
  for (std::size_t k = 0; k < all_value.size(); ++k)
    triplets.emplace_back(static_cast<int>(all_index[2 * k]), static_cast<int>(all_index[2 * k + 1]), all_value[k]);
  Sparse S(rows, cols);
  S.setFromTriplets(triplets.begin(), triplets.end());
  return S;
}

/// The weight of coarse index c for fine index i along one axis, as HOT Sec. 4 states the
/// linear embedding (a hat of half-width 2 fine cells) and as its reference code tabulates
/// the quadratic one (quadratic_weight_template: 1/8, 3/4, 1/8 at even, 1/2, 1/2 at odd).
double AxisWeight(int i, int c, Embedding embedding) {
  const int d = i - 2 * c;
  if (embedding == Embedding::kLinear) return std::max(0.0, 1.0 - std::abs(d) / 2.0);
  if (i % 2 == 0) return d == 0 ? 0.75 : (d == 2 || d == -2) ? 0.125 : 0.0;
  return (d == 1 || d == -1) ? 0.5 : 0.0;
}

/// The prolongation from the node coordinates alone (3 n_fine x 3 n_coarse). Fails the test
/// when a fine node takes weight from a coarse node the coarse level does not have, or a
/// coarse node is no fine node's.
Sparse ReferenceProlongation(const std::vector<Coord>& fine, const std::vector<Coord>& coarse,
                             Embedding embedding) {
  std::map<Coord, int> coarse_index;
  for (std::size_t n = 0; n < coarse.size(); ++n) coarse_index[coarse[n]] = static_cast<int>(n);
  std::vector<Eigen::Triplet<double>> triplets;
  std::vector<char> used(coarse.size(), 0);
  int missing = 0;
  for (std::size_t f = 0; f < fine.size(); ++f) {
    Coord lo;
    for (int d = 0; d < 3; ++d) lo[d] = static_cast<int>(std::floor(fine[f][d] / 2.0)) - 1;
    for (int cz = lo[2]; cz <= lo[2] + 2; ++cz)
      for (int cy = lo[1]; cy <= lo[1] + 2; ++cy)
        for (int cx = lo[0]; cx <= lo[0] + 2; ++cx) {
          const double w = AxisWeight(fine[f][0], cx, embedding) * AxisWeight(fine[f][1], cy, embedding) *
                           AxisWeight(fine[f][2], cz, embedding);
          if (w == 0.0) continue;
          const auto it = coarse_index.find(Coord{cx, cy, cz});
          if (it == coarse_index.end()) {
            ++missing;
            continue;
          }
          used[it->second] = 1;
          for (int d = 0; d < 3; ++d) triplets.emplace_back(3 * static_cast<int>(f) + d, 3 * it->second + d, w);
        }
  }
  EXPECT_EQ(missing, 0) << "fine nodes take weight from coarse nodes the coarse level lacks";
  EXPECT_EQ(std::count(used.begin(), used.end(), 0), 0) << "coarse nodes no fine node takes weight from";
  Sparse P(3 * static_cast<int>(fine.size()), 3 * static_cast<int>(coarse.size()));
  P.setFromTriplets(triplets.begin(), triplets.end());
  return P;
}

/// Largest |entry| of A.
double MaxAbs(const Sparse& A) {
  double m = 0.0;
  for (int k = 0; k < A.outerSize(); ++k)
    for (Sparse::InnerIterator it(A, k); it; ++it) m = std::max(m, std::abs(it.value()));
  return m;
}

/// Sets PETSc options for one scope.
class ScopedOptions {
 public:
  explicit ScopedOptions(std::vector<std::pair<std::string, std::string>> options) : options_(std::move(options)) {
    for (const auto& [name, value] : options_)
      OPTISTEP_PETSC(PetscOptionsSetValue(nullptr, name.c_str(), value.empty() ? nullptr : value.c_str()));
  }
  ~ScopedOptions() {
    for (const auto& [name, value] : options_) PetscOptionsClearValue(nullptr, name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> options_;
};

SolverConfig HotConfig(int levels = 3, const std::string& embedding = "linear") {
  SolverConfig config;
  config.method = "hot";
  config.mg_levels = levels;
  config.mg_embedding = embedding;
  config.scene_path = "cube.yaml";
  return config;
}

class HotMultigridTest : public MpmPotentialTest {
 protected:
  /// A V-cycle set up on the Hessian of the cube's potential at a random dv.
  std::unique_ptr<MultigridInitializer> VCycle(const SolverConfig& config) {
    potential_ = Potential(false, MATAIJ);
    dv_ = RandomVector(*potential_, 3, 0.2, false);
    auto vcycle = std::make_unique<MultigridInitializer>(MPI_COMM_WORLD, config);
    vcycle->SetFromOptions();
    vcycle->SetUp(*potential_, dv_);
    return vcycle;
  }
  void TearDown() override { VecDestroy(&dv_); }

  std::unique_ptr<mpm::MpmIncrementalPotential> potential_;
  Vec dv_ = nullptr;
};

class EmbeddingTest : public HotMultigridTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(EmbeddingTest, ProlongationReproducesLinearFieldsExactly) {
  Embedding embedding = Embedding::kLinear;
  ASSERT_TRUE(ParseEmbedding(GetParam(), &embedding));
  GridInfo fine = *Potential(false)->Grid();
  for (int level = 0; level < 2; ++level) {
    GridInfo coarse;
    Mat P = BuildProlongation(MPI_COMM_WORLD, fine, embedding, &coarse);
    EXPECT_EQ(coarse.dx, 2.0 * fine.dx);
    EXPECT_LT(coarse.n_global, fine.n_global);
    // f(i) = a + B i in fine index units; a coarse node c sits at fine index 2 c.
    const double a[3] = {0.5, -1.25, 2.0};
    const double B[3][3] = {{1.0, -2.0, 0.5}, {3.0, 0.25, -1.0}, {-0.5, 1.5, 2.0}};
    const auto field = [&](const Coord& i, int scale, int d) {
      return a[d] + B[d][0] * scale * i[0] + B[d][1] * scale * i[1] + B[d][2] * scale * i[2];
    };
    Vec xc = nullptr, xf = nullptr;
    OPTISTEP_PETSC(MatCreateVecs(P, &xc, &xf));
    PetscScalar* values = nullptr;
    OPTISTEP_PETSC(VecGetArray(xc, &values));
    for (std::size_t k = 0; k < coarse.owned_nodes.size(); ++k)
      for (int d = 0; d < 3; ++d) values[3 * k + d] = field(coarse.owned_nodes[k], 2, d);
    OPTISTEP_PETSC(VecRestoreArray(xc, &values));
    OPTISTEP_PETSC(MatMult(P, xc, xf));
    double worst = 0.0;
    OPTISTEP_PETSC(VecGetArray(xf, &values));
    for (std::size_t k = 0; k < fine.owned_nodes.size(); ++k)
      for (int d = 0; d < 3; ++d) worst = std::max(worst, std::abs(values[3 * k + d] - field(fine.owned_nodes[k], 1, d)));
    OPTISTEP_PETSC(VecRestoreArray(xf, &values));
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(worst, 0.0) << "level " << level << ": P x differs from the linear field";
    VecDestroy(&xc);
    VecDestroy(&xf);
    MatDestroy(&P);
    fine = coarse;
  }
}

INSTANTIATE_TEST_SUITE_P(HotMultigrid, EmbeddingTest, ::testing::Values("linear", "quadratic"));

TEST_P(EmbeddingTest, GalerkinCoarseOperatorsEqualPtHPFormedIndependently) {
  Embedding embedding = Embedding::kLinear;
  ASSERT_TRUE(ParseEmbedding(GetParam(), &embedding));
  const int levels = 3;
  auto vcycle = VCycle(HotConfig(levels, GetParam()));
  PC pc = nullptr;
  OPTISTEP_PETSC(KSPGetPC(vcycle->ksp(), &pc));
  Mat H = nullptr;
  OPTISTEP_PETSC(KSPGetOperators(vcycle->ksp(), &H, nullptr));
  Sparse reference = Gather(H);
  GridInfo fine = *potential_->Grid();
  for (int m = 0; m + 1 < levels; ++m) {
    GridInfo coarse;
    Mat P = BuildProlongation(MPI_COMM_WORLD, fine, embedding, &coarse);
    MatDestroy(&P);
    const Sparse P_ref = ReferenceProlongation(AllNodes(fine), AllNodes(coarse), embedding);
    reference = Sparse(P_ref.transpose() * reference * P_ref);
    KSP smoother = nullptr;
    Mat C = nullptr;
    OPTISTEP_PETSC(PCMGGetSmoother(pc, levels - 2 - m, &smoother));
    OPTISTEP_PETSC(KSPGetOperators(smoother, &C, nullptr));
    const Sparse galerkin = Gather(C);
    ASSERT_EQ(galerkin.rows(), reference.rows());
    const double difference = MaxAbs(Sparse(galerkin - reference)), size = MaxAbs(reference);
    PetscPrintf(PETSC_COMM_WORLD, "[          ] %s, level %d: %ld nodes, max |P^T H P - PETSc's| = %.2e of %.2e\n",
                GetParam(), m + 1, static_cast<long>(coarse.n_global), difference, size);
    EXPECT_GT(size, 0.0);
    EXPECT_LE(difference, 1e-13 * size);
    fine = coarse;
  }
}

// The coarsest operator is only semi-definite: a coarse node whose copying fine node (2c) is
// no unknown shares its fine nodes with a neighbour (at the grid's fringe; 4 of the cube's
// 122 coarsest nodes), and P loses rank. The exact coarse solve is therefore PETSc's SVD
// pseudo-inverse; LU breaks down (inf) there. P e is the same for every solution of the
// consistent coarse system, so the V-cycle stays well defined.
TEST_F(HotMultigridTest, VCycleWithAnExactCoarseSolveIsSymmetricPositiveDefinite) {
  const ScopedOptions exact({{"-hot_mg_coarse_ksp_type", "preonly"}, {"-hot_mg_coarse_pc_type", "svd"}});
  const auto asymmetry = [&](MultigridInitializer& vcycle) {
    double worst = 0.0;
    for (unsigned seed = 0; seed < 4; ++seed) {
      Vec x = RandomVector(*potential_, 10 + seed, 1.0, false), y = RandomVector(*potential_, 20 + seed, 1.0, false);
      Vec Vx = potential_->CreateVector(), Vy = potential_->CreateVector();
      vcycle.Apply(x, Vx);
      vcycle.Apply(y, Vy);
      PetscScalar Vxy = 0.0, xVy = 0.0, Vxx = 0.0;
      OPTISTEP_PETSC(VecDot(Vx, y, &Vxy));
      OPTISTEP_PETSC(VecDot(x, Vy, &xVy));
      OPTISTEP_PETSC(VecDot(Vx, x, &Vxx));
      EXPECT_GT(Vxx, 0.0) << "seed " << seed;
      worst = std::max(worst, std::abs(Vxy - xVy) / (test::Norm(Vx) * test::Norm(y)));
      for (Vec* v : {&x, &y, &Vx, &Vy}) VecDestroy(v);
    }
    return worst;
  };
  auto vcycle = VCycle(HotConfig());
  const double symmetric = asymmetry(*vcycle);
  EXPECT_FALSE(vcycle->fell_back());
  {
    // Negative control: a forward Gauss-Seidel sweep before and after is not symmetric.
    const ScopedOptions forward({std::pair<std::string, std::string>{"-hot_mg_levels_pc_sor_local_forward", ""}});
    auto nonsymmetric = VCycle(HotConfig());
    const double forward_only = asymmetry(*nonsymmetric);
    PetscPrintf(PETSC_COMM_WORLD,
                "[          ] |<Vx,y> - <x,Vy>| / (|Vx| |y|): %.2e (symmetric GS), %.2e (forward GS)\n",
                symmetric, forward_only);
    EXPECT_GT(forward_only, 1e-6);
  }
  EXPECT_LT(symmetric, 1e-13);
}

/// The H-norm of the error after each of `cycles` stationary iterations
/// x <- x + V (b - H x) from x = 0 towards a random x* (b = H x*), over |x*|_H.
std::vector<double> ErrorReduction(MultigridInitializer& vcycle, const Vec xstar, int cycles) {
  Mat H = nullptr;
  OPTISTEP_PETSC(KSPGetOperators(vcycle.ksp(), &H, nullptr));
  Vec b = nullptr, x = nullptr, r = nullptr, c = nullptr, e = nullptr;
  for (Vec* v : {&b, &x, &r, &c, &e}) OPTISTEP_PETSC(VecDuplicate(xstar, v));
  OPTISTEP_PETSC(MatMult(H, xstar, b));
  OPTISTEP_PETSC(VecSet(x, 0.0));
  const auto energy_norm = [&](Vec v) {
    PetscScalar vHv = 0.0;
    OPTISTEP_PETSC(MatMult(H, v, c));
    OPTISTEP_PETSC(VecDot(v, c, &vHv));
    return std::sqrt(vHv);
  };
  const double initial = energy_norm(xstar);
  std::vector<double> reduction;
  for (int k = 0; k < cycles; ++k) {
    OPTISTEP_PETSC(MatMult(H, x, r));
    OPTISTEP_PETSC(VecAYPX(r, -1.0, b));
    vcycle.Apply(r, c);
    OPTISTEP_PETSC(VecAXPY(x, 1.0, c));
    OPTISTEP_PETSC(VecWAXPY(e, -1.0, x, xstar));
    reduction.push_back(energy_norm(e) / initial);
  }
  for (Vec* v : {&b, &x, &r, &c, &e}) VecDestroy(v);
  return reduction;
}

// A V-cycle with Galerkin coarse operators, an exact coarsest solve and a convergent
// symmetric smoother is an H-norm contraction (its error propagator I - V H is the
// H-self-adjoint product of the smoothers' and the coarse correction's; e.g. Trottenberg,
// Oosterlee, Schueller, Multigrid, Sec. 7.2): iterated, the error must fall every cycle, and
// faster than with the smoother alone (one level), which the coarse levels only add to.
// In parallel the smoother is symmetric Gauss-Seidel inside block Jacobi over the ranks,
// which is convergent on 1 rank but need not be on many: on this cube's 1331 nodes split
// over 4 ranks (most nodes at a rank boundary) it diverges (|e|_H 0.95 after 10 sweeps), the
// V-cycle is then not positive definite, and the fallback to the PN-PCG solve must have
// caught it.
TEST_F(HotMultigridTest, VCycleIterationsReduceTheErrorOfAHessianSystem) {
  const ScopedOptions exact({{"-hot_mg_coarse_ksp_type", "preonly"}, {"-hot_mg_coarse_pc_type", "svd"}});
  const int cycles = 10;
  auto vcycle = VCycle(HotConfig());
  Vec xstar = RandomVector(*potential_, 31, 1.0, false);
  const std::vector<double> multigrid = ErrorReduction(*vcycle, xstar, cycles);
  auto smoother = VCycle(HotConfig(1));
  const std::vector<double> smoothing = ErrorReduction(*smoother, xstar, cycles);
  VecDestroy(&xstar);
  PetscPrintf(PETSC_COMM_WORLD,
              "[          ] |e|_H / |e0|_H after 1, 5, 10 cycles: V-cycle %.2e, %.2e, %.2e%s; symmetric "
              "Gauss-Seidel alone %.2e, %.2e, %.2e\n",
              multigrid[0], multigrid[4], multigrid[9], vcycle->fell_back() ? " (fell back to PN-PCG)" : "",
              smoothing[0], smoothing[4], smoothing[9]);
  bool smoother_converges = smoothing[0] < 1.0;
  for (int k = 1; k < cycles; ++k) smoother_converges = smoother_converges && smoothing[k] < smoothing[k - 1];
  if (test::Size() <= 2) {
    EXPECT_TRUE(smoother_converges);
    EXPECT_FALSE(vcycle->fell_back());
  }
  if (vcycle->fell_back()) {
    EXPECT_FALSE(smoother_converges) << "the V-cycle was not positive definite with a convergent smoother";
    return;
  }
  for (int k = 0; k < cycles; ++k) {
    EXPECT_LT(multigrid[k], k == 0 ? 1.0 : multigrid[k - 1]) << "cycle " << k + 1;
    EXPECT_LE(multigrid[k], smoothing[k]) << "cycle " << k + 1;
  }
}

TEST_F(HotMultigridTest, ALevelCountTheGridCannotCoarsenToNamesItsKey) {
  const auto message = [&](const SolverConfig& config) -> std::string {
    try {
      VCycle(config);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(HotConfig(9)).find("cube.yaml: solver.mg_levels: 9 levels"), std::string::npos)
      << message(HotConfig(9));
  {
    const ScopedOptions option({std::pair<std::string, std::string>{"-hot_pc_mg_levels", "9"}});
    EXPECT_NE(message(HotConfig()).find("-hot_pc_mg_levels: 9 levels"), std::string::npos);
  }
  EXPECT_EQ(message(HotConfig(4)), "");
}

TEST_F(HotMultigridTest, AHessianItCannotCoarsenNamesItsKey) {
  const auto message = [&](bool matrix_free, const char* type) -> std::string {
    auto potential = Potential(matrix_free, type);
    Vec dv = potential->CreateVector();
    MultigridInitializer vcycle(MPI_COMM_WORLD, HotConfig());
    vcycle.SetFromOptions();
    std::string what;
    try {
      vcycle.SetUp(*potential, dv);
    } catch (const InputError& e) {
      what = e.what();
    }
    VecDestroy(&dv);
    return what;
  };
  EXPECT_NE(message(true, nullptr).find("mpm.matrix_free"), std::string::npos);
  EXPECT_NE(message(false, MATBAIJ).find("-hessian_mat_type"), std::string::npos);
  SolverConfig config = HotConfig();
  std::string what;
  try {
    CreateMinimizer(MPI_COMM_WORLD, config, MinimizerDefaults{PCJACOBI, false}, "bar.yaml");
  } catch (const InputError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("bar.yaml: solver.method: 'hot'"), std::string::npos) << what;
}

TEST_F(HotMultigridTest, AVCycleThatIsNotPositiveDefiniteFallsBackToPnPcg) {
  // Smoothing with damping -1 turns the V-cycle negative definite.
  const ScopedOptions negative({std::pair<std::string, std::string>{"-hot_mg_levels_ksp_richardson_scale", "-1"}});
  auto vcycle = VCycle(HotConfig());
  Vec q = RandomVector(*potential_, 7, 1.0, true), r = potential_->CreateVector();
  const int iterations = vcycle->Apply(q, r);
  EXPECT_TRUE(vcycle->fell_back());
  PetscScalar qr = 0.0;
  OPTISTEP_PETSC(VecDot(q, r, &qr));
  EXPECT_GT(qr, 0.0) << "the fallback is the PCG solve with the SPD Hessian";
  EXPECT_GT(iterations, 0);

  // HOT with that V-cycle still minimizes the cube's potential to the CN tolerance.
  const auto hot = CreateMinimizer(MPI_COMM_WORLD, HotConfig(), MinimizerDefaults{PCPBJACOBI, true}, "cube.yaml");
  EXPECT_STREQ(hot->HessianType(), MATAIJ);
  Vec u = potential_->CreateVector();
  potential_->InitialGuess(u, false);
  const SolveReport report = hot->Minimize(*potential_, u);
  EXPECT_TRUE(report.converged) << report.reason;
  EXPECT_LT(report.cn_residual, 1.0);
  for (Vec* v : {&q, &r, &u}) VecDestroy(v);
}

TEST_F(HotMultigridTest, AHierarchyKeptForAnUnchangedGridGivesTheVCycleOfANewOne) {
  // The same grid at two points dv1 and dv2: the second SetUp keeps the hierarchy and only
  // refills the matrices; it must apply exactly what a hierarchy built at dv2 applies.
  auto kept = VCycle(HotConfig());
  Vec q = RandomVector(*potential_, 11, 1.0, true), r1 = potential_->CreateVector();
  kept->Apply(q, r1);
  Vec dv2 = RandomVector(*potential_, 5, 0.2, false);
  auto potential2 = Potential(false, MATAIJ);
  kept->SetUp(*potential2, dv2);
  EXPECT_EQ(kept->hierarchies_built(), 1);
  EXPECT_EQ(kept->hierarchies_reused(), 1);
  auto fresh = std::make_unique<MultigridInitializer>(MPI_COMM_WORLD, HotConfig());
  fresh->SetFromOptions();
  fresh->SetUp(*potential2, dv2);
  EXPECT_EQ(fresh->hierarchies_reused(), 0);
  Vec r_kept = potential_->CreateVector(), r_fresh = potential_->CreateVector();
  kept->Apply(q, r_kept);
  fresh->Apply(q, r_fresh);
  EXPECT_FALSE(kept->fell_back());
  const auto max_difference = [](Vec a, Vec b) {
    Vec d = nullptr;
    OPTISTEP_PETSC(VecDuplicate(a, &d));
    OPTISTEP_PETSC(VecWAXPY(d, -1.0, a, b));
    PetscReal m = 0.0;
    OPTISTEP_PETSC(VecNorm(d, NORM_INFINITY, &m));
    VecDestroy(&d);
    return m;
  };
  const double kept_vs_fresh = max_difference(r_kept, r_fresh), first_vs_second = max_difference(r1, r_fresh);
  PetscPrintf(PETSC_COMM_WORLD,
              "[          ] max |V q| difference: kept vs new hierarchy %.2e, V-cycle at dv1 vs dv2 %.2e "
              "(|V q|_inf %.2e)\n",
              kept_vs_fresh, first_vs_second, [&] {
                PetscReal m = 0.0;
                OPTISTEP_PETSC(VecNorm(r_fresh, NORM_INFINITY, &m));
                return m;
              }());
  EXPECT_EQ(kept_vs_fresh, 0.0);
  EXPECT_GT(first_vs_second, 0.0) << "control: the second point must change the V-cycle";
  for (Vec* v : {&q, &r1, &dv2, &r_kept, &r_fresh}) VecDestroy(v);
}

/// HOT's twisting bar at dx = 0.03 m (3840 particles), 1 frame of 2 steps.
SceneConfig SmallTwistingBar() {
  return ReadSceneConfig(test::SourcePath("configs/hot_twisting_bar_coarse.yaml"),
                         {"mpm.dx=0.03", "time.frames=1", "solver.method=hot"});
}

/// Collective on comm: positions then velocities of the particles after the scene, solved
/// by HOT.
std::vector<double> RunHot(MPI_Comm comm, const SceneConfig& scene) {
  std::string method;
  const std::vector<double> state = test::RunMpmScene(comm, scene, &method);
  EXPECT_EQ(method, "hot");
  return state;
}

TEST(HotScenes, TwistingBarGivesTheParticlesOfOneRankToSolverTolerance) {
  const SceneConfig scene = SmallTwistingBar();
  const std::vector<double> parallel = RunHot(PETSC_COMM_WORLD, scene);
  std::vector<double> serial(parallel.size());
  if (test::Rank() == 0) serial = RunHot(PETSC_COMM_SELF, scene);
  MPI_Bcast(serial.data(), static_cast<int>(serial.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  // The CN tolerance allows velocity errors of about dv = 24 eps dt s / (rho dx) (see
  // test_lbfgs_scenes.cpp): 1.3e-4 m/s for the soft bars here (dt = 1/96 s), positions
  // dt dv per step.
  double worst_x = 0.0, worst_v = 0.0;
  const std::size_t half = parallel.size() / 2;
  for (std::size_t i = 0; i < half; ++i) worst_x = std::max(worst_x, std::abs(parallel[i] - serial[i]));
  for (std::size_t i = half; i < parallel.size(); ++i) worst_v = std::max(worst_v, std::abs(parallel[i] - serial[i]));
  PetscPrintf(PETSC_COMM_WORLD, "[          ] HOT on %d ranks vs 1: worst |dx| %.2e m, |dv| %.2e m/s\n", test::Size(),
              worst_x, worst_v);
  EXPECT_LT(worst_x, 2 * 5 * (1.0 / 96) * 1.3e-4);
  EXPECT_LT(worst_v, 5 * 1.3e-4);
}

TEST(HotScenes, TwistingBarIsBitwiseRepeatableOnTheSameRanks) {
  const SceneConfig scene = SmallTwistingBar();
  const std::vector<double> first = RunHot(PETSC_COMM_WORLD, scene);
  const std::vector<double> second = RunHot(PETSC_COMM_WORLD, scene);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(test::DifferingValues(first, second), 0u);
}

}  // namespace
}  // namespace optistep

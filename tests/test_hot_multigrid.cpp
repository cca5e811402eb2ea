// HOT's multigrid on the MPM grid (Wang et al. 2020, Secs. 4-5; solvers/NodeEmbedding,
// solvers/GridOperator, solvers/GridGalerkinProduct, solvers/ColoredGaussSeidel,
// solvers/GridMultigrid, solvers/MultigridInitializer) on 1, 2, 3 and 4 ranks, checked
// against numbers from elsewhere:
//  - the prolongation reproduces linear fields exactly (both embeddings: a field linear in
//    the node index, with halves, eighths and their products exact in binary), so every row
//    sums to 1 and a coarse node set that misses a weight cannot pass;
//  - the coarse operators equal P^T H P formed independently: P from the node coordinates
//    by the weights of HOT Sec. 4 (and HOT's quadratic table) written out here, H gathered
//    from PETSc, the products in Eigen, level by level; the coarse node set is exactly the
//    nodes some fine node takes weight from;
//  - on a grid and operator defined by the coordinates alone (the same matrix on any rank
//    count), the coarse operators are bitwise those of one rank, the smoother is the
//    symmetric block Gauss-Seidel sweep in the colored order computed here in Eigen, and
//    the V-cycle is the one-rank V-cycle to round-off, symmetric and positive definite;
//  - the V-cycle with an exact coarsest solve is symmetric and positive definite on random
//    vectors (<Vx, y> = <x, Vy> to round-off, <Vx, x> > 0); PETSc's forward-only SOR, as a
//    negative control, is not symmetric;
//  - iterated on H x = b, that V-cycle reduces the H-norm error every cycle, never less than
//    the symmetric Gauss-Seidel smoother alone, on every rank count;
//  - a first prolongation supplied by the caller (here the grid's own, as if from an
//    unstructured level 0) gives level 1 as P^T H P and the structured levels below it;
//  - a hierarchy kept for an unchanged grid (a second SetUp at another dv) gives bitwise
//    the V-cycle of a hierarchy built anew there, and not that of the first dv;
//  - bad input: a level count the grid cannot coarsen to names solver.mg_levels (or
//    -hot_pc_mg_levels), the matrix-free or AIJ Hessian names its key, hot on FEM names
//    solver.method; a V-cycle that is not positive definite (a smoother with damping -1)
//    falls back to the PN-PCG solve, and HOT still converges;
//  - HOT on HOT's twisting bar (dx = 0.03 m, 3840 particles, 2 steps): the same particles as
//    on one rank to solver tolerance, and twice on the same ranks bitwise the same.
// The grid: test/MpmPotentialFixture.hpp (a cube of 2000 particles, dx = 0.1 m, 1331 nodes,
// sticky, slip and free).
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "GatheredMatrix.hpp"
#include "MpmPotentialFixture.hpp"
#include "MpmTestUtil.hpp"
#include "TestUtil.hpp"
#include "core/Exchange.hpp"
#include "solvers/GridMultigrid.hpp"
#include "solvers/LbfgsMinimizer.hpp"
#include "solvers/MinimizerFactory.hpp"
#include "solvers/MultigridInitializer.hpp"
#include "solvers/NodeEmbedding.hpp"

namespace optistep {
namespace {

using Coord = std::array<int, 3>;
using test::Gather;
using test::MaxAbs;
using test::Sparse;
using test::MpmPotentialTest;

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
    for (int cz = lo[2]; cz <= lo[2] + 3; ++cz)
      for (int cy = lo[1]; cy <= lo[1] + 3; ++cy)
        for (int cx = lo[0]; cx <= lo[0] + 3; ++cx) {
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
  config.method = MinimizerMethod::kHot;
  config.mg_levels = levels;
  config.mg_embedding = embedding;
  config.scene_path = "cube.yaml";
  return config;
}

class HotMultigridTest : public MpmPotentialTest {
 protected:
  /// A V-cycle set up on the Hessian of the cube's potential at a random dv.
  std::unique_ptr<MultigridInitializer> VCycle(const SolverConfig& config) {
    potential_ = Potential(false);
    dv_ = RandomVector(*potential_, 3, 0.2, false);
    auto vcycle = std::make_unique<MultigridInitializer>(MPI_COMM_WORLD, config, MinimizerDefaults{PCPBJACOBI, true});
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
    const Sparse P_ref = ReferenceProlongation(test::GatherGridNodes(fine), test::GatherGridNodes(coarse), embedding);
    reference = Sparse(P_ref.transpose() * reference * P_ref);
    KSP smoother = nullptr;
    Mat C = nullptr;
    OPTISTEP_PETSC(PCMGGetSmoother(pc, levels - 2 - m, &smoother));
    OPTISTEP_PETSC(KSPGetOperators(smoother, &C, nullptr));
    const Sparse galerkin = Gather(C);
    ASSERT_EQ(galerkin.rows(), reference.rows());
    const double difference = MaxAbs(Sparse(galerkin - reference)), size = MaxAbs(reference);
    PetscPrintf(PETSC_COMM_WORLD, "[          ] %s, level %d: %ld nodes, max |P^T H P - ours| = %.2e of %.2e\n",
                GetParam(), m + 1, static_cast<long>(coarse.n_global), difference, size);
    EXPECT_GT(size, 0.0);
    EXPECT_LE(difference, 1e-13 * size);
    fine = coarse;
  }
}

/// The exact coarsest solve: a sparse Cholesky factorization of the coarsest operator,
/// redundant on every rank (positive definite: with the linear embedding P has full
/// column rank).
std::vector<std::pair<std::string, std::string>> ExactCoarseSolve(const std::string& prefix) {
  return {{"-" + prefix + "mg_coarse_ksp_type", "preonly"},
          {"-" + prefix + "mg_coarse_pc_type", "redundant"},
          {"-" + prefix + "mg_coarse_redundant_pc_type", "cholesky"}};
}

TEST_F(HotMultigridTest, VCycleWithAnExactCoarseSolveIsSymmetricPositiveDefinite) {
  const ScopedOptions exact(ExactCoarseSolve("hot_"));
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
    // Negative control: PETSc's forward SOR sweep before and after is not symmetric.
    const ScopedOptions forward({{"-hot_mg_levels_pc_type", "sor"}, {"-hot_mg_levels_pc_sor_local_forward", ""}});
    auto nonsymmetric = VCycle(HotConfig());
    const double forward_only = asymmetry(*nonsymmetric);
    PetscPrintf(PETSC_COMM_WORLD,
                "[          ] |<Vx,y> - <x,Vy>| / (|Vx| |y|): %.2e (colored symmetric GS), %.2e (forward SOR)\n",
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
// faster than with the smoother alone (one level), which the coarse levels only add to. The
// colored symmetric Gauss-Seidel sweep is one sweep in a global order whatever the rank
// count, so this holds on every rank count (the rank-local SOR inside block Jacobi that it
// replaced diverged on this cube split over 4 ranks and stagnated on 3).
TEST_F(HotMultigridTest, VCycleIterationsReduceTheErrorOfAHessianSystem) {
  const ScopedOptions exact(ExactCoarseSolve("hot_"));
  const int cycles = 10;
  auto vcycle = VCycle(HotConfig());
  Vec xstar = RandomVector(*potential_, 31, 1.0, false);
  const std::vector<double> multigrid = ErrorReduction(*vcycle, xstar, cycles);
  auto smoother = VCycle(HotConfig(1));
  const std::vector<double> smoothing = ErrorReduction(*smoother, xstar, cycles);
  VecDestroy(&xstar);
  PetscPrintf(PETSC_COMM_WORLD,
              "[          ] |e|_H / |e0|_H after 1, 5, 10 cycles: V-cycle %.2e, %.2e, %.2e; symmetric "
              "Gauss-Seidel alone %.2e, %.2e, %.2e\n",
              multigrid[0], multigrid[4], multigrid[9], smoothing[0], smoothing[4], smoothing[9]);
  EXPECT_FALSE(vcycle->fell_back());
  for (int k = 0; k < cycles; ++k) {
    EXPECT_LT(smoothing[k], k == 0 ? 1.0 : smoothing[k - 1]) << "smoother alone, cycle " << k + 1;
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
    MultigridInitializer vcycle(MPI_COMM_WORLD, HotConfig(), MinimizerDefaults{PCPBJACOBI, true});
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
  EXPECT_NE(message(false, MATAIJ).find("-hessian_mat_type"), std::string::npos);
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
  EXPECT_STREQ(hot->HessianType(), MATBAIJ);
  Vec u = potential_->CreateVector();
  potential_->InitialGuess(u, false);
  const SolveReport report = hot->Minimize(*potential_, u);
  EXPECT_TRUE(report.converged) << report.reason;
  EXPECT_LT(report.cn_residual, 1.0);
  for (Vec* v : {&q, &r, &u}) VecDestroy(v);
}

// A grid and an operator that are functions of the node coordinates alone, so that every
// rank count holds the same matrix, bitwise: what the rank-count independence of the
// coarse operators, the smoother and the V-cycle is checked on.

/// The synthetic grid: an ellipsoid of about 4000 nodes with a ragged fringe.
bool InBlob(const Coord& x) {
  const double u = (x[0] - 10.5) / 9.0, v = (x[1] - 9.0) / 7.5, w = (x[2] - 10.0) / 8.0;
  const double r = u * u + v * v + w * w;
  return r < 1.0 || (r < 1.3 && ((7 * x[0] + 13 * x[1] + 5 * x[2]) % 11 + 11) % 11 == 0);
}

/// Collective on comm: the synthetic grid split over comm's ranks by blocks (each rank
/// proposes the nodes of the blocks a hash gives it).
GridInfo SyntheticLevel(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<Coord> mine;
  for (int k = -4; k < 24; ++k)
    for (int j = -4; j < 24; ++j)
      for (int i = -4; i < 24; ++i) {
        const Coord x{i, j, k};
        if (!InBlob(x)) continue;
        const Coord b = BlockOf(x);
        const unsigned hash = 73856093u * static_cast<unsigned>(b[0] + 8) ^ 19349663u * static_cast<unsigned>(b[1] + 8) ^
                              83492791u * static_cast<unsigned>(b[2] + 8);
        if (static_cast<int>(hash % static_cast<unsigned>(size)) == rank) mine.push_back(x);
      }
  return DistributeGridNodes(comm, mine, 0.1);
}

/// The block coupling nodes x != y: -g (I + 1/2 e e^T) with g = (1 + 1/2 sin(.)) / |y - x|^2
/// at the midpoint and e = (y - x) / |y - x|: the same for (x, y) and (y, x).
Eigen::Matrix3d Coupling(const Coord& x, const Coord& y) {
  const Eigen::Vector3d d(y[0] - x[0], y[1] - x[1], y[2] - x[2]);
  const double mx = 0.5 * (x[0] + y[0]), my = 0.5 * (x[1] + y[1]), mz = 0.5 * (x[2] + y[2]);
  const double g = (1.0 + 0.5 * std::sin(0.7 * mx + 1.3 * my - 0.4 * mz)) / d.squaredNorm();
  const Eigen::Vector3d e = d.normalized();
  return -g * (Eigen::Matrix3d::Identity() + 0.5 * e * e.transpose());
}

/// Collective on comm: H = M - sum of the couplings of the 5^3 stencil (a block graph
/// Laplacian with positive definite edges, plus a positive mass M = m(x) I): symmetric
/// positive definite, BAIJ with the MPM Hessian's pattern.
Mat SyntheticOperator(MPI_Comm comm, const GridInfo& level) {
  const GridDirectory directory(comm, level);
  std::vector<Coord> around;
  for (const Coord& x : level.owned_nodes)
    for (int oz = -2; oz <= 2; ++oz)
      for (int oy = -2; oy <= 2; ++oy)
        for (int ox = -2; ox <= 2; ++ox) around.push_back({x[0] + ox, x[1] + oy, x[2] + oz});
  std::vector<PetscInt> ids;
  std::vector<int> owners;
  directory.LookUp(around, &ids, &owners);
  const PetscInt n = static_cast<PetscInt>(level.owned_nodes.size());
  const PetscInt first = level.first_global;
  std::vector<PetscInt> d_nnz(n, 0), o_nnz(n, 0);
  for (PetscInt k = 0; k < n; ++k)
    for (int o = 0; o < 125; ++o) {
      const PetscInt id = ids[125 * k + o];
      if (id >= 0) (id >= first && id < first + n ? d_nnz[k] : o_nnz[k])++;
    }
  Mat H = nullptr;
  OPTISTEP_PETSC(MatCreate(comm, &H));
  OPTISTEP_PETSC(MatSetSizes(H, 3 * n, 3 * n, 3 * level.n_global, 3 * level.n_global));
  OPTISTEP_PETSC(MatSetBlockSize(H, 3));
  OPTISTEP_PETSC(MatSetType(H, MATBAIJ));
  OPTISTEP_PETSC(MatXAIJSetPreallocation(H, 3, d_nnz.data(), o_nnz.data(), nullptr, nullptr));
  std::vector<PetscInt> cols;
  std::vector<double> values;
  for (PetscInt k = 0; k < n; ++k) {
    const Coord& x = level.owned_nodes[k];
    cols.clear();
    std::vector<Eigen::Matrix3d> blocks;
    Eigen::Matrix3d diagonal = (1.0 + 0.5 * std::cos(0.3 * x[0] - 0.2 * x[1] + 0.5 * x[2])) * Eigen::Matrix3d::Identity();
    for (int o = 0; o < 125; ++o) {
      const PetscInt id = ids[125 * k + o];
      if (id < 0 || o == 62) continue;
      const Coord y = around[125 * k + o];
      const Eigen::Matrix3d K = Coupling(x, y);
      diagonal -= K;
      cols.push_back(id);
      blocks.push_back(K);
    }
    cols.push_back(first + k);
    blocks.push_back(diagonal);
    const std::size_t m = cols.size();
    values.assign(9 * m, 0.0);  // row-oriented 3 x 3m
    for (std::size_t c = 0; c < m; ++c)
      for (int r = 0; r < 3; ++r)
        for (int e = 0; e < 3; ++e) values[r * 3 * m + 3 * c + e] = blocks[c](r, e);
    const PetscInt row = first + k;
    OPTISTEP_PETSC(MatSetValuesBlocked(H, 1, &row, static_cast<PetscInt>(m), cols.data(), values.data(), INSERT_VALUES));
  }
  OPTISTEP_PETSC(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
  return H;
}

/// Collective: A's 3x3 blocks keyed by (row node, column node), on every rank of A's
/// communicator.
std::map<std::pair<Coord, Coord>, std::array<double, 9>> BlocksByNodes(Mat A, const GridInfo& level) {
  const std::vector<Coord> nodes = test::GatherGridNodes(level, PetscObjectComm(reinterpret_cast<PetscObject>(A)));
  const Sparse S = Gather(A);
  std::map<std::pair<Coord, Coord>, std::array<double, 9>> blocks;
  for (int k = 0; k < S.outerSize(); ++k)
    for (Sparse::InnerIterator it(S, k); it; ++it)
      blocks[{nodes[it.row() / 3], nodes[it.col() / 3]}][it.row() % 3 + 3 * (it.col() % 3)] = it.value();
  return blocks;
}

/// A V-cycle (KSPPREONLY + PCMG of GridMultigrid, options prefix "synthetic_") on the
/// synthetic grid and operator.
class SyntheticVCycle {
 public:
  SyntheticVCycle(MPI_Comm comm, int levels)
      : comm_(comm), level_(SyntheticLevel(comm)), multigrid_(comm, "synthetic_", levels, Embedding::kLinear, "synthetic.yaml") {
    A_ = SyntheticOperator(comm, level_);
    OPTISTEP_PETSC(KSPCreate(comm, &ksp_));
    OPTISTEP_PETSC(KSPSetOptionsPrefix(ksp_, "synthetic_"));
    OPTISTEP_PETSC(KSPSetType(ksp_, KSPPREONLY));
    PC pc = nullptr;
    OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
    multigrid_.Configure(pc);
    OPTISTEP_PETSC(KSPSetFromOptions(ksp_));
    multigrid_.SetGrid(pc, level_, A_);
    multigrid_.SetOperator(A_);
    OPTISTEP_PETSC(KSPSetOperators(ksp_, A_, A_));
    OPTISTEP_PETSC(KSPSetUp(ksp_));
  }
  ~SyntheticVCycle() {
    KSPDestroy(&ksp_);
    MatDestroy(&A_);
  }

  const GridMultigrid& multigrid() const { return multigrid_; }
  /// Collective: V b with b a function of the node (3 components), by node.
  template <class F>
  std::map<Coord, std::array<double, 3>> Apply(F&& b) {
    Vec x = nullptr, y = nullptr;
    OPTISTEP_PETSC(MatCreateVecs(A_, &x, &y));
    PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArray(x, &a));
    for (std::size_t k = 0; k < level_.owned_nodes.size(); ++k) {
      const std::array<double, 3> v = b(level_.owned_nodes[k]);
      for (int d = 0; d < 3; ++d) a[3 * k + d] = v[d];
    }
    OPTISTEP_PETSC(VecRestoreArray(x, &a));
    OPTISTEP_PETSC(KSPSolve(ksp_, x, y));
    std::vector<double> mine(3 * level_.owned_nodes.size());
    const PetscScalar* ya = nullptr;
    OPTISTEP_PETSC(VecGetArrayRead(y, &ya));
    std::copy(ya, ya + mine.size(), mine.begin());
    OPTISTEP_PETSC(VecRestoreArrayRead(y, &ya));
    VecDestroy(&x);
    VecDestroy(&y);
    const std::vector<double> all = AllGatherLists(comm_, mine);
    const std::vector<Coord> nodes = test::GatherGridNodes(level_, comm_);
    std::map<Coord, std::array<double, 3>> result;
    for (std::size_t n = 0; n < nodes.size(); ++n) result[nodes[n]] = {all[3 * n], all[3 * n + 1], all[3 * n + 2]};
    return result;
  }

 private:
  MPI_Comm comm_;
  GridInfo level_;
  GridMultigrid multigrid_;
  Mat A_ = nullptr;
  KSP ksp_ = nullptr;
};

std::array<double, 3> WaveField(const Coord& x) {
  return {std::sin(0.3 * x[0] + 0.1 * x[1]), std::cos(0.2 * x[1] - 0.4 * x[2]), std::sin(0.5 * x[2] + 0.3 * x[0] + 1.0)};
}
std::array<double, 3> BumpyField(const Coord& x) {
  const double r = ((x[0] * 31 + x[1] * 17 + x[2] * 7) % 13) / 13.0 - 0.5;
  return {r, 1.0 - r * r, std::cos(x[0] - x[2]) * r};
}

double Dot(const std::map<Coord, std::array<double, 3>>& a, const std::map<Coord, std::array<double, 3>>& b) {
  double sum = 0.0;
  for (const auto& [x, v] : a)
    for (int d = 0; d < 3; ++d) sum += v[d] * b.at(x)[d];
  return sum;
}

/// max |a - b| / max |b| over the nodes of b (which a must have).
double RelativeMaxDifference(const std::map<Coord, std::array<double, 3>>& a,
                             const std::map<Coord, std::array<double, 3>>& b) {
  double difference = 0.0, size = 0.0;
  for (const auto& [x, v] : b)
    for (int d = 0; d < 3; ++d) {
      size = std::max(size, std::abs(v[d]));
      difference = std::max(difference, std::abs(a.at(x)[d] - v[d]));
    }
  return difference / size;
}

/// Rank 0's value on every rank.
double FromRankZero(double value) {
  MPI_Bcast(&value, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return value;
}

TEST(GridMultigridRankCounts, CoarseOperatorsAreBitwiseThoseOfOneRank) {
  const int levels = 3;
  SyntheticVCycle parallel(MPI_COMM_WORLD, levels);
  std::vector<std::map<std::pair<Coord, Coord>, std::array<double, 9>>> ours;
  for (int m = 1; m < levels; ++m)
    ours.push_back(BlocksByNodes(parallel.multigrid().LevelMatrix(m), *parallel.multigrid().LevelGrid(m)));
  double differing = 0.0, compared = 0.0;
  if (test::Rank() == 0) {
    SyntheticVCycle serial(PETSC_COMM_SELF, levels);
    for (int m = 1; m < levels; ++m) {
      const auto theirs = BlocksByNodes(serial.multigrid().LevelMatrix(m), *serial.multigrid().LevelGrid(m));
      const auto& mine = ours[m - 1];
      differing += static_cast<double>(std::max(mine.size(), theirs.size()) - std::min(mine.size(), theirs.size()));
      for (const auto& [key, block] : theirs) {
        const auto it = mine.find(key);
        ++compared;
        if (it == mine.end() || it->second != block) ++differing;
      }
      PetscPrintf(PETSC_COMM_SELF, "[          ] level %d: %zu blocks on 1 rank, %zu on %d\n", m, theirs.size(),
                  mine.size(), test::Size());
    }
  }
  EXPECT_GT(FromRankZero(compared), 1000.0);
  EXPECT_EQ(FromRankZero(differing), 0.0) << "blocks that differ from one rank's, bitwise";
}

TEST(GridMultigridRankCounts, VCycleIsTheOneOfOneRankAndSymmetricPositiveDefinite) {
  const ScopedOptions exact(ExactCoarseSolve("synthetic_"));
  SyntheticVCycle parallel(MPI_COMM_WORLD, 3);
  const auto Vw = parallel.Apply(WaveField), Vb = parallel.Apply(BumpyField);
  std::map<Coord, std::array<double, 3>> w, b;
  for (const auto& [x, v] : Vw) {
    w[x] = WaveField(x);
    b[x] = BumpyField(x);
  }
  const double asymmetry = std::abs(Dot(Vw, b) - Dot(w, Vb)) / std::sqrt(Dot(Vw, Vw) * Dot(b, b));
  PetscPrintf(PETSC_COMM_WORLD, "[          ] |<Vw,b> - <w,Vb>| / (|Vw| |b|) = %.2e, <Vw,w> = %.4e, <Vb,b> = %.4e\n",
              asymmetry, Dot(Vw, w), Dot(Vb, b));
  EXPECT_LT(asymmetry, 1e-13);
  EXPECT_GT(Dot(Vw, w), 0.0);
  EXPECT_GT(Dot(Vb, b), 0.0);
  double difference = 0.0;
  if (test::Rank() == 0) {
    SyntheticVCycle serial(PETSC_COMM_SELF, 3);
    difference = std::max(RelativeMaxDifference(Vw, serial.Apply(WaveField)),
                          RelativeMaxDifference(Vb, serial.Apply(BumpyField)));
  }
  difference = FromRankZero(difference);
  PetscPrintf(PETSC_COMM_WORLD, "[          ] V-cycle on %d ranks against 1: max difference %.2e of max |V b|\n",
              test::Size(), difference);
  EXPECT_LT(difference, 1e-12);
}

// One level: the V-cycle is the smoother alone, one symmetric sweep from zero. Formed here
// in Eigen from the gathered operator: forward Gauss-Seidel over the nodes ordered by
// (colour, block, node in block), then backward in the reverse order, each node's 3x3
// diagonal block solved.
TEST(GridMultigridRankCounts, SmootherIsSymmetricGaussSeidelInTheColoredOrder) {
  SyntheticVCycle parallel(MPI_COMM_WORLD, 1);
  const auto Vb = parallel.Apply(BumpyField);
  const GridInfo& level = *parallel.multigrid().LevelGrid(0);
  const auto blocks = BlocksByNodes(parallel.multigrid().LevelMatrix(0), level);
  double difference = 0.0;
  if (test::Rank() == 0) {
    std::vector<Coord> order;
    for (const auto& [x, v] : Vb) order.push_back(x);
    std::sort(order.begin(), order.end(), [](const Coord& a, const Coord& b) {
      return std::make_pair(ColorOf(a), BlockMajorKey(a)) < std::make_pair(ColorOf(b), BlockMajorKey(b));
    });
    std::map<Coord, std::vector<std::pair<Coord, Eigen::Matrix3d>>> rows;
    for (const auto& [key, block] : blocks) rows[key.first].emplace_back(key.second, Eigen::Map<const Eigen::Matrix3d>(block.data()));
    std::map<Coord, Eigen::Vector3d> x;
    for (const Coord& node : order) x[node].setZero();
    const auto relax = [&](const Coord& node) {
      Eigen::Vector3d t(BumpyField(node).data());
      Eigen::Matrix3d D = Eigen::Matrix3d::Zero();
      for (const auto& [col, K] : rows[node]) {
        if (col == node) D = K;
        else t -= K * x[col];
      }
      x[node] = D.inverse() * t;
    };
    for (const Coord& node : order) relax(node);
    for (auto it = order.rbegin(); it != order.rend(); ++it) relax(*it);
    std::map<Coord, std::array<double, 3>> reference;
    for (const auto& [node, v] : x) reference[node] = {v[0], v[1], v[2]};
    difference = RelativeMaxDifference(Vb, reference);
  }
  difference = FromRankZero(difference);
  PetscPrintf(PETSC_COMM_WORLD, "[          ] colored sweep on %d ranks against Eigen's: max difference %.2e\n",
              test::Size(), difference);
  EXPECT_LT(difference, 1e-13);
}

TEST_F(HotMultigridTest, ASuppliedFirstProlongationGivesTheStructuredLevels) {
  // The grid's own first prolongation, handed over as if level 0 were unstructured.
  potential_ = Potential(false);
  dv_ = RandomVector(*potential_, 3, 0.2, false);
  Mat H = potential_->CreateHessian();
  potential_->Hessian(dv_, H);
  const GridInfo grid = *potential_->Grid();
  GridInfo first;
  Mat P_maij = BuildProlongation(MPI_COMM_WORLD, grid, Embedding::kLinear, &first);
  Mat P0 = nullptr;
  OPTISTEP_PETSC(MatConvert(P_maij, MATAIJ, MAT_INITIAL_MATRIX, &P0));
  MatDestroy(&P_maij);
  const auto levels_of = [&](bool supplied) {
    GridMultigrid multigrid(MPI_COMM_WORLD, "supplied_", 3, Embedding::kLinear, "cube.yaml");
    KSP ksp = nullptr;
    OPTISTEP_PETSC(KSPCreate(MPI_COMM_WORLD, &ksp));
    OPTISTEP_PETSC(KSPSetOptionsPrefix(ksp, "supplied_"));
    OPTISTEP_PETSC(KSPSetType(ksp, KSPPREONLY));
    PC pc = nullptr;
    OPTISTEP_PETSC(KSPGetPC(ksp, &pc));
    multigrid.Configure(pc, supplied ? GridMultigrid::FirstLevel::kUnstructured : GridMultigrid::FirstLevel::kGrid);
    OPTISTEP_PETSC(KSPSetFromOptions(ksp));
    // PETSc's triple product takes AIJ: the supplied path's level 0 is AIJ.
    Mat A = H;
    if (supplied) OPTISTEP_PETSC(MatConvert(H, MATAIJ, MAT_INITIAL_MATRIX, &A));
    if (supplied) multigrid.SetFirstProlongation(pc, A, P0, first);
    else multigrid.SetGrid(pc, grid, A);
    multigrid.SetOperator(A);
    OPTISTEP_PETSC(KSPSetOperators(ksp, A, A));
    OPTISTEP_PETSC(KSPSetUp(ksp));
    std::vector<Sparse> levels;
    for (int m = 1; m < 3; ++m) levels.push_back(Gather(multigrid.LevelMatrix(m)));
    KSPDestroy(&ksp);
    if (A != H) MatDestroy(&A);
    return levels;
  };
  const std::vector<Sparse> structured = levels_of(false), supplied = levels_of(true);
  for (int m = 0; m < 2; ++m) {
    ASSERT_EQ(structured[m].rows(), supplied[m].rows());
    const double difference = MaxAbs(Sparse(structured[m] - supplied[m])), size = MaxAbs(structured[m]);
    PetscPrintf(PETSC_COMM_WORLD, "[          ] level %d: supplied against structured, max difference %.2e of %.2e\n",
                m + 1, difference, size);
    EXPECT_LE(difference, 1e-13 * size);
  }
  MatDestroy(&P0);
  MatDestroy(&H);
}

TEST_F(HotMultigridTest, AHierarchyKeptForAnUnchangedGridGivesTheVCycleOfANewOne) {
  // The same grid at two points dv1 and dv2: the second SetUp keeps the hierarchy and only
  // refills the matrices; it must apply exactly what a hierarchy built at dv2 applies.
  auto kept = VCycle(HotConfig());
  Vec q = RandomVector(*potential_, 11, 1.0, true), r1 = potential_->CreateVector();
  kept->Apply(q, r1);
  Vec dv2 = RandomVector(*potential_, 5, 0.2, false);
  auto potential2 = Potential(false);
  kept->SetUp(*potential2, dv2);
  EXPECT_EQ(kept->hierarchies_built(), 1);
  EXPECT_EQ(kept->hierarchies_reused(), 1);
  auto fresh = std::make_unique<MultigridInitializer>(MPI_COMM_WORLD, HotConfig(), MinimizerDefaults{PCPBJACOBI, true});
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
  const test::OneRankComparison c =
      test::CompareWithOneRank([&](MPI_Comm comm) { return RunHot(comm, scene); });
  // The CN tolerance allows velocity errors of about dv = 24 eps dt s / (rho dx) (see
  // test_lbfgs_scenes.cpp): 1.3e-4 m/s for the soft bars here (dt = 1/96 s), positions
  // dt dv per step.
  PetscPrintf(PETSC_COMM_WORLD, "[          ] HOT on %d ranks vs 1: worst |dx| %.2e m, |dv| %.2e m/s\n", test::Size(),
              c.worst_x, c.worst_v);
  EXPECT_LT(c.worst_x, 2 * 5 * (1.0 / 96) * 1.3e-4);
  EXPECT_LT(c.worst_v, 5 * 1.3e-4);
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

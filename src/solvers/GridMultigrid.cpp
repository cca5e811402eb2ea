#include "solvers/GridMultigrid.hpp"

#include <algorithm>

#include "core/Error.hpp"

namespace optistep {

const Phase kHierarchyBuildPhase("HierarchyBuild");
const Phase kGalerkinProductPhase("GalerkinProduct");
const Phase kVCyclePhase("VCycle");

namespace {

/// Levels of HOT's multigrid, the finest included (HOT Sec. 7.1), when the scene leaves
/// solver.mg_levels unset (0).
constexpr int kHotLevels = 3;

GridMultigrid::LevelSize SizeOf(MPI_Comm comm, PetscInt nodes, PetscInt owned) {
  GridMultigrid::LevelSize size;
  size.nodes = nodes;
  PetscInt range[2] = {owned, -owned};
  MPI_Allreduce(MPI_IN_PLACE, range, 2, MPIU_INT, MPI_MIN, comm);
  size.fewest_owned = range[0];
  size.most_owned = -range[1];
  return size;
}

bool IsShell(PC pc) {
  PetscBool shell = PETSC_FALSE;
  OPTISTEP_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), PCSHELL, &shell));
  return shell == PETSC_TRUE;
}

}  // namespace

GridMultigrid::GridMultigrid(MPI_Comm comm, std::string prefix, int levels, Embedding embedding,
                             std::string scene_path)
    : comm_(comm),
      prefix_(std::move(prefix)),
      levels_(levels > 0 ? levels : kHotLevels),
      embedding_(embedding),
      scene_path_(std::move(scene_path)) {}

GridMultigrid::~GridMultigrid() { Reset(); }

void GridMultigrid::Reset() {
  grid_levels_.clear();
  first_P_.reset();
  first_R_.reset();
  first_product_.reset();
  first_level_.reset();
  has_grid_ = false;
}

PetscErrorCode GridMultigrid::ReadOptions() {
  PetscOptionsBegin(comm_, prefix_.c_str(), "Multigrid on the MPM grid (HOT Sec. 4)", "PC");
  // PCMG reads -pc_mg_levels itself (and -help lists it there); it is read here first
  // because the smoothers' defaults must be set on the final number of levels.
  PetscInt levels = levels_;
  PetscBool set = PETSC_FALSE;
  PetscCall(PetscOptionsGetInt(nullptr, prefix_.c_str(), "-pc_mg_levels", &levels, &set));
  if (set) {
    if (levels < 1) throw InputError("-" + prefix_ + "pc_mg_levels: expected a whole number >= 1");
    levels_ = static_cast<int>(levels);
    levels_from_option_ = true;
  }
  const char* const kEmbeddings[] = {"linear", "quadratic"};
  PetscInt embedding = embedding_ == Embedding::kLinear ? 0 : 1;
  PetscCall(PetscOptionsEList("-mg_embedding",
                              "Prolongation by node embedding: linear (HOT Sec. 4) or quadratic "
                              "(scene: solver.mg_embedding)",
                              "", kEmbeddings, 2, kEmbeddings[embedding], &embedding, nullptr));
  embedding_ = embedding == 0 ? Embedding::kLinear : Embedding::kQuadratic;
  PetscOptionsEnd();
  return 0;
}

void GridMultigrid::Configure(PC pc, FirstLevel first) {
  first_ = first;
  CallReadingOptions(prefix_, [&] { return ReadOptions(); });
  OPTISTEP_PETSC(PCSetType(pc, PCMG));
  OPTISTEP_PETSC(PCMGSetLevels(pc, levels_, nullptr));
  OPTISTEP_PETSC(PCMGSetType(pc, PC_MG_MULTIPLICATIVE));
  OPTISTEP_PETSC(PCMGSetCycleType(pc, PC_MG_CYCLE_V));
  // The coarse operators are ours (SetOperator).
  OPTISTEP_PETSC(PCMGSetGalerkin(pc, PC_MG_GALERKIN_NONE));
  // With a single level PCMG applies that level's smoother alone.
  for (int level = levels_ > 1 ? 1 : 0; level < levels_; ++level) {
    // HOT Alg. 2: one symmetric Gauss-Seidel sweep before and after the coarse correction.
    KSP smoother = nullptr;
    PC smoother_pc = nullptr;
    OPTISTEP_PETSC(PCMGGetSmoother(pc, level, &smoother));
    OPTISTEP_PETSC(KSPSetType(smoother, KSPRICHARDSON));
    OPTISTEP_PETSC(KSPSetTolerances(smoother, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, 1));
    OPTISTEP_PETSC(KSPGetPC(smoother, &smoother_pc));
    if (first == FirstLevel::kUnstructured && level == levels_ - 1) {
      // No grid on level 0: PETSc's rank-local symmetric SOR.
      OPTISTEP_PETSC(PCSetType(smoother_pc, PCSOR));
      OPTISTEP_PETSC(PCSORSetSymmetric(smoother_pc, SOR_LOCAL_SYMMETRIC_SWEEP));
    } else {
      OPTISTEP_PETSC(PCSetType(smoother_pc, PCSHELL));
    }
  }
  if (levels_ > 1) {
    // HOT Sec. 5.3: the coarsest level by point-block-Jacobi PCG to relative tolerance 1/2.
    KSP coarse = nullptr;
    PC coarse_pc = nullptr;
    OPTISTEP_PETSC(PCMGGetCoarseSolve(pc, &coarse));
    OPTISTEP_PETSC(KSPSetType(coarse, KSPCG));
    OPTISTEP_PETSC(KSPSetTolerances(coarse, 0.5, 0.0, PETSC_DEFAULT, 10000));
    OPTISTEP_PETSC(KSPGetPC(coarse, &coarse_pc));
    OPTISTEP_PETSC(PCSetType(coarse_pc, PCPBJACOBI));
  }
}

void GridMultigrid::BuildGridLevels(PC pc, const GridInfo& grid, Mat A, int above) {
  const int n_grid = levels_ - above;
  grid_levels_.clear();
  grid_levels_.resize(n_grid);
  grid_levels_[0].directory = std::make_unique<GridDirectory>(comm_, grid);
  grid_levels_[0].op = std::make_unique<GridOperator>(grid, A);
  sizes_.push_back(SizeOf(comm_, grid.n_global, static_cast<PetscInt>(grid.owned_nodes.size())));
  for (int m = 0; m + 1 < n_grid; ++m) {
    GridLevel& fine = grid_levels_[m];
    GridLevel& coarse = grid_levels_[m + 1];
    const GridInfo& fine_grid = fine.op->level();
    Coarsening c = Coarsen(comm_, fine_grid, embedding_, &coarse.directory);
    sizes_.push_back(SizeOf(comm_, c.coarse.n_global, static_cast<PetscInt>(c.coarse.owned_nodes.size())));
    if (c.coarse.n_global >= fine_grid.n_global) {
      const int level = above + m;
      const std::string key =
          levels_from_option_ ? "-" + prefix_ + "pc_mg_levels" : scene_path_ + ": solver.mg_levels";
      throw InputError(key + ": " + std::to_string(levels_) + " levels, but this step's grid (" +
                       std::to_string(grid.n_global) + " nodes at level " + std::to_string(above) +
                       ") coarsens only to " + std::to_string(level + 1) + " (level " + std::to_string(level + 1) +
                       " would have " + std::to_string(c.coarse.n_global) + " nodes, no fewer than level " +
                       std::to_string(level) + "'s " + std::to_string(fine_grid.n_global) + "); expected at most " +
                       std::to_string(level + 1));
    }
    fine.product =
        std::make_unique<GridGalerkinProduct>(*fine.op, *fine.directory, c.coarse, *coarse.directory, embedding_);
    coarse.op = std::make_unique<GridOperator>(c.coarse, fine.product->coarse_matrix());
    // PETSc numbers levels from the coarsest (0) to the finest (levels - 1).
    OPTISTEP_PETSC(PCMGSetInterpolation(pc, levels_ - 1 - (above + m), c.P));
  }
  for (int m = 0; m < n_grid; ++m) {
    const int petsc_level = levels_ - 1 - (above + m);
    KSP ksp = nullptr;
    OPTISTEP_PETSC(PCMGGetSmoother(pc, petsc_level, &ksp));
    Mat Am = grid_levels_[m].op->matrix();
    OPTISTEP_PETSC(KSPSetOperators(ksp, Am, Am));
    if (petsc_level == 0 && levels_ > 1) continue;  // the coarse solve
    PC smoother_pc = nullptr;
    OPTISTEP_PETSC(KSPGetPC(ksp, &smoother_pc));
    grid_levels_[m].smoother = std::make_unique<ColoredGaussSeidel>(*grid_levels_[m].op);
    if (IsShell(smoother_pc)) grid_levels_[m].smoother->Attach(smoother_pc);
  }
}

void RequireHessianType(Mat H, MatType seq, MatType mpi, const std::string& why) {
  PetscBool ok = PETSC_FALSE;
  OPTISTEP_PETSC(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(H), &ok, seq, mpi, ""));
  if (ok) return;
  MatType type = nullptr;
  OPTISTEP_PETSC(MatGetType(H, &type));
  throw InputError(std::string("-hessian_mat_type ") + type + ": " + why);
}

void GridMultigrid::SetGrid(PC pc, const GridInfo& grid, Mat A) {
  RequireHessianType(A, MATSEQBAIJ, MATMPIBAIJ,
                     "the grid multigrid reads the level-0 Hessian as 3x3 blocks; expected -hessian_mat_type "
                     "baij (the default)");
  Reset();
  sizes_.clear();
  BuildGridLevels(pc, grid, A, 0);
  grid_ = grid;
  has_grid_ = true;
  for (std::size_t m = 0; m < sizes_.size(); ++m)
    OPTISTEP_PETSC(PetscInfo(pc, "grid multigrid level %d: %" PetscInt_FMT " nodes, %" PetscInt_FMT
                                 " to %" PetscInt_FMT " per rank\n",
                             static_cast<int>(m), sizes_[m].nodes, sizes_[m].fewest_owned, sizes_[m].most_owned));
}

void GridMultigrid::SetFirstProlongation(PC pc, Mat A, Mat P0, const GridInfo& first_grid) {
  Reset();
  sizes_.clear();
  if (levels_ < 2)
    throw InputError((levels_from_option_ ? "-" + prefix_ + "pc_mg_levels" : scene_path_ + ": solver.mg_levels") +
                     ": a multigrid from a supplied first prolongation needs at least 2 levels");
  PetscInt rows = 0, owned = 0;
  OPTISTEP_PETSC(MatGetSize(A, &rows, nullptr));
  OPTISTEP_PETSC(MatGetLocalSize(A, &owned, nullptr));
  sizes_.push_back(SizeOf(comm_, rows / 3, owned / 3));
  first_P_ = OwnedMat::Shared(P0);
  OPTISTEP_PETSC(MatTranspose(first_P_, MAT_INITIAL_MATRIX, first_R_.out()));
  // Level 1's pattern from the product at A's current values; SetOperator refills it.
  OPTISTEP_PETSC(MatMatMatMult(first_R_, A, first_P_, MAT_INITIAL_MATRIX, PETSC_DEFAULT, first_product_.out()));
  OPTISTEP_PETSC(MatSetBlockSizes(first_product_, 3, 3));
  OPTISTEP_PETSC(MatConvert(first_product_, MATBAIJ, MAT_INITIAL_MATRIX, first_level_.out()));
  OPTISTEP_PETSC(MatSetOption(first_level_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  OPTISTEP_PETSC(PCMGSetInterpolation(pc, levels_ - 1, first_P_));
  KSP ksp = nullptr;
  OPTISTEP_PETSC(PCMGGetSmoother(pc, levels_ - 1, &ksp));
  OPTISTEP_PETSC(KSPSetOperators(ksp, A, A));
  BuildGridLevels(pc, first_grid, first_level_, 1);
  has_grid_ = false;
}

void GridMultigrid::SetOperator(Mat A) {
  ScopedPhase timed(kGalerkinProductPhase);
  if (first_P_) {
    // Level 1 = R0 A P0, copied into its BAIJ matrix row by row.
    OPTISTEP_PETSC(MatMatMatMult(first_R_, A, first_P_, MAT_REUSE_MATRIX, PETSC_DEFAULT, first_product_.address()));
    PetscInt begin = 0, end = 0;
    OPTISTEP_PETSC(MatGetOwnershipRange(first_product_, &begin, &end));
    for (PetscInt row = begin; row < end; ++row) {
      PetscInt n = 0;
      const PetscInt* cols = nullptr;
      const PetscScalar* values = nullptr;
      OPTISTEP_PETSC(MatGetRow(first_product_, row, &n, &cols, &values));
      OPTISTEP_PETSC(MatSetValues(first_level_, 1, &row, n, cols, values, INSERT_VALUES));
      OPTISTEP_PETSC(MatRestoreRow(first_product_, row, &n, &cols, &values));
    }
    OPTISTEP_PETSC(MatAssemblyBegin(first_level_, MAT_FINAL_ASSEMBLY));
    OPTISTEP_PETSC(MatAssemblyEnd(first_level_, MAT_FINAL_ASSEMBLY));
  } else if (!grid_levels_.empty() && grid_levels_[0].op->matrix() != A) {
    throw std::logic_error("GridMultigrid::SetOperator: not the level-0 matrix of SetGrid");
  }
  for (std::size_t m = 0; m + 1 < grid_levels_.size(); ++m) grid_levels_[m].product->Compute(*grid_levels_[m + 1].op);
}

bool GridMultigrid::SameGrid(const GridInfo& grid) const {
  int same = has_grid_ && grid.dx == grid_.dx && grid.first_global == grid_.first_global &&
             grid.n_global == grid_.n_global && grid.owned_nodes == grid_.owned_nodes;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm_);
  return same != 0;
}

Mat GridMultigrid::LevelMatrix(int m) const {
  const int grid_level = m - (first_P_ ? 1 : 0);
  if (grid_level < 0 || grid_level >= static_cast<int>(grid_levels_.size())) return nullptr;
  return grid_levels_[grid_level].op->matrix();
}

const GridInfo* GridMultigrid::LevelGrid(int m) const {
  const int grid_level = m - (first_P_ ? 1 : 0);
  if (grid_level < 0 || grid_level >= static_cast<int>(grid_levels_.size())) return nullptr;
  return &grid_levels_[grid_level].op->level();
}

void GridMultigrid::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer,
                                        "grid multigrid (HOT Sec. 4): %d levels, %s node embedding, "
                                        "Galerkin coarse operators by the embedding's stencil\n",
                                        levels_, EmbeddingName(embedding_)));
  for (std::size_t m = 0; m < sizes_.size(); ++m)
    OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer,
                                          "  level %d (dx x %d): %" PetscInt_FMT " nodes, %" PetscInt_FMT
                                          " to %" PetscInt_FMT " per rank\n",
                                          static_cast<int>(m), 1 << m, sizes_[m].nodes,
                                          sizes_[m].fewest_owned, sizes_[m].most_owned));
}

}  // namespace optistep

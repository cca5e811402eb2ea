#include "solvers/GridMultigrid.hpp"

#include <algorithm>

#include "core/Error.hpp"

namespace optistep {

const Phase kHierarchyBuildPhase("HierarchyBuild");
const Phase kVCyclePhase("VCycle");

namespace {

/// Levels of HOT's multigrid, the finest included (HOT Sec. 7.1).
constexpr int kHotLevels = 3;

}  // namespace

GridMultigrid::GridMultigrid(MPI_Comm comm, std::string prefix, int levels, Embedding embedding,
                             std::string scene_path)
    : comm_(comm),
      prefix_(std::move(prefix)),
      levels_(levels > 0 ? levels : kHotLevels),
      embedding_(embedding),
      scene_path_(std::move(scene_path)) {}

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

void GridMultigrid::Configure(PC pc) {
  CallReadingOptions(prefix_, [&] { return ReadOptions(); });
  OPTISTEP_PETSC(PCSetType(pc, PCMG));
  OPTISTEP_PETSC(PCMGSetLevels(pc, levels_, nullptr));
  OPTISTEP_PETSC(PCMGSetType(pc, PC_MG_MULTIPLICATIVE));
  OPTISTEP_PETSC(PCMGSetCycleType(pc, PC_MG_CYCLE_V));
  OPTISTEP_PETSC(PCMGSetGalerkin(pc, PC_MG_GALERKIN_BOTH));
  // With a single level PCMG applies that level's smoother alone.
  for (int level = levels_ > 1 ? 1 : 0; level < levels_; ++level) {
    // HOT Alg. 2: one symmetric Gauss-Seidel sweep before and after the coarse correction.
    KSP smoother = nullptr;
    PC smoother_pc = nullptr;
    OPTISTEP_PETSC(PCMGGetSmoother(pc, level, &smoother));
    OPTISTEP_PETSC(KSPSetType(smoother, KSPRICHARDSON));
    OPTISTEP_PETSC(KSPSetTolerances(smoother, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, 1));
    OPTISTEP_PETSC(KSPGetPC(smoother, &smoother_pc));
    OPTISTEP_PETSC(PCSetType(smoother_pc, PCSOR));
    OPTISTEP_PETSC(PCSORSetSymmetric(smoother_pc, SOR_LOCAL_SYMMETRIC_SWEEP));
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

void GridMultigrid::AppendLevelSize(PetscInt n_global, PetscInt n_owned) {
  PetscInt owned[2] = {n_owned, -n_owned};
  MPI_Allreduce(MPI_IN_PLACE, owned, 2, MPIU_INT, MPI_MIN, comm_);
  sizes_.push_back(LevelSize{n_global, owned[0], -owned[1]});
}

void GridMultigrid::StartLevelSizes(PetscInt n_global, PetscInt n_owned) {
  sizes_.clear();
  AppendLevelSize(n_global, n_owned);
}

std::vector<Mat> GridMultigrid::BuildLevelsBelow(const GridInfo& grid, int count, PetscInt coarsest_nodes,
                                                 const std::string& level0) {
  AppendLevelSize(grid.n_global, static_cast<PetscInt>(grid.owned_nodes.size()));
  const int first = static_cast<int>(sizes_.size()) - 1;  // the level grid is
  std::vector<Mat> prolongations;
  GridInfo fine = grid;
  for (int m = 0; count < 0 ? fine.n_global > coarsest_nodes : m + 1 < count; ++m) {
    GridInfo coarse;
    Mat P = BuildProlongation(comm_, fine, embedding_, &coarse);
    if (coarse.n_global >= fine.n_global) {
      MatDestroy(&P);
      if (count < 0) break;  // as many as the grid coarsens to
      for (Mat& made : prolongations) MatDestroy(&made);
      const std::string key =
          levels_from_option_ ? "-" + prefix_ + "pc_mg_levels" : scene_path_ + ": solver.mg_levels";
      const int total = first + count;
      throw InputError(key + ": " + std::to_string(total) + " levels, but " + level0 + " (" +
                       std::to_string(grid.n_global) + " nodes) coarsens only to " + std::to_string(first + m + 1) +
                       " (level " + std::to_string(first + m + 1) + " would have " + std::to_string(coarse.n_global) +
                       " nodes, no fewer than level " + std::to_string(first + m) + "'s " +
                       std::to_string(fine.n_global) + "); expected at most " + std::to_string(first + m + 1));
    }
    prolongations.push_back(P);
    AppendLevelSize(coarse.n_global, static_cast<PetscInt>(coarse.owned_nodes.size()));
    fine = std::move(coarse);
  }
  return prolongations;
}

void GridMultigrid::SetProlongations(PC pc, const std::vector<Mat>& prolongations) {
  const int levels = static_cast<int>(prolongations.size()) + 1;
  for (int m = 0; m + 1 < levels; ++m) {
    // PETSc numbers levels from the coarsest (0) to the finest (levels - 1).
    OPTISTEP_PETSC(PCMGSetInterpolation(pc, levels - 1 - m, prolongations[m]));
    // R = P^T stored, so that PCMG forms R H P by MatMatMatMult, not MatPtAP (see the header).
    Mat R = nullptr;
    OPTISTEP_PETSC(MatTranspose(prolongations[m], MAT_INITIAL_MATRIX, &R));
    OPTISTEP_PETSC(PCMGSetRestriction(pc, levels - 1 - m, R));
    MatDestroy(&R);
  }
}

void GridMultigrid::SetGrid(PC pc, const GridInfo& grid) {
  has_grid_ = false;
  sizes_.clear();
  std::vector<Mat> prolongations = BuildLevelsBelow(grid, levels_, 0, "this step's MPM grid");
  SetProlongations(pc, prolongations);
  for (Mat& P : prolongations) MatDestroy(&P);
  grid_ = grid;
  has_grid_ = true;
  for (std::size_t m = 0; m < sizes_.size(); ++m)
    OPTISTEP_PETSC(PetscInfo(pc, "grid multigrid level %d: %" PetscInt_FMT " nodes, %" PetscInt_FMT
                                 " to %" PetscInt_FMT " per rank\n",
                             static_cast<int>(m), sizes_[m].nodes, sizes_[m].fewest_owned, sizes_[m].most_owned));
}

bool GridMultigrid::SameGrid(const GridInfo& grid) const {
  int same = has_grid_ && grid.dx == grid_.dx && grid.first_global == grid_.first_global &&
             grid.n_global == grid_.n_global && grid.owned_nodes == grid_.owned_nodes;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm_);
  return same != 0;
}

void GridMultigrid::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer,
                                        "grid multigrid (HOT Sec. 4): %d levels, %s node embedding, "
                                        "Galerkin coarse operators\n",
                                        levels_, EmbeddingName(embedding_)));
  for (std::size_t m = 0; m < sizes_.size(); ++m)
    OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer,
                                          "  level %d (dx x %d): %" PetscInt_FMT " nodes, %" PetscInt_FMT
                                          " to %" PetscInt_FMT " per rank\n",
                                          static_cast<int>(m), 1 << m, sizes_[m].nodes,
                                          sizes_[m].fewest_owned, sizes_[m].most_owned));
}

}  // namespace optistep

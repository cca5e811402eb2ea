#include "solvers/TetGridMultigrid.hpp"

#include <cstdio>

#include "core/Error.hpp"
#include "solvers/NodeEmbedding.hpp"
#include "solvers/TetGridEmbedding.hpp"

namespace optistep {
namespace {

/// Automatic levels: coarsen until a grid has at most this many nodes, so that the
/// coarsest level's factorization on every rank costs little next to a V-cycle.
constexpr PetscInt kCoarsestNodes = 500;
/// The first grid's spacing over the mesh's mean node spacing (see the header).
constexpr double kGridRatio = 2.0;
/// The level count PCMG is configured with until the mesh is known (automatic levels).
constexpr int kProvisionalLevels = 3;

Embedding SceneEmbedding(const SolverConfig& config) {
  Embedding embedding = Embedding::kLinear;
  ParseEmbedding(config.mg_embedding, &embedding);  // SceneConfig checked the name
  return embedding;
}

/// x as printf's %g writes it (0.5, not std::to_string's 0.500000), for messages.
std::string Shortest(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

PetscErrorCode ApplyShell(PC pc, Vec x, Vec y) {
  PC inner = nullptr;
  PetscCall(PCShellGetContext(pc, &inner));
  ScopedPhase timed(kVCyclePhase);
  PetscCall(PCApply(inner, x, y));
  return 0;
}

PetscErrorCode ViewShell(PC pc, PetscViewer viewer) {
  PC inner = nullptr;
  PetscCall(PCShellGetContext(pc, &inner));
  PetscCall(PetscViewerASCIIPrintf(viewer, "one V-cycle of the embedded-grid multigrid:\n"));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PCView(inner, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  return 0;
}

}  // namespace

TetGridMultigrid::TetGridMultigrid(MPI_Comm comm, std::string prefix, const SolverConfig& config, bool newton)
    : comm_(comm),
      prefix_(std::move(prefix)),
      scene_path_(config.scene_path),
      automatic_levels_(config.mg_levels <= 0),
      newton_(newton),
      ratio_(kGridRatio),
      multigrid_(comm, prefix_, config.mg_levels > 0 ? config.mg_levels : kProvisionalLevels,
                 SceneEmbedding(config), config.scene_path) {}

TetGridMultigrid::~TetGridMultigrid() {
  inner_.reset();
  multigrid_.Reset();
  P0_.reset();
}

PetscErrorCode TetGridMultigrid::ReadOptions() {
  PetscOptionsBegin(comm_, prefix_.c_str(), "Embedded-grid multigrid of the tet mesh (Xian et al. 2019)", "PC");
  PetscCall(PetscOptionsReal("-mg_grid_ratio",
                             "Spacing of the first grid over the mesh's mean node spacing (volume / nodes)^(1/3); "
                             "2: about one grid node per 8 mesh nodes",
                             "", ratio_, &ratio_, nullptr));
  if (newton_) {
    const char* const kUpdates[] = {"iteration", "step"};
    PetscInt update = coarse_update_ == kUpdates[0] ? 0 : 1;
    PetscCall(PetscOptionsEList("-mg_coarse_update",
                                "Galerkin coarse operators formed from every Newton iteration's Hessian (iteration) or "
                                "from each step's first, the finest level's smoother always on the current one (step)",
                                "", kUpdates, 2, kUpdates[update], &update, nullptr));
    coarse_update_ = kUpdates[update];
  }
  PetscOptionsEnd();
  // A first grid no coarser than the mesh (ratio <= 1) has about as many nodes as the mesh
  // or more: no coarsening.
  if (!(ratio_ > 1.0))
    throw InputError("-" + prefix_ + "mg_grid_ratio " + Shortest(ratio_) +
                     ": expected a number > 1 (the first grid coarser than the mesh)");
  return 0;
}

void TetGridMultigrid::ConfigureCoarsest(PC pc) {
  PetscInt levels = 0;
  OPTISTEP_PETSC(PCMGGetLevels(pc, &levels));
  if (levels < 2) return;
  KSP coarse = nullptr;
  PC coarse_pc = nullptr;
  OPTISTEP_PETSC(PCMGGetCoarseSolve(pc, &coarse));
  OPTISTEP_PETSC(KSPSetType(coarse, KSPPREONLY));
  OPTISTEP_PETSC(KSPGetPC(coarse, &coarse_pc));
  OPTISTEP_PETSC(PCSetType(coarse_pc, PCREDUNDANT));
}

void TetGridMultigrid::Configure(PC pc) {
  CallReadingOptions(prefix_, [&] { return ReadOptions(); });
  multigrid_.Configure(pc, GridMultigrid::FirstLevel::kUnstructured);
  if (multigrid_.levels_from_option()) automatic_levels_ = false;
  ConfigureCoarsest(pc);
}

void TetGridMultigrid::CreateInner() {
  inner_.reset();
  CallReadingOptions(prefix_, [&] {
    PetscCall(PCCreate(comm_, inner_.out()));
    PetscCall(PCSetOptionsPrefix(inner_, prefix_.c_str()));
    return PetscErrorCode(0);
  });
  Configure(inner_);
  CallReadingOptions(prefix_, [&] { return PCSetFromOptions(inner_); });
}

void TetGridMultigrid::WrapAsShell(PC outer) {
  // -<prefix>pc_type mg, read by the KSP holding outer, made it a PCMG of its own: the
  // shell replaces it.
  CallReadingOptions(prefix_, [&] {
    PetscCall(PCSetType(outer, PCSHELL));
    PetscCall(PCShellSetContext(outer, inner_.get()));
    PetscCall(PCShellSetApply(outer, ApplyShell));
    PetscCall(PCShellSetView(outer, ViewShell));
    PetscCall(PCShellSetName(outer, "embedded-grid multigrid V-cycle"));
    return PetscErrorCode(0);
  });
}

int TetGridMultigrid::AutomaticLevels(const GridInfo& first_grid) const {
  int levels = 2;
  GridInfo fine = first_grid;
  while (fine.n_global > kCoarsestNodes) {
    GridInfo coarse;
    const OwnedMat P(BuildProlongation(comm_, fine, multigrid_.embedding(), &coarse));  // coarse is what counts
    if (coarse.n_global >= fine.n_global) break;
    ++levels;
    fine = std::move(coarse);
  }
  return levels;
}

void TetGridMultigrid::BuildHierarchy(PC pc, IncrementalPotential& potential, Mat H) {
  const RestNodes* nodes = potential.Nodes();
  if (!nodes)
    throw InputError(scene_path_ + ": solver.method: the embedded-grid multigrid needs a tet mesh "
                     "(expected discretization: fem)");
  h_ = ratio_ * MeanNodeSpacing(*nodes);
  const int asked = multigrid_.levels();
  int levels = 1;
  P0_.reset();
  if (automatic_levels_ || asked > 1) {
    // The gap between bodies' grids must outlast the levels below (-1: as many as a grid
    // can shrink).
    const int below = automatic_levels_ ? -1 : asked - 2;
    P0_.reset(BuildTetGridProlongation(comm_, *nodes, h_, below, &first_grid_));
    if (first_grid_.n_global < nodes->n_global) {
      levels = automatic_levels_ ? AutomaticLevels(first_grid_) : asked;
    } else {
      P0_.reset();  // automatic levels on a mesh too small for a grid: the smoother alone
      if (!automatic_levels_)
        throw InputError("-" + prefix_ + "mg_grid_ratio " + Shortest(ratio_) + ": the first grid (spacing " +
                         Shortest(h_) + " m) has " + std::to_string(first_grid_.n_global) +
                         " nodes, no fewer than the mesh's " + std::to_string(nodes->n_global) +
                         "; expected a larger ratio");
    }
  }
  if (levels != asked) {
    // Automatic levels: PCMG made again with the count the mesh gives, then the user's
    // options on the new levels.
    multigrid_.SetLevels(levels);
    Configure(pc);
    CallReadingOptions(prefix_, [&] {
      PetscCall(PCSetFromOptions(pc));
      for (int level = 0; level < levels; ++level) {
        KSP smoother = nullptr;
        PetscCall(PCMGGetSmoother(pc, level, &smoother));
        PetscCall(KSPSetFromOptions(smoother));
      }
      return PetscErrorCode(0);
    });
  }
  if (P0_) multigrid_.SetFirstProlongation(pc, H, P0_, first_grid_);
}

void TetGridMultigrid::SetUp(PC pc, IncrementalPotential& potential, Mat H, bool first) {
  RequireHessianType(H, MATSEQAIJ, MATMPIAIJ,
                     "the embedded-grid multigrid forms its first coarse level by PETSc's Galerkin product "
                     "(MatMatMatMult), which PETSc 3.18 offers for AIJ matrices only; expected aij");
  ScopedPhase timed(kHierarchyBuildPhase);
  PetscObjectState pattern = 0;
  OPTISTEP_PETSC(MatGetNonzeroState(H, &pattern));
  PetscObjectId id = 0;
  OPTISTEP_PETSC(PetscObjectGetId(reinterpret_cast<PetscObject>(H), &id));
  const bool lagged = built_ && !first && coarse_update_ == "step";
  if (lagged && pattern == pattern_ && id == last_id_) {
    // PCMG keeps its coarse levels; the finest level's smoother reads H, refilled in place.
    OPTISTEP_PETSC(PCSetReusePreconditioner(pc, PETSC_TRUE));
    ++lagged_;
    return;
  }
  OPTISTEP_PETSC(PCSetReusePreconditioner(pc, PETSC_FALSE));
  if (!built_) {
    BuildHierarchy(pc, potential, H);
    built_ = true;
    ++symbolic_;
  } else if (pattern != pattern_ || id != last_id_) {
    // A new pattern (self-contact blocks): level 1's product is formed again from the kept
    // first prolongation, the grid levels below it made again.
    OPTISTEP_PETSC(PCReset(pc));
    multigrid_.Reset();
    if (P0_) multigrid_.SetFirstProlongation(pc, H, P0_, first_grid_);
    ++symbolic_;
  } else {
    ++numeric_;
  }
  last_id_ = id;
  pattern_ = pattern;
  if (P0_) multigrid_.SetOperator(H);
  OPTISTEP_PETSC(PCSetOperators(pc, H, H));
  CallReadingOptions(prefix_, [&] { return PCSetUp(pc); });
}

void TetGridMultigrid::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer,
                                        "embedded-grid multigrid (Xian et al. 2019): %d levels, first grid "
                                        "spacing %g x the mean node spacing%s, %s node embedding below it, "
                                        "Galerkin coarse operators\n",
                                        multigrid_.levels(), ratio_,
                                        automatic_levels_ ? ", levels automatic" : "",
                                        EmbeddingName(multigrid_.embedding())));
  const auto& sizes = multigrid_.level_sizes();
  for (std::size_t m = 0; m < sizes.size(); ++m)
    OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer,
                                          "  level %d (%s): %" PetscInt_FMT " nodes, %" PetscInt_FMT
                                          " to %" PetscInt_FMT " per rank\n",
                                          static_cast<int>(m), m == 0 ? "mesh" : "grid", sizes[m].nodes,
                                          sizes[m].fewest_owned, sizes[m].most_owned));
}

}  // namespace optistep

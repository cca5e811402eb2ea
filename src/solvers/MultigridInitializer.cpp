#include "solvers/MultigridInitializer.hpp"

#include <cstdio>

#include "core/Error.hpp"

namespace optistep {

namespace {

/// HOT's on the MPM grid; the embedded-grid multigrid's on a tet mesh.
constexpr const char* kGridPrefix = "hot_";
constexpr const char* kMeshPrefix = "vcycle_";

Embedding SceneEmbedding(const SolverConfig& config) {
  Embedding embedding = Embedding::kLinear;
  ParseEmbedding(config.mg_embedding, &embedding);  // SceneConfig checked the name
  return embedding;
}

}  // namespace

MultigridInitializer::MultigridInitializer(MPI_Comm comm, const SolverConfig& config,
                                           const MinimizerDefaults& defaults)
    : comm_(comm),
      prefix_(defaults.grid ? kGridPrefix : kMeshPrefix),
      fallback_prefix_(prefix_ + "fallback_"),
      multigrid_(comm, prefix_, config.mg_levels, SceneEmbedding(config), config.scene_path) {
  if (!defaults.grid) tet_multigrid_ = std::make_unique<TetGridMultigrid>(comm, prefix_, config);
}

MultigridInitializer::~MultigridInitializer() = default;

void MultigridInitializer::SetFromOptions() {
  ksp_.reset();
  fallback_.reset();
  OPTISTEP_PETSC(KSPCreate(comm_, ksp_.out()));
  OPTISTEP_PETSC(KSPSetOptionsPrefix(ksp_, prefix_.c_str()));
  OPTISTEP_PETSC(KSPSetType(ksp_, KSPPREONLY));
  PC pc = nullptr;
  OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
  if (tet_multigrid_)
    tet_multigrid_->Configure(pc);
  else
    multigrid_.Configure(pc);
  CallReadingOptions(prefix_, [&] { return KSPSetFromOptions(ksp_); });
  CallReadingOptions(fallback_prefix_.c_str(), [&] {
    PetscCall(KSPCreate(comm_, fallback_.out()));
    PetscCall(KSPSetOptionsPrefix(fallback_, fallback_prefix_.c_str()));
    PetscCall(KSPSetType(fallback_, KSPCG));
    PC fallback_pc = nullptr;
    PetscCall(KSPGetPC(fallback_, &fallback_pc));
    PetscCall(PCSetType(fallback_pc, PCPBJACOBI));
    PetscCall(KSPSetTolerances(fallback_, 0.5, 0.0, PETSC_DEFAULT, 10000));
    PetscCall(KSPSetFromOptions(fallback_));
    return PetscErrorCode(0);
  });
  AbandonableKrylov(fallback_);
}

void MultigridInitializer::SetUp(IncrementalPotential& potential, Vec u0) {
  if (tet_multigrid_) {
    // The tet mesh's hierarchy is fixed for the run; the Hessian is the potential's one
    // matrix, refilled in place.
    OPTISTEP_PETSC(KSPReset(fallback_));
    fell_back_ = false;
    if (!H_) H_.reset(potential.CreateHessian());
    potential.Hessian(u0, H_);
    PC pc = nullptr;
    OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
    tet_multigrid_->SetUp(pc, potential, H_);
    built_ = tet_multigrid_->symbolic_setups();
    reused_ = tet_multigrid_->numeric_setups();
    OPTISTEP_PETSC(KSPSetOperators(ksp_, H_, H_));
    CallReadingOptions(prefix_, [&] { return KSPSetUp(ksp_); });
    return;
  }
  const GridInfo* grid = potential.Grid();
  if (!grid)
    throw InputError("solver.method: HOT's V-cycle (initializer vcycle) needs an MPM grid; this "
                     "discretization has none (expected discretization: mpm)");
  OPTISTEP_PETSC(KSPReset(fallback_));
  fell_back_ = false;
  PC pc = nullptr;
  OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
  // The grid changes with the particles. While it (on every rank) and the Hessian's
  // nonzero pattern stay those of the last SetUp, the V-cycle keeps its prolongations, its
  // level-0 matrix, which the potential refills in place, and its coarse matrices, whose
  // Galerkin products PETSc then forms by their numeric phase alone (MAT_REUSE_MATRIX):
  // the same numbers as a new hierarchy, without the symbolic phase and with one Hessian
  // in memory. Otherwise the last hierarchy goes before the new Hessian is made.
  int same_pattern = H_ && multigrid_.SameGrid(*grid) && potential.HessianPatternIs(H_);
  MPI_Allreduce(MPI_IN_PLACE, &same_pattern, 1, MPI_INT, MPI_MIN, comm_);
  if (same_pattern) {
    potential.Hessian(u0, H_);
    ScopedPhase timed(kHierarchyBuildPhase);
    ++reused_;
    OPTISTEP_PETSC(PetscInfo(pc, "HOT hierarchy: %d built, %d reused\n", built_, reused_));
    multigrid_.SetOperator(H_);
    OPTISTEP_PETSC(KSPSetOperators(ksp_, H_, H_));
    CallReadingOptions(prefix_.c_str(), [&] { return KSPSetUp(ksp_); });
    return;
  }
  OPTISTEP_PETSC(KSPReset(ksp_));
  multigrid_.Reset();
  H_.reset();
  H_.reset(potential.CreateHessian());
  MatType type = nullptr;
  OPTISTEP_PETSC(MatGetType(H_, &type));
  PetscBool shell = PETSC_FALSE;
  OPTISTEP_PETSC(PetscStrcmp(type, MATSHELL, &shell));
  if (shell)
    throw InputError("mpm.matrix_free: HOT's V-cycle needs the assembled Hessian (its coarse levels "
                     "are Galerkin products); expected mpm.matrix_free: false");
  potential.Hessian(u0, H_);
  ScopedPhase timed(kHierarchyBuildPhase);
  multigrid_.SetGrid(pc, *grid, H_);
  multigrid_.SetOperator(H_);
  ++built_;
  OPTISTEP_PETSC(PetscInfo(pc, "HOT hierarchy: %d built, %d reused\n", built_, reused_));
  OPTISTEP_PETSC(KSPSetOperators(ksp_, H_, H_));
  CallReadingOptions(prefix_.c_str(), [&] { return KSPSetUp(ksp_); });
}

int MultigridInitializer::Apply(Vec q, Vec r) {
  int iterations = 0;
  if (!fell_back_) {
    {
      ScopedPhase timed(kVCyclePhase);
      const std::string error = CallInStep(comm_, [&] { return KSPSolve(ksp_, q, r); });
      if (!error.empty()) throw SolveError("the V-cycle: " + error);
    }
    PC pc = nullptr;
    PetscInt levels = 0;
    OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
    OPTISTEP_PETSC(PCMGGetLevels(pc, &levels));
    if (levels > 1) {
      KSP coarse = nullptr;
      PetscInt its = 0;
      OPTISTEP_PETSC(PCMGGetCoarseSolve(pc, &coarse));
      OPTISTEP_PETSC(KSPGetIterationNumber(coarse, &its));
      iterations += static_cast<int>(its);
    }
    PetscScalar curvature = 0.0, qq = 0.0;
    OPTISTEP_PETSC(VecDot(q, r, &curvature));
    OPTISTEP_PETSC(VecDot(q, q, &qq));
    if (curvature > 0.0 || qq == 0.0) return iterations;
    fell_back_ = true;
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    if (rank == 0)
      std::fprintf(stderr,
                   "optistep: warning: %s V-cycle is not positive definite (q^T V q = %.3e for "
                   "|q|^2 = %.3e); this step goes on with the PN-PCG solve (CG on the Hessian, "
                   "point-block Jacobi, relative tolerance 1/2; options -%s*)\n",
                   tet_multigrid_ ? "the embedded-grid multigrid's" : "HOT's", static_cast<double>(curvature),
                   static_cast<double>(qq), fallback_prefix_.c_str());
    OPTISTEP_PETSC(KSPSetOperators(fallback_, H_, H_));
    CallReadingOptions(fallback_prefix_.c_str(), [&] { return KSPSetUp(fallback_); });
  }
  return iterations + SolveCountingIterations(fallback_, q, r);
}

void MultigridInitializer::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer vcycle: one V-cycle of a Galerkin multigrid "
                                                "%s, options prefix -%s\n",
                                        tet_multigrid_ ? "on grids embedding the tet mesh" : "on the MPM grid (HOT Alg. 2)",
                                        prefix_.c_str()));
  if (tet_multigrid_)
    tet_multigrid_->View(viewer);
  else
    multigrid_.View(viewer);
  OPTISTEP_PETSC(KSPView(ksp_, viewer));
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "if a V-cycle is not positive definite: the PN-PCG solve, "
                                                "options prefix -%s\n",
                                        fallback_prefix_.c_str()));
}

}  // namespace optistep

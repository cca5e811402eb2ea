#include "solvers/MultigridInitializer.hpp"

#include <cstdio>

#include "core/Error.hpp"

namespace optistep {

const Phase kVCyclePhase("VCycle");

namespace {

constexpr const char* kPrefix = "hot_";
constexpr const char* kFallbackPrefix = "hot_fallback_";

Embedding SceneEmbedding(const SolverConfig& config) {
  Embedding embedding = Embedding::kLinear;
  ParseEmbedding(config.mg_embedding, &embedding);  // SceneConfig checked the name
  return embedding;
}

}  // namespace

MultigridInitializer::MultigridInitializer(MPI_Comm comm, const SolverConfig& config)
    : comm_(comm), multigrid_(comm, kPrefix, config.mg_levels, SceneEmbedding(config), config.scene_path) {}

MultigridInitializer::~MultigridInitializer() {
  KSPDestroy(&ksp_);
  KSPDestroy(&fallback_);
  MatDestroy(&H_);
}

void MultigridInitializer::SetFromOptions() {
  KSPDestroy(&ksp_);
  KSPDestroy(&fallback_);
  OPTISTEP_PETSC(KSPCreate(comm_, &ksp_));
  OPTISTEP_PETSC(KSPSetOptionsPrefix(ksp_, kPrefix));
  OPTISTEP_PETSC(KSPSetType(ksp_, KSPPREONLY));
  PC pc = nullptr;
  OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
  multigrid_.Configure(pc);
  CallReadingOptions(kPrefix, [&] { return KSPSetFromOptions(ksp_); });
  CallReadingOptions(kFallbackPrefix, [&] {
    PetscCall(KSPCreate(comm_, &fallback_));
    PetscCall(KSPSetOptionsPrefix(fallback_, kFallbackPrefix));
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
    CallReadingOptions(kPrefix, [&] { return KSPSetUp(ksp_); });
    return;
  }
  OPTISTEP_PETSC(KSPReset(ksp_));
  multigrid_.Reset();
  MatDestroy(&H_);
  H_ = potential.CreateHessian();
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
  CallReadingOptions(kPrefix, [&] { return KSPSetUp(ksp_); });
}

int MultigridInitializer::Apply(Vec q, Vec r) {
  int iterations = 0;
  if (!fell_back_) {
    {
      ScopedPhase timed(kVCyclePhase);
      OPTISTEP_PETSC(KSPSolve(ksp_, q, r));
    }
    if (multigrid_.levels() > 1) {
      PC pc = nullptr;
      KSP coarse = nullptr;
      PetscInt its = 0;
      OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
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
                   "optistep: warning: HOT's V-cycle is not positive definite (q^T V q = %.3e for "
                   "|q|^2 = %.3e); this step goes on with the PN-PCG solve (CG on the Hessian, "
                   "point-block Jacobi, relative tolerance 1/2; options -%s*)\n",
                   static_cast<double>(curvature), static_cast<double>(qq), kFallbackPrefix);
    OPTISTEP_PETSC(KSPSetOperators(fallback_, H_, H_));
    CallReadingOptions(kFallbackPrefix, [&] { return KSPSetUp(fallback_); });
  }
  OPTISTEP_PETSC(KSPSolve(fallback_, q, r));
  PetscInt its = 0;
  OPTISTEP_PETSC(KSPGetIterationNumber(fallback_, &its));
  return iterations + static_cast<int>(its);
}

void MultigridInitializer::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer vcycle: one V-cycle of a Galerkin multigrid "
                                                "on the MPM grid (HOT Alg. 2), options prefix -%s\n",
                                        kPrefix));
  multigrid_.View(viewer);
  OPTISTEP_PETSC(KSPView(ksp_, viewer));
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "if a V-cycle is not positive definite: the PN-PCG solve, "
                                                "options prefix -%s\n",
                                        kFallbackPrefix));
}

}  // namespace optistep

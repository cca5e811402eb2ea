#include "solvers/Initializer.hpp"

#include "core/Error.hpp"

namespace optistep {

const Phase kInitializerSetUpPhase("InitializerSetUp");
const Phase kInitializerApplyPhase("InitializerApply");

int SolveCountingIterations(KSP ksp, Vec q, Vec r) {
  OPTISTEP_PETSC(KSPSolve(ksp, q, r));
  PetscInt its = 0;
  OPTISTEP_PETSC(KSPGetIterationNumber(ksp, &its));
  return static_cast<int>(its);
}

KSP CreateCholeskyKsp(MPI_Comm comm, const std::string& prefix, MatSolverType package) {
  KSP ksp = nullptr;
  CallReadingOptions(prefix, [&] {
    PetscCall(KSPCreate(comm, &ksp));
    PetscCall(KSPSetOptionsPrefix(ksp, prefix.c_str()));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PC pc = nullptr;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCCHOLESKY));
    PetscCall(PCFactorSetMatSolverType(pc, package));
    PetscCall(KSPSetFromOptions(ksp));
    return PetscErrorCode(0);
  });
  return ksp;
}

}  // namespace optistep

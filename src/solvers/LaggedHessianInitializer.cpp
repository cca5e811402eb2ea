#include "solvers/LaggedHessianInitializer.hpp"

#include <utility>

#include "core/Error.hpp"

namespace optistep {

LaggedHessianInitializer::~LaggedHessianInitializer() = default;

void LaggedHessianInitializer::SetFromOptions() {
  ksp_.reset();
  CallReadingOptions("lbfgsh_", [&] {
    PetscCall(KSPCreate(comm_, ksp_.out()));
    PetscCall(KSPSetOptionsPrefix(ksp_, "lbfgsh_"));
    PetscCall(KSPSetType(ksp_, diagonal_only_ ? KSPPREONLY : KSPCG));
    PC pc = nullptr;
    PetscCall(KSPGetPC(ksp_, &pc));
    PetscCall(PCSetType(pc, defaults_.pc.c_str()));
    PetscCall(KSPSetTolerances(ksp_, 0.5, 0.0, PETSC_DEFAULT, 10000));
    PetscCall(KSPSetFromOptions(ksp_));
    return PetscErrorCode(0);
  });
  AbandonableKrylov(ksp_);
}

void LaggedHessianInitializer::SetUp(IncrementalPotential& potential, Vec u0) {
  // The vector layout changes between MPM steps: the KSP keeps work vectors of the old
  // one, and the potential hands out a new Hessian matrix every step. A FEM potential
  // hands out its one matrix, refilled in place: the KSP is kept, so that a
  // preconditioner whose structure follows the nonzero pattern keeps it (a
  // factorization's symbolic phase, GAMG's aggregates) while the pattern holds.
  OwnedMat H(potential.CreateHessian());
  if (H.get() != H_.get()) {
    OPTISTEP_PETSC(KSPReset(ksp_));
    H_ = std::move(H);
  }  // else H gives up the reference CreateHessian added
  potential.Hessian(u0, H_);
  OPTISTEP_PETSC(KSPSetOperators(ksp_, H_, H_));
  CallReadingOptions("lbfgsh_", [&] { return KSPSetUp(ksp_); });
}

int LaggedHessianInitializer::Apply(Vec q, Vec r) { return SolveCountingIterations(ksp_, q, r); }

void LaggedHessianInitializer::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer %s: the SPD-projected Hessian at the "
                                                "step's start (LBFGS-H), options prefix -lbfgsh_\n",
                                        Type()));
  OPTISTEP_PETSC(KSPView(ksp_, viewer));
}

}  // namespace optistep

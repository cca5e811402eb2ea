#include "solvers/ProjectiveDynamicsInitializer.hpp"

#include "core/Error.hpp"

namespace optistep {

ProjectiveDynamicsInitializer::~ProjectiveDynamicsInitializer() = default;

void ProjectiveDynamicsInitializer::SetFromOptions() {
  ksp_.reset();
  ksp_.reset(CreateCholeskyKsp(comm_, "lbfgspd_", MATSOLVERMUMPS));
  AbandonableKrylov(ksp_);
}

void ProjectiveDynamicsInitializer::SetUp(IncrementalPotential& potential, Vec) {
  // The matrix depends on dt alone: factored again only when dt differs from the last
  // factored one (the first step, a halved step and the step after it).
  if (A_ && potential.StepSize() == factored_dt_) return;
  A_.reset();
  A_.reset(potential.RestShapeMatrix());
  factored_dt_ = potential.StepSize();
  OPTISTEP_PETSC(KSPSetOperators(ksp_, A_, A_));
  CallReadingOptions("lbfgspd_", [&] { return KSPSetUp(ksp_); });
}

int ProjectiveDynamicsInitializer::Apply(Vec q, Vec r) { return SolveCountingIterations(ksp_, q, r); }

void ProjectiveDynamicsInitializer::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer projective_dynamics: the rest-shape "
                                                "matrix M / dt^2 + L (LBFGS-PD, Liu et al. 2017), "
                                                "factored once per dt, options prefix -lbfgspd_\n"));
  OPTISTEP_PETSC(KSPView(ksp_, viewer));
}

}  // namespace optistep

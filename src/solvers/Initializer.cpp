#include "solvers/Initializer.hpp"

#include "core/Error.hpp"
#include "solvers/MultigridInitializer.hpp"

namespace optistep {

const Phase kInitializerSetUpPhase("InitializerSetUp");
const Phase kInitializerApplyPhase("InitializerApply");

namespace {

class IdentityInitializer : public InverseHessianInitializer {
 public:
  const char* Type() const override { return "identity"; }
  void SetUp(IncrementalPotential&, Vec) override {}
  int Apply(Vec q, Vec r) override {
    OPTISTEP_PETSC(VecCopy(q, r));
    return 0;
  }
  void View(PetscViewer viewer) const override {
    OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer identity (H0 = I)\n"));
  }
};

/// LBFGS-H: the lagged SPD-projected Hessian H(u0), solved by a KSP (prefix lbfgsh_).
class LaggedHessianInitializer : public InverseHessianInitializer {
 public:
  /// diagonal_only: the "jacobi" type, one application of the default PC.
  LaggedHessianInitializer(MPI_Comm comm, const MinimizerDefaults& defaults, bool diagonal_only)
      : comm_(comm), defaults_(defaults), diagonal_only_(diagonal_only) {}
  ~LaggedHessianInitializer() override {
    KSPDestroy(&ksp_);
    MatDestroy(&H_);
  }
  const char* Type() const override { return diagonal_only_ ? "jacobi" : "lagged_hessian"; }

  void SetFromOptions() override {
    KSPDestroy(&ksp_);
    CallReadingOptions("lbfgsh_", [&] {
      PetscCall(KSPCreate(comm_, &ksp_));
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

  void SetUp(IncrementalPotential& potential, Vec u0) override {
    // The vector layout changes between MPM steps: the KSP keeps work vectors of the old
    // one, and the potential hands out a new Hessian matrix every step.
    OPTISTEP_PETSC(KSPReset(ksp_));
    MatDestroy(&H_);
    H_ = potential.CreateHessian();
    potential.Hessian(u0, H_);
    OPTISTEP_PETSC(KSPSetOperators(ksp_, H_, H_));
    CallReadingOptions("lbfgsh_", [&] { return KSPSetUp(ksp_); });
  }

  int Apply(Vec q, Vec r) override {
    OPTISTEP_PETSC(KSPSolve(ksp_, q, r));
    PetscInt its = 0;
    OPTISTEP_PETSC(KSPGetIterationNumber(ksp_, &its));
    return static_cast<int>(its);
  }

  void View(PetscViewer viewer) const override {
    OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer %s: the SPD-projected Hessian at the "
                                                  "step's start (LBFGS-H), options prefix -lbfgsh_\n",
                                          Type()));
    OPTISTEP_PETSC(KSPView(ksp_, viewer));
  }

 private:
  MPI_Comm comm_;
  MinimizerDefaults defaults_;
  bool diagonal_only_;
  KSP ksp_ = nullptr;
  Mat H_ = nullptr;
};

}  // namespace

const std::vector<std::string>& InitializerTypes() {
  static const std::vector<std::string> types = {"lagged_hessian", "jacobi", "identity", "vcycle"};
  return types;
}

std::unique_ptr<InverseHessianInitializer> CreateInitializer(MPI_Comm comm, const std::string& type,
                                                             const SolverConfig& config,
                                                             const MinimizerDefaults& defaults,
                                                             const std::string& source) {
  if (type == "identity") return std::make_unique<IdentityInitializer>();
  if (type == "vcycle") return std::make_unique<MultigridInitializer>(comm, config);
  if (type == "lagged_hessian" || type == "jacobi")
    return std::make_unique<LaggedHessianInitializer>(comm, defaults, type == "jacobi");
  std::string known;
  for (const auto& t : InitializerTypes()) known += (known.empty() ? "" : ", ") + t;
  throw InputError(source + ": '" + type + "' is not an L-BFGS initializer (" + known + ")");
}

}  // namespace optistep

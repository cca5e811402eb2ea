#include "solvers/Initializer.hpp"

#include "core/Error.hpp"
#include "solvers/SubdomainInitializer.hpp"
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

/// Collective: r = A^-1 q by ksp; returns its iterations.
int SolveCountingIterations(KSP ksp, Vec q, Vec r) {
  OPTISTEP_PETSC(KSPSolve(ksp, q, r));
  PetscInt its = 0;
  OPTISTEP_PETSC(KSPGetIterationNumber(ksp, &its));
  return static_cast<int>(its);
}

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
    // one, and the potential hands out a new Hessian matrix every step. A FEM potential
    // hands out its one matrix, refilled in place: the KSP is kept, so that a
    // preconditioner whose structure follows the nonzero pattern keeps it (a
    // factorization's symbolic phase, GAMG's aggregates) while the pattern holds.
    Mat H = potential.CreateHessian();
    if (H != H_) {
      OPTISTEP_PETSC(KSPReset(ksp_));
      MatDestroy(&H_);
      H_ = H;
    } else {
      MatDestroy(&H);  // the reference CreateHessian added
    }
    potential.Hessian(u0, H_);
    OPTISTEP_PETSC(KSPSetOperators(ksp_, H_, H_));
    CallReadingOptions("lbfgsh_", [&] { return KSPSetUp(ksp_); });
  }

  int Apply(Vec q, Vec r) override { return SolveCountingIterations(ksp_, q, r); }

  void View(PetscViewer viewer) const override {
    OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer %s: the SPD-projected Hessian at the "
                                                  "step's start (LBFGS-H), options prefix -lbfgsh_\n",
                                          Type()));
    OPTISTEP_PETSC(KSPView(ksp_, viewer));
  }

  Mat LaggedHessian() const override { return H_; }

 private:
  MPI_Comm comm_;
  MinimizerDefaults defaults_;
  bool diagonal_only_;
  KSP ksp_ = nullptr;
  Mat H_ = nullptr;
};

/// LBFGS-PD: the rest-shape matrix M / dt^2 + L (Liu et al. 2017, Sec. 4), factored by a
/// KSP (prefix lbfgspd_) when dt first takes a value and again whenever it changes.
class ProjectiveDynamicsInitializer : public InverseHessianInitializer {
 public:
  explicit ProjectiveDynamicsInitializer(MPI_Comm comm) : comm_(comm) {}
  ~ProjectiveDynamicsInitializer() override {
    KSPDestroy(&ksp_);
    MatDestroy(&A_);
  }
  const char* Type() const override { return "projective_dynamics"; }

  void SetFromOptions() override {
    KSPDestroy(&ksp_);
    ksp_ = CreateCholeskyKsp(comm_, "lbfgspd_", MATSOLVERMUMPS);
    AbandonableKrylov(ksp_);
  }

  void SetUp(IncrementalPotential& potential, Vec) override {
    // The matrix depends on dt alone: factored again only when dt differs from the last
    // factored one (the first step, a halved step and the step after it).
    if (A_ && potential.StepSize() == factored_dt_) return;
    MatDestroy(&A_);
    A_ = potential.RestShapeMatrix();
    factored_dt_ = potential.StepSize();
    OPTISTEP_PETSC(KSPSetOperators(ksp_, A_, A_));
    CallReadingOptions("lbfgspd_", [&] { return KSPSetUp(ksp_); });
  }

  int Apply(Vec q, Vec r) override { return SolveCountingIterations(ksp_, q, r); }

  void View(PetscViewer viewer) const override {
    OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer projective_dynamics: the rest-shape "
                                                  "matrix M / dt^2 + L (LBFGS-PD, Liu et al. 2017), "
                                                  "factored once per dt, options prefix -lbfgspd_\n"));
    OPTISTEP_PETSC(KSPView(ksp_, viewer));
  }

 private:
  MPI_Comm comm_;
  KSP ksp_ = nullptr;
  Mat A_ = nullptr;
  double factored_dt_ = 0.0;
};

}  // namespace

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

const std::vector<std::string>& InitializerTypes() {
  static const std::vector<std::string> types = {"lagged_hessian", "projective_dynamics", "subdomains",
                                                 "jacobi", "identity", "vcycle"};
  return types;
}

std::unique_ptr<InverseHessianInitializer> CreateInitializer(MPI_Comm comm, const std::string& type,
                                                             const SolverConfig& config,
                                                             const MinimizerDefaults& defaults,
                                                             const std::string& source) {
  if (type == "identity") return std::make_unique<IdentityInitializer>();
  if (type == "vcycle") return std::make_unique<MultigridInitializer>(comm, config, defaults);
  if (type == "lagged_hessian" || type == "jacobi")
    return std::make_unique<LaggedHessianInitializer>(comm, defaults, type == "jacobi");
  if (type == "projective_dynamics") return std::make_unique<ProjectiveDynamicsInitializer>(comm);
  if (type == "subdomains") return std::make_unique<SubdomainInitializer>(comm, config.dot, defaults);
  std::string known;
  for (const auto& t : InitializerTypes()) known += (known.empty() ? "" : ", ") + t;
  throw InputError(source + ": '" + type + "' is not an L-BFGS initializer (" + known + ")");
}

}  // namespace optistep

#include "solvers/NewtonMinimizer.hpp"

#include <cmath>
#include <string>

#include "core/Error.hpp"

namespace optistep {

const Phase kLinearSolvePhase("LinearSolve");

NewtonMinimizer::NewtonMinimizer(MPI_Comm comm, const SolverConfig& config,
                                 const MinimizerDefaults& defaults, MinimizerMethod type)
    : Minimizer(comm, "newton_", "Projected Newton, PN-PCG (Gast et al. 2015, Sec. 3.1)", config),
      type_(type),
      defaults_(defaults),
      config_(config),
      kappa_(config.kappa),
      step_clamp_(config.step_clamp),
      forcing_sigma_(config.forcing_sigma),
      forcing_(config.forcing) {}

NewtonMinimizer::~NewtonMinimizer() = default;

PetscErrorCode NewtonMinimizer::AddOptions(PetscOptionItems* PetscOptionsObject) {
  PetscCall(PetscOptionsReal("-kappa", "Downhill check: -g.d >= kappa |g| |d|, else -g (Gast Sec. 3.1: "
                             "1e-2; MPM 1e-5, HOT's code) (scene: solver.kappa)",
                             "", kappa_, &kappa_, nullptr));
  PetscCall(PetscOptionsReal("-step_clamp", "Largest Newton step |d| in the unknown's units (Gast "
                             "Sec. 3.1: 1e3) (scene: solver.step_clamp)",
                             "", step_clamp_, &step_clamp_, nullptr));
  PetscCall(PetscOptionsReal("-forcing_sigma", "sigma of the CG forcing term min(1/2, sigma sqrt(max(|g|, "
                             "floor))) (scene: solver.forcing_sigma)",
                             "", forcing_sigma_, &forcing_sigma_, nullptr));
  const std::vector<std::string>& names = ChoiceNames(Forcing{});
  const char* const kForcings[] = {names[0].c_str(), names[1].c_str(), names[2].c_str()};
  PetscInt forcing = static_cast<PetscInt>(forcing_);
  PetscCall(PetscOptionsEList("-forcing", "What |g| in the forcing term measures (Gast Sec. 3.1; HOT "
                              "Sec. 5.3) (scene: solver.forcing)",
                              "", kForcings, 3, kForcings[forcing], &forcing, nullptr));
  forcing_ = static_cast<Forcing>(forcing);
  if (!(kappa_ > 0.0 && kappa_ < 1.0)) throw InputError("-kappa: expected a number in (0, 1)");
  if (!(step_clamp_ > 0.0)) throw InputError("-step_clamp: expected a positive number");
  if (!(forcing_sigma_ > 0.0)) throw InputError("-forcing_sigma: expected a positive number");
  return 0;
}

void NewtonMinimizer::SetUpObjects() {
  ksp_.reset();
  multigrid_.reset();
  tet_multigrid_.reset();
  // The grid multigrid's defaults go on the PC before the options are read: decide now
  // whether the PC will be mg.
  std::string pc_type = type_ == MinimizerMethod::kNewtonMg ? PCMG : defaults_.pc;
  char given[64] = "";
  PetscBool set = PETSC_FALSE;
  OPTISTEP_PETSC(PetscOptionsGetString(nullptr, prefix_.c_str(), "-pc_type", given, sizeof given, &set));
  if (set) pc_type = given;
  if (pc_type == PCMG && defaults_.grid) {
    Embedding embedding = Embedding::kLinear;
    ParseEmbedding(config_.mg_embedding, &embedding);
    multigrid_ = std::make_unique<GridMultigrid>(comm_, prefix_, config_.mg_levels, embedding, config_.scene_path);
  } else if (pc_type == PCMG) {
    tet_multigrid_ = std::make_unique<TetGridMultigrid>(comm_, prefix_, config_, true);
    tet_multigrid_->CreateInner();
  }
  CallReadingOptions(prefix_, [&] {
    PetscCall(KSPCreate(comm_, ksp_.out()));
    PetscCall(KSPSetOptionsPrefix(ksp_, prefix_.c_str()));
    PetscCall(KSPSetType(ksp_, KSPCG));
    PC pc = nullptr;
    PetscCall(KSPGetPC(ksp_, &pc));
    if (multigrid_)
      multigrid_->Configure(pc);
    else if (tet_multigrid_)
      PetscCall(PCSetType(pc, PCSHELL));  // the multigrid wraps itself in it below
    else
      PetscCall(PCSetType(pc, defaults_.pc.c_str()));
    PetscCall(KSPSetInitialGuessNonzero(ksp_, PETSC_FALSE));
    PetscCall(KSPSetTolerances(ksp_, 0.5, 0.0, PETSC_DEFAULT, 10000));
    PetscCall(KSPSetFromOptions(ksp_));
    if (tet_multigrid_) tet_multigrid_->WrapAsShell(pc);
    PetscBool is_gamg = PETSC_FALSE, reuse_given = PETSC_FALSE;
    PetscCall(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), PCGAMG, &is_gamg));
    PetscCall(PetscOptionsHasName(nullptr, prefix_.c_str(), "-pc_gamg_reuse_interpolation", &reuse_given));
    gamg_reuse_in_step_ = is_gamg && !reuse_given;
    // HOT's inexact CG measures residuals in the preconditioner's norm sqrt(r^T B r), CG's
    // "natural" norm (other Krylov methods keep their own).
    PetscBool is_cg = PETSC_FALSE;
    PetscCall(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ksp_.get()), KSPCG, &is_cg));
    if (forcing_ == Forcing::kPreconditioned && is_cg) PetscCall(KSPSetNormType(ksp_, KSP_NORM_NATURAL));
    return PetscErrorCode(0);
  });
  AbandonableKrylov(ksp_);
}

void NewtonMinimizer::ViewMethod(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer,
                                        "kappa %g, step clamp %g, forcing %s (sigma %g), default PC %s\n",
                                        kappa_, step_clamp_, ToString(forcing_).c_str(), forcing_sigma_,
                                        defaults_.pc.c_str()));
  if (multigrid_) multigrid_->View(viewer);
  if (tet_multigrid_) tet_multigrid_->View(viewer);
  OPTISTEP_PETSC(KSPView(ksp_, viewer));
}

double NewtonMinimizer::ForcingTerm(Vec g, double gnorm, double cn, double tolerance_norm,
                                    Vec scratch) {
  // eta = min(1/2, sigma sqrt(max(measure, floor))) (Gast Sec. 3.1), with |g| measured as
  // solver.forcing says (see SolverConfig::forcing).
  double measure = gnorm, floor = termination_.tau();
  if (forcing_ == Forcing::kCharacteristicNorm) {
    measure = termination_.epsilon() * cn;
    floor = termination_.epsilon();
  } else if (forcing_ == Forcing::kPreconditioned) {
    // HOT Sec. 5.3: |g|_B = sqrt(g^T B g), the CG residual norm at the start (the CG
    // norm type is "natural"), floored by the norm of the node-wise CN tolerances.
    PC pc = nullptr;
    OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
    OPTISTEP_PETSC(PCApply(pc, g, scratch));
    PetscScalar gBg = 0.0;
    OPTISTEP_PETSC(VecDot(g, scratch, &gBg));
    measure = std::sqrt(std::max(0.0, static_cast<double>(gBg)));
    floor = tolerance_norm;
  }
  return std::min(0.5, forcing_sigma_ * std::sqrt(std::max(measure, floor)));
}

SolveReport NewtonMinimizer::Minimize(IncrementalPotential& potential, Vec u) {
  SolveReport report;
  // A new grid every MPM step: the multigrid's levels are built afresh.
  if (LayoutChanged(u) || multigrid_) OPTISTEP_PETSC(KSPReset(ksp_));
  if (multigrid_) multigrid_->Reset();
  bool levels_built = false;
  OwnedVec g, d, work;
  OPTISTEP_PETSC(VecDuplicate(u, g.out()));
  OPTISTEP_PETSC(VecDuplicate(u, d.out()));
  OPTISTEP_PETSC(VecDuplicate(u, work.out()));
  OwnedMat H(potential.CreateHessian());
  termination_.SetUp(potential, u);
  // The preconditioned forcing term's floor; sticky nodes carry an infinite tolerance and
  // do not count towards it.
  const double tolerance_norm = forcing_ == Forcing::kPreconditioned ? termination_.ToleranceNorm() : 0.0;
  line_search_.SetPotential(&potential);

  // Constraint collisions (Gast Sec. 3.2): every iterate projected, its active set
  // registered, E and g taken there; without them the start is evaluated as it is.
  double energy = 0.0;
  const bool constrained = potential.ProjectIterate(u, g, &energy);
  if (!constrained) energy = potential.EnergyAndGradient(u, g);
  Residual residual = termination_.Measure(u, g);
  Monitor("  newton   0  E %.10e  |g| %.3e  cn %.3e  rigid %.3e\n", energy, residual.gradient_norm,
          residual.cn, residual.rigid);

  for (;;) {
    if (Stop(&report, energy, residual)) break;
    const double gnorm = residual.gradient_norm;

    // Newton direction: H d = -g, CG from zero with the adaptive forcing term.
    potential.Hessian(u, H);
    Vec rhs = work;
    OPTISTEP_PETSC(VecCopy(g, rhs));
    OPTISTEP_PETSC(VecScale(rhs, -1.0));
    {
      // The multigrid's Galerkin products are formed again from every Hessian (the embedded-grid
      // multigrid times its own).
      std::unique_ptr<ScopedPhase> timed;
      if (multigrid_) timed = std::make_unique<ScopedPhase>(kHierarchyBuildPhase);
      if (tet_multigrid_) tet_multigrid_->SetUp(tet_multigrid_->inner_pc(), potential, H, report.iterations == 0);
      if (multigrid_ && !levels_built) {
        if (!potential.Grid())
          throw InputError("-" + prefix_ + "pc_type mg: the grid multigrid needs an MPM grid");
        PC pc = nullptr;
        OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
        multigrid_->SetGrid(pc, *potential.Grid(), H);
        levels_built = true;
      }
      if (multigrid_) multigrid_->SetOperator(H);
      OPTISTEP_PETSC(KSPSetOperators(ksp_, H, H));
      if (gamg_reuse_in_step_) {
        PC pc = nullptr;
        OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
        OPTISTEP_PETSC(PCGAMGSetReuseInterpolation(pc, report.iterations == 0 ? PETSC_FALSE : PETSC_TRUE));
      }
      // The preconditioner is made here: some options are judged only now (a factorization
      // package, a preconditioner that does not take the matrix format).
      CallReadingOptions(prefix_, [&] { return KSPSetUp(ksp_); });
    }
    // d is free until KSPSolve overwrites it: scratch for the forcing term.
    const double rtol = ForcingTerm(g, gnorm, residual.cn, tolerance_norm, d);
    OPTISTEP_PETSC(KSPSetTolerances(ksp_, rtol, 0.0, PETSC_DEFAULT, PETSC_DEFAULT));
    KSPConvergedReason ksp_reason;
    PetscInt ksp_its = 0;
    std::string solve_error;
    {
      ScopedPhase timed(kLinearSolvePhase);
      solve_error = CallInStep(comm_, [&] { return KSPSolve(ksp_, rhs, d); });
    }
    if (!solve_error.empty()) {  // a failed step, retried with dt/2
      report.reason = "the linear solve raised " + solve_error;
      break;
    }
    OPTISTEP_PETSC(KSPGetConvergedReason(ksp_, &ksp_reason));
    OPTISTEP_PETSC(KSPGetIterationNumber(ksp_, &ksp_its));
    report.linear_iterations += static_cast<int>(ksp_its);
    if (Abandon(&report, false)) break;  // d is a solve cut short
    PetscReal dnorm = 0.0;
    OPTISTEP_PETSC(VecNorm(d, NORM_2, &dnorm));
    // Indefiniteness on the first CG iteration leaves d = 0: take the right-hand side.
    if (ksp_its == 0 || dnorm == 0.0 || std::isnan(dnorm)) {
      OPTISTEP_PETSC(VecCopy(rhs, d));
      dnorm = gnorm;
    }

    // The Jacobi-preconditioned CG leaves the tangent planes of active nodes by round-off.
    if (constrained) potential.Project(d);
    // Downhill check (Gast Sec. 3.1): fall back to steepest descent.
    PetscScalar gd = 0.0;
    OPTISTEP_PETSC(VecDot(g, d, &gd));
    if (-gd < kappa_ * gnorm * dnorm) {
      OPTISTEP_PETSC(VecCopy(g, d));
      OPTISTEP_PETSC(VecScale(d, -1.0));
      dnorm = gnorm;
    }
    if (dnorm > step_clamp_) OPTISTEP_PETSC(VecScale(d, step_clamp_ / dnorm));

    const LineSearch::Result searched = line_search_.Apply(u, energy, g, d, work);
    if (!AcceptSearch(potential, u, g, searched, residual, &energy, &report)) break;
    residual = termination_.Measure(u, g);
    Monitor("  newton %3d  E %.10e  |g| %.3e  cn %.3e  rigid %.3e  cg %3d (%s)  alpha %.3g\n",
            report.iterations, energy, residual.gradient_norm, residual.cn, residual.rigid,
            static_cast<int>(ksp_its), KSPConvergedReasons[ksp_reason], searched.step);
  }

  return report;
}

}  // namespace optistep

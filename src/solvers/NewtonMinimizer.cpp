#include "solvers/NewtonMinimizer.hpp"

#include <cmath>
#include <exception>
#include <string>

#include "core/Error.hpp"
#include "core/Phases.hpp"

namespace optistep {
namespace {

/// Context handed to the TaoLineSearch callbacks.
struct LineSearchContext {
  IncrementalPotential* potential = nullptr;
};

PetscErrorCode ObjectiveAndGradient(TaoLineSearch, Vec x, PetscReal* f, Vec g, void* ctx) {
  auto* c = static_cast<LineSearchContext*>(ctx);
  try {
    *f = c->potential->EnergyAndGradient(x, g);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

PetscErrorCode Objective(TaoLineSearch, Vec x, PetscReal* f, void* ctx) {
  auto* c = static_cast<LineSearchContext*>(ctx);
  try {
    *f = c->potential->Energy(x);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

}  // namespace

NewtonMinimizer::NewtonMinimizer(MPI_Comm comm, const SolverConfig& config, PCType default_pc)
    : comm_(comm),
      use_cn_(config.termination == "characteristic_norm"),
      tau_(config.tau),
      cn_epsilon_(config.cn_epsilon),
      max_iterations_(config.max_iterations),
      kappa_(config.kappa),
      step_clamp_(config.step_clamp),
      forcing_sigma_(config.forcing_sigma),
      forcing_(config.forcing) {
  PetscInt max_it = max_iterations_;
  OPTISTEP_PETSC(PetscOptionsGetInt(nullptr, "newton_", "-max_it", &max_it, nullptr));
  max_iterations_ = static_cast<int>(max_it);
  OPTISTEP_PETSC(PetscOptionsGetReal(nullptr, "newton_", "-kappa", &kappa_, nullptr));
  OPTISTEP_PETSC(PetscOptionsGetReal(nullptr, "newton_", "-step_clamp", &step_clamp_, nullptr));
  OPTISTEP_PETSC(
      PetscOptionsGetReal(nullptr, "newton_", "-forcing_sigma", &forcing_sigma_, nullptr));
  OPTISTEP_PETSC(PetscOptionsGetReal(nullptr, "newton_", "-tau", &tau_, nullptr));
  char forcing[64] = "";
  PetscBool forcing_set = PETSC_FALSE;
  OPTISTEP_PETSC(PetscOptionsGetString(nullptr, "newton_", "-forcing", forcing, sizeof forcing,
                                       &forcing_set));
  if (forcing_set) forcing_ = forcing;
  if (forcing_ != "gradient" && forcing_ != "characteristic_norm" && forcing_ != "preconditioned")
    throw InputError("-newton_forcing: '" + forcing_ +
                     "' is not one of gradient, characteristic_norm, preconditioned");
  OPTISTEP_PETSC(PetscOptionsGetBool(nullptr, "newton_", "-monitor", &monitor_, nullptr));
  PetscBool absolute = PETSC_FALSE;
  OPTISTEP_PETSC(PetscOptionsGetBool(nullptr, "newton_", "-absolute_tau", &absolute, nullptr));
  if (absolute) use_cn_ = false;

  OPTISTEP_PETSC(KSPCreate(comm_, &ksp_));
  OPTISTEP_PETSC(KSPSetOptionsPrefix(ksp_, "newton_"));
  OPTISTEP_PETSC(KSPSetType(ksp_, KSPCG));
  PC pc = nullptr;
  OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
  OPTISTEP_PETSC(PCSetType(pc, default_pc));
  OPTISTEP_PETSC(KSPSetInitialGuessNonzero(ksp_, PETSC_FALSE));
  OPTISTEP_PETSC(KSPSetTolerances(ksp_, 0.5, 0.0, PETSC_DEFAULT, 10000));
  OPTISTEP_PETSC(KSPSetFromOptions(ksp_));
  // HOT's inexact CG measures residuals in the preconditioner's norm sqrt(r^T B r), CG's
  // "natural" norm (other Krylov methods keep their own).
  PetscBool is_cg = PETSC_FALSE;
  OPTISTEP_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ksp_), KSPCG, &is_cg));
  if (forcing_ == "preconditioned" && is_cg) OPTISTEP_PETSC(KSPSetNormType(ksp_, KSP_NORM_NATURAL));

  CreateLineSearch();
}

void NewtonMinimizer::CreateLineSearch() {
  TaoLineSearchDestroy(&line_search_);
  OPTISTEP_PETSC(TaoLineSearchCreate(comm_, &line_search_));
  OPTISTEP_PETSC(TaoLineSearchSetOptionsPrefix(line_search_, "newton_"));
  OPTISTEP_PETSC(TaoLineSearchSetType(line_search_, TAOLINESEARCHMT));
  OPTISTEP_PETSC(TaoLineSearchSetFromOptions(line_search_));
}

NewtonMinimizer::~NewtonMinimizer() {
  KSPDestroy(&ksp_);
  TaoLineSearchDestroy(&line_search_);
}

double NewtonMinimizer::CharacteristicNormResidual(Vec g, Vec w, PetscInt n_nodes, Vec work) {
  OPTISTEP_PETSC(VecPointwiseDivide(work, g, w));
  PetscReal norm = 0.0;
  OPTISTEP_PETSC(VecNorm(work, NORM_2, &norm));
  return norm / std::sqrt(static_cast<double>(n_nodes));
}

double NewtonMinimizer::ForcingTerm(Vec g, double gnorm, double cn, double tolerance_norm,
                                    Vec scratch) {
  // eta = min(1/2, sigma sqrt(max(measure, floor))) (Gast Sec. 3.1), with |g| measured as
  // the scene's solver.forcing says (see SolverConfig::forcing).
  double measure = gnorm, floor = tau_;
  if (forcing_ == "characteristic_norm") {
    measure = cn_epsilon_ * cn;
    floor = cn_epsilon_;
  } else if (forcing_ == "preconditioned") {
    // HOT Sec. 5.3: |g|_B = sqrt(g^T B g), the CG residual norm at the start (the CG
    // norm type is "natural"), floored by the norm of the node-wise CN tolerances.
    PC pc = nullptr;
    OPTISTEP_PETSC(KSPSetUp(ksp_));
    OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
    OPTISTEP_PETSC(PCApply(pc, g, scratch));
    PetscScalar gBg = 0.0;
    OPTISTEP_PETSC(VecDot(g, scratch, &gBg));
    measure = std::sqrt(std::max(0.0, static_cast<double>(gBg)));
    floor = tolerance_norm;
  }
  return std::min(0.5, forcing_sigma_ * std::sqrt(std::max(measure, floor)));
}

double NewtonMinimizer::FiniteNorm(Vec w) {
  const PetscScalar* a = nullptr;
  PetscInt n = 0;
  OPTISTEP_PETSC(VecGetLocalSize(w, &n));
  OPTISTEP_PETSC(VecGetArrayRead(w, &a));
  double sum = 0.0;
  for (PetscInt k = 0; k < n; ++k)
    if (std::isfinite(a[k])) sum += a[k] * a[k];
  OPTISTEP_PETSC(VecRestoreArrayRead(w, &a));
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm_);
  return std::sqrt(sum);
}

bool NewtonMinimizer::Converged(double gnorm, double cn_residual) const {
  return use_cn_ ? cn_residual < 1.0 : gnorm < tau_;
}

SolveReport NewtonMinimizer::Minimize(IncrementalPotential& potential, Vec u) {
  SolveReport report;
  // MPM problems change size every step: the KSP and the line search keep work objects
  // of the old size, so they start afresh when the layout changes.
  PetscInt local_size = 0;
  OPTISTEP_PETSC(VecGetLocalSize(u, &local_size));
  int changed = local_size != last_local_size_ ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_MAX, comm_);
  if (changed && last_local_size_ >= 0) {
    OPTISTEP_PETSC(KSPReset(ksp_));
    CreateLineSearch();
  }
  last_local_size_ = local_size;
  Vec g = nullptr, d = nullptr, w = nullptr, work = nullptr;
  OPTISTEP_PETSC(VecDuplicate(u, &g));
  OPTISTEP_PETSC(VecDuplicate(u, &d));
  OPTISTEP_PETSC(VecDuplicate(u, &w));
  OPTISTEP_PETSC(VecDuplicate(u, &work));
  Mat H = potential.CreateHessian();
  potential.CharacteristicNormWeights(w);
  const PetscInt n_nodes = potential.GlobalNodeCount();
  // The preconditioned forcing term's floor; sticky nodes carry an infinite tolerance and
  // do not count towards it.
  const double tolerance_norm = forcing_ == "preconditioned" ? FiniteNorm(w) : 0.0;

  LineSearchContext ctx{&potential};
  OPTISTEP_PETSC(TaoLineSearchSetObjectiveAndGradientRoutine(line_search_, ObjectiveAndGradient,
                                                             &ctx));
  OPTISTEP_PETSC(TaoLineSearchSetObjectiveRoutine(line_search_, Objective, &ctx));

  double energy = potential.EnergyAndGradient(u, g);
  PetscReal gnorm = 0.0;
  OPTISTEP_PETSC(VecNorm(g, NORM_2, &gnorm));
  double cn = CharacteristicNormResidual(g, w, n_nodes, work);

  for (;;) {
    report.energy = energy;
    report.gradient_norm = gnorm;
    report.cn_residual = cn;
    if (std::isnan(energy) || std::isnan(gnorm)) {
      report.reason = "NaN in energy or gradient";
      break;
    }
    // At least one Newton step: a start that already meets the (RMS) characteristic norm
    // can still be far off on a few nodes, and accepting it unchanged freezes slow motion.
    if (report.iterations >= 1 && Converged(gnorm, cn)) {
      report.converged = true;
      report.reason = "converged";
      break;
    }
    if (report.iterations >= max_iterations_) {
      report.reason = "iteration cap (" + std::to_string(max_iterations_) + ") reached";
      break;
    }

    // Newton direction: H d = -g, CG from zero with the adaptive forcing term.
    potential.Hessian(u, H);
    Vec rhs = work;
    OPTISTEP_PETSC(VecCopy(g, rhs));
    OPTISTEP_PETSC(VecScale(rhs, -1.0));
    OPTISTEP_PETSC(KSPSetOperators(ksp_, H, H));
    // d is free until KSPSolve overwrites it: scratch for the forcing term.
    const double rtol = ForcingTerm(g, gnorm, cn, tolerance_norm, d);
    OPTISTEP_PETSC(KSPSetTolerances(ksp_, rtol, 0.0, PETSC_DEFAULT, PETSC_DEFAULT));
    KSPConvergedReason ksp_reason;
    PetscInt ksp_its = 0;
    {
      ScopedPhase phase(Phase::kLinearSolve);
      OPTISTEP_PETSC(KSPSolve(ksp_, rhs, d));
    }
    OPTISTEP_PETSC(KSPGetConvergedReason(ksp_, &ksp_reason));
    OPTISTEP_PETSC(KSPGetIterationNumber(ksp_, &ksp_its));
    report.linear_iterations += static_cast<int>(ksp_its);
    PetscReal dnorm = 0.0;
    OPTISTEP_PETSC(VecNorm(d, NORM_2, &dnorm));
    // Indefiniteness on the first CG iteration leaves d = 0: take the right-hand side.
    if (ksp_its == 0 || dnorm == 0.0 || std::isnan(dnorm)) {
      OPTISTEP_PETSC(VecCopy(rhs, d));
      dnorm = gnorm;
    }

    // Downhill check (Gast Sec. 3.1): fall back to steepest descent.
    PetscScalar gd = 0.0;
    OPTISTEP_PETSC(VecDot(g, d, &gd));
    if (-gd < kappa_ * gnorm * dnorm) {
      OPTISTEP_PETSC(VecCopy(g, d));
      OPTISTEP_PETSC(VecScale(d, -1.0));
      dnorm = gnorm;
    }
    if (dnorm > step_clamp_) OPTISTEP_PETSC(VecScale(d, step_clamp_ / dnorm));

    // Strong-Wolfe line search from alpha = 1.
    const double energy_before = energy;
    OPTISTEP_PETSC(VecCopy(u, work));  // keep the iterate in case the search fails
    PetscReal f = energy, step = 0.0;
    TaoLineSearchConvergedReason ls_reason;
    {
      ScopedPhase phase(Phase::kLineSearch);
      OPTISTEP_PETSC(TaoLineSearchSetInitialStepLength(line_search_, 1.0));
      OPTISTEP_PETSC(TaoLineSearchApply(line_search_, u, &f, g, d, &step, &ls_reason));
    }
    ++report.iterations;
    if (ls_reason < 0 && !(f < energy_before)) {
      // No decrease: restore the last good iterate and its gradient.
      OPTISTEP_PETSC(VecCopy(work, u));
      energy = potential.EnergyAndGradient(u, g);
      report.energy = energy;
      report.reason = std::isnan(static_cast<double>(f)) ? "NaN in line search"
                                                         : "line search found no decrease";
      break;
    }
    energy = f;
    OPTISTEP_PETSC(VecNorm(g, NORM_2, &gnorm));
    cn = CharacteristicNormResidual(g, w, n_nodes, work);
    if (monitor_)
      OPTISTEP_PETSC(PetscPrintf(comm_,
                                 "  newton %3d  E %.10e  |g| %.3e  cn %.3e  cg %3d (%s)  alpha %.3g\n",
                                 report.iterations, energy, static_cast<double>(gnorm), cn,
                                 static_cast<int>(ksp_its), KSPConvergedReasons[ksp_reason],
                                 static_cast<double>(step)));
  }

  MatDestroy(&H);
  VecDestroy(&g);
  VecDestroy(&d);
  VecDestroy(&w);
  VecDestroy(&work);
  return report;
}

}  // namespace optistep

#include "solvers/LineSearch.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "core/Error.hpp"

namespace optistep {

const Phase kLineSearchPhase("LineSearch");

namespace {
/// Relative round-off of an energy evaluation: a sum over elements or particles of terms
/// of both signs, each rounded; 64 eps_mach (1.4e-14) leaves room for some thousands of terms
/// summed pairwise by MPI and PETSc without letting a real rise through.
constexpr double kEnergyRoundOff = 64.0 * std::numeric_limits<double>::epsilon();
/// PETSc's More-Thuente accepts f <= f_0 + c1 alpha g^T d + 1e-10 |f_0| (morethuente.c).
constexpr double kGuardMargin = 1e-10;
}  // namespace

namespace {

PetscErrorCode ObjectiveAndGradient(TaoLineSearch, Vec x, PetscReal* f, Vec g, void* ctx) {
  try {
    *f = static_cast<IncrementalPotential*>(ctx)->EnergyAndGradient(x, g);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

PetscErrorCode Objective(TaoLineSearch, Vec x, PetscReal* f, void* ctx) {
  try {
    *f = static_cast<IncrementalPotential*>(ctx)->Energy(x);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

}  // namespace

LineSearch::LineSearch(MPI_Comm comm, const std::string& prefix, const char* default_type)
    : comm_(comm), prefix_(prefix), default_type_(default_type) {}

LineSearch::~LineSearch() = default;

void LineSearch::Reset() {
  tao_ls_.reset();
  OPTISTEP_PETSC(TaoLineSearchCreate(comm_, tao_ls_.out()));
  OPTISTEP_PETSC(TaoLineSearchSetOptionsPrefix(tao_ls_, prefix_.c_str()));
  OPTISTEP_PETSC(TaoLineSearchSetType(tao_ls_, default_type_));
  OPTISTEP_PETSC(TaoLineSearchSetFromOptions(tao_ls_));
  potential_ = nullptr;
}

void LineSearch::SetPotential(IncrementalPotential* potential) {
  potential_ = potential;
  // Armijo's reference value is the energy of its last accepted step, which belongs to the
  // previous solve (another time step's potential). More-Thuente keeps nothing.
  OPTISTEP_PETSC(TaoLineSearchReset(tao_ls_));
  OPTISTEP_PETSC(TaoLineSearchSetObjectiveAndGradientRoutine(tao_ls_, ObjectiveAndGradient, potential));
  // Armijo evaluates E alone at its trials when it may, then the gradient at the accepted
  // one: two passes over the elements where the first trial is taken (DOT: nearly always);
  // without E alone each trial is one pass. More-Thuente always asks for both.
  PetscBool armijo = PETSC_FALSE;
  OPTISTEP_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(tao_ls_.get()), TAOLINESEARCHARMIJO, &armijo));
  if (!armijo) OPTISTEP_PETSC(TaoLineSearchSetObjectiveRoutine(tao_ls_, Objective, potential));
  backtracking_ = armijo == PETSC_TRUE;
}

LineSearch::Result LineSearch::Apply(Vec u, double energy, Vec g, Vec d, Vec backup,
                                     double initial_step) {
  Result result;
  OPTISTEP_PETSC(VecCopy(u, backup));
  PetscReal f = energy, step = 0.0;
  TaoLineSearchConvergedReason reason;
  {
    ScopedPhase timed(kLineSearchPhase);
    // Gast et al. 2015 Sec. 3.3: a trial whose energy exceeds E(u) is rejected, so the
    // potential may skip its costly terms there. The bound sits above E(u) by PETSc's
    // More-Thuente tolerance on sufficient decrease (1e-10 |E(u)|), so that no trial with
    // a partial energy can pass it (nor our test below). Only for backtracking, whose next
    // trial does not depend on a rejected trial's values: More-Thuente interpolates its
    // next trial from them, and partial ones cost more iterations than the guard saves
    // (docs/methods/self-contact.md, "Line-search guard").
    struct Guard {
      IncrementalPotential* potential;
      ~Guard() { potential->SetEnergyGuard(std::numeric_limits<double>::infinity()); }
    } guard{potential_};
    if (backtracking_) potential_->SetEnergyGuard(energy + kGuardMargin * std::abs(energy));
    OPTISTEP_PETSC(TaoLineSearchSetInitialStepLength(tao_ls_, initial_step));
    result.error = CallInStep(comm_, [&] { return TaoLineSearchApply(tao_ls_, u, &f, g, d, &step, &reason); });
  }
  if (!result.error.empty()) {  // a failed search, not a failed program: the step is retried
    OPTISTEP_PETSC(VecCopy(backup, u));
    result.energy = potential_->EnergyAndGradient(u, g);
    return result;
  }
  result.step = step;
  // A search that halts without success (armijo: too many halvings) may leave u where it
  // was, with f the energy of its last rejected trial; More-Thuente always moves u.
  bool stayed = false;
  if (reason != TAOLINESEARCH_SUCCESS && reason >= 0) {
    PetscBool equal = PETSC_FALSE;
    OPTISTEP_PETSC(VecEqual(u, backup, &equal));
    stayed = equal == PETSC_TRUE;
  }
  // Accepted: E fell, or PETSc's search met its conditions (a positive reason) with E
  // unchanged up to the round-off of evaluating it, where near the minimum (|g|^2 / lambda
  // below eps_mach |E|) only the gradient still tells iterates apart. A larger rise is
  // never accepted, whatever the reason: the MT search can stop on a positive halting
  // reason (function evaluations, step bounds) at a point above the entry energy.
  const double round_off = kEnergyRoundOff * std::max(std::abs(energy), std::abs(static_cast<double>(f)));
  const bool accepted = !stayed && (f < energy || (reason >= 0 && f - energy <= round_off));
  if (!accepted) {
    // No decrease: back to the entry iterate and its gradient.
    OPTISTEP_PETSC(VecCopy(backup, u));
    result.energy = potential_->EnergyAndGradient(u, g);
    result.nan = std::isnan(static_cast<double>(f));
    return result;
  }
  result.decreased = true;
  result.energy = f;
  return result;
}

void LineSearch::View(PetscViewer viewer) const { OPTISTEP_PETSC(TaoLineSearchView(tao_ls_, viewer)); }

}  // namespace optistep

#include "solvers/LbfgsMinimizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <utility>

#include "core/Error.hpp"
#include "solvers/InitializerFactory.hpp"

namespace optistep {

namespace {

const char* const kInitialSteps[] = {"unit", "lagged_hessian"};

/// DOT's refresh triggers (ours, chosen on the elephant drop's impact steps:
/// docs/methods/lbfgs.md): the CN residual not halved in 5 iterations; half of the
/// contacts new or gone.
constexpr double kDotRefreshStall = 0.5;
constexpr double kDotRefreshContactsFraction = 0.5;

/// Collective: whether the contacts `now` differ from those `before` by more than
/// `fraction` of now's (over all ranks): the keys in one set and not the other, counted.
bool ContactsChanged(MPI_Comm comm, const std::vector<std::int64_t>& now, const std::vector<std::int64_t>& before,
                     double fraction) {
  std::vector<std::int64_t> changed;
  std::set_symmetric_difference(now.begin(), now.end(), before.begin(), before.end(), std::back_inserter(changed));
  long long counts[2] = {static_cast<long long>(changed.size()), static_cast<long long>(now.size())};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG_LONG, MPI_SUM, comm);
  return counts[0] > 0 && static_cast<double>(counts[0]) > fraction * static_cast<double>(counts[1]);
}

}  // namespace

LbfgsMethod LbfgsMethod::Lbfgs(const SolverConfig& config) {
  const std::string initializer = config.initializer.empty() ? "lagged_hessian" : config.initializer;
  return {"lbfgs", "lbfgs_", "L-BFGS (HOT Alg. 3, DOT Alg. 1)", initializer, TAOLINESEARCHMT, "unit"};
}

LbfgsMethod LbfgsMethod::Hot(const SolverConfig& config) {
  const std::string initializer = config.initializer.empty() ? "vcycle" : config.initializer;
  return {"hot",       "hot_",          "HOT: L-BFGS with a multigrid V-cycle initializer (Wang et al. 2020, Alg. 3)",
          initializer, TAOLINESEARCHMT, "unit"};
}

LbfgsMethod LbfgsMethod::Dot() {
  LbfgsMethod dot{"dot",        "dot_",           "DOT: L-BFGS with subdomain back-solves (Li et al. 2019)",
                  "subdomains", TAOLINESEARCHARMIJO, "lagged_hessian"};
  dot.refresh_contacts = true;
  dot.refresh_contacts_fraction = kDotRefreshContactsFraction;
  dot.refresh_stall = kDotRefreshStall;
  dot.refresh_at_cap = true;
  return dot;
}

LbfgsMinimizer::LbfgsMinimizer(MPI_Comm comm, const SolverConfig& config,
                               const MinimizerDefaults& defaults, const LbfgsMethod& method)
    : Minimizer(comm, method.prefix, method.title, config, method.line_search),
      config_(config),
      defaults_(defaults),
      type_(method.type),
      window_(config.window),
      initializer_type_(method.initializer),
      initial_step_(method.initial_step),
      refresh_contacts_(method.refresh_contacts ? PETSC_TRUE : PETSC_FALSE),
      refresh_contacts_fraction_(method.refresh_contacts_fraction),
      refresh_stall_(method.refresh_stall),
      refresh_at_cap_(method.refresh_at_cap ? PETSC_TRUE : PETSC_FALSE) {}

LbfgsMinimizer::~LbfgsMinimizer() = default;

void LbfgsMinimizer::ClearHistory() {
  s_.clear();
  y_.clear();
  rho_.clear();
}

PetscErrorCode LbfgsMinimizer::AddOptions(PetscOptionItems* PetscOptionsObject) {
  PetscInt window = window_;
  PetscCall(PetscOptionsInt("-window", "History size m: 8 for MPM (HOT Sec. 7.1), 5 for FEM (DOT's "
                            "code) (scene: solver.window)",
                            "", window, &window, nullptr));
  if (window < 1) throw InputError("-window: expected a whole number >= 1");
  window_ = static_cast<int>(window);
  char type[64];
  PetscStrncpy(type, initializer_type_.c_str(), sizeof type);
  PetscCall(PetscOptionsString("-initializer", "H0^-1: lagged_hessian (LBFGS-H), projective_dynamics "
                               "(LBFGS-PD), subdomains (DOT), jacobi, identity, vcycle (a multigrid V-cycle: HOT's "
                               "on MPM, the embedded-grid one on FEM) (scene: "
                               "solver.initializer for lbfgs and hot; dot: subdomains)",
                               "", type, type, sizeof type, nullptr));
  initializer_type_ = type;
  PetscInt initial_step = initial_step_ == kInitialSteps[1] ? 1 : 0;
  PetscCall(PetscOptionsEList("-initial_step", "First step length of the line search: unit (1; lbfgs) "
                              "or lagged_hessian (clamp(-d^T g / d^T H d, 0.1, 1), DOT's code; dot)",
                              "", kInitialSteps, 2, kInitialSteps[initial_step], &initial_step, nullptr));
  initial_step_ = kInitialSteps[initial_step];
  PetscCall(PetscOptionsBool("-refresh_contacts", "Refresh H0^-1 (the Hessian at the current iterate, "
                             "set up again, history cleared) when the penalty contacts differ from "
                             "those where it was set up (ours; dot: on)",
                             "", refresh_contacts_, &refresh_contacts_, nullptr));
  PetscCall(PetscOptionsReal("-refresh_contacts_fraction", "With refresh_contacts: refresh when the contacts "
                             "that began or ended since the set-up are more than this fraction of the "
                             "current ones (0: any change; dot: 0.5)",
                             "", refresh_contacts_fraction_, &refresh_contacts_fraction_, nullptr));
  PetscCall(PetscOptionsReal("-refresh_stall", "Refresh H0^-1 when the CN residual (|g| with the absolute "
                             "termination) is above this times its value refresh_stall_window iterations "
                             "before; 0: off (ours; dot: 0.5)",
                             "", refresh_stall_, &refresh_stall_, nullptr));
  PetscInt stall_window = refresh_stall_window_;
  PetscCall(PetscOptionsInt("-refresh_stall_window", "Iterations over which refresh_stall measures the "
                            "residual's fall",
                            "", stall_window, &stall_window, nullptr));
  PetscCall(PetscOptionsBool("-refresh_at_cap", "At the iteration cap, refresh H0^-1 and allow max_it more "
                             "iterations once before the step fails (ours; dot: on)",
                             "", refresh_at_cap_, &refresh_at_cap_, nullptr));
  PetscInt most = refresh_max_;
  PetscCall(PetscOptionsInt("-refresh_max", "Refreshes per solve at most, by contacts or stall (the one at "
                            "the cap comes on top)",
                            "", most, &most, nullptr));
  if (!(refresh_stall_ >= 0.0 && refresh_stall_ < 1.0))
    throw InputError("-refresh_stall " + std::to_string(refresh_stall_) + ": expected a number in [0, 1)");
  if (!(refresh_contacts_fraction_ >= 0.0))
    throw InputError("-refresh_contacts_fraction: expected a number >= 0");
  if (stall_window < 1)
    throw InputError("-refresh_stall_window " + std::to_string(stall_window) + ": expected an integer >= 1");
  if (most < 0) throw InputError("-refresh_max " + std::to_string(most) + ": expected an integer >= 0");
  refresh_stall_window_ = static_cast<int>(stall_window);
  refresh_max_ = static_cast<int>(most);
  return 0;
}

void LbfgsMinimizer::SetUpObjects() {
  initializer_ = CreateInitializer(comm_, initializer_type_, config_, defaults_, "-" + prefix_ + "initializer");
  initializer_->SetFromOptions();
}

void LbfgsMinimizer::ViewMethod(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "window m %d, pairs with s^T y <= 0 skipped, initial step %s\n",
                                        window_, initial_step_.c_str()));
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer,
                                        "refresh of H0^-1: contacts %s (fraction %g), stall %g over %d "
                                        "iterations, at the cap %s, at most %d per solve\n",
                                        refresh_contacts_ ? "on" : "off", refresh_contacts_fraction_, refresh_stall_,
                                        refresh_stall_window_, refresh_at_cap_ ? "on" : "off", refresh_max_));
  initializer_->View(viewer);
}

double LbfgsMinimizer::InitialStep(Vec d, double gd) {
  if (initial_step_ == kInitialSteps[0]) return 1.0;
  // DOT's code (Optimizer::initStepSize, ALPHAINIT): the minimizer along d of the quadratic
  // model with the lagged Hessian, kept in [0.1, 1].
  const Mat H = initializer_->LaggedHessian();
  if (!H)
    throw InputError("-" + prefix_ + "initial_step lagged_hessian: the initializer " +
                     initializer_->Type() + " holds no lagged Hessian (subdomains, lagged_hessian and "
                     "jacobi do)");
  if (!Hd_) OPTISTEP_PETSC(VecDuplicate(d, Hd_.out()));
  OPTISTEP_PETSC(MatMult(H, d, Hd_));
  PetscScalar dHd = 0.0;
  OPTISTEP_PETSC(VecDot(d, Hd_, &dHd));
  const double alpha = dHd > 0.0 ? -gd / dHd : 1.0;
  return std::max(0.1, std::min(1.0, alpha));
}

std::vector<std::string> LbfgsMinimizer::StatsColumns() const {
  if (!Refreshing()) return {};
  return {"refreshes"};
}

std::vector<double> LbfgsMinimizer::StatsValues(const SolveReport& step) const {
  if (!Refreshing()) return {};
  return {static_cast<double>(step.refreshes)};
}

void LbfgsMinimizer::SaveState(CheckpointWriter& out) { initializer_->SaveState(out); }

void LbfgsMinimizer::LoadState(const CheckpointReader& in, bool same_ranks) { initializer_->LoadState(in, same_ranks); }

void LbfgsMinimizer::Refresh(IncrementalPotential& potential, Vec u, const char* why, SolveReport* report) {
  {
    ScopedPhase timed(kInitializerSetUpPhase);
    initializer_->Refresh(potential, u);
  }
  ClearHistory();
  ++report->refreshes;
  Monitor("  %s refresh of H0^-1 after %d iterations (%s)\n", type_.c_str(), report->iterations, why);
}

void LbfgsMinimizer::Direction(Vec g, Vec d, int* inner) {
  // Nocedal & Wright Alg. 7.4 on q = -g, so that d = -H g directly.
  const int k = static_cast<int>(s_.size());
  std::vector<double> alpha(k);
  OPTISTEP_PETSC(VecCopy(g, q_));
  OPTISTEP_PETSC(VecScale(q_, -1.0));
  for (int i = k - 1; i >= 0; --i) {
    PetscScalar sq = 0.0;
    OPTISTEP_PETSC(VecDot(s_[i], q_, &sq));
    alpha[i] = rho_[i] * sq;
    OPTISTEP_PETSC(VecAXPY(q_, -alpha[i], y_[i]));
  }
  {
    ScopedPhase timed(kInitializerApplyPhase);
    *inner += initializer_->Apply(q_, d);
  }
  for (int i = 0; i < k; ++i) {
    PetscScalar yd = 0.0;
    OPTISTEP_PETSC(VecDot(y_[i], d, &yd));
    OPTISTEP_PETSC(VecAXPY(d, alpha[i] - rho_[i] * yd, s_[i]));
  }
}

SolveReport LbfgsMinimizer::Minimize(IncrementalPotential& potential, Vec u) {
  SolveReport report;
  LayoutChanged(u);
  ClearHistory();
  Hd_.reset();
  OPTISTEP_PETSC(VecDuplicate(u, q_.out()));
  OwnedVec g, d, backup, g_old;
  OPTISTEP_PETSC(VecDuplicate(u, g.out()));
  OPTISTEP_PETSC(VecDuplicate(u, d.out()));
  OPTISTEP_PETSC(VecDuplicate(u, backup.out()));
  OPTISTEP_PETSC(VecDuplicate(u, g_old.out()));
  termination_.SetUp(potential, u);
  line_search_.SetPotential(&potential);
  {
    ScopedPhase timed(kInitializerSetUpPhase);
    initializer_->SetUp(potential, u);
  }
  iteration_cap_extension_ = 0;
  // Refresh (header comment): the contacts where H0^-1 was set up; with factors lagged
  // across steps, those at the lagged point, compared with the step's start's now.
  std::vector<std::int64_t> contacts;
  if (refresh_contacts_) {
    contacts = potential.PenaltyContacts(u);
    const Vec lagged = initializer_->LaggedPoint();
    if (lagged && refresh_max_ > 0 && ContactsChanged(comm_, contacts, potential.PenaltyContacts(lagged), refresh_contacts_fraction_)) {
      contacts = potential.PenaltyContacts(u);  // self-contact: detection at u again
      Refresh(potential, u, "contacts since the lagged factorization", &report);
    }
  }

  double energy = 0.0;  // constraint collisions (Gast Sec. 3.2): the projected start's E, g
  if (!potential.ProjectIterate(u, g, &energy)) energy = potential.EnergyAndGradient(u, g);
  Residual residual = termination_.Measure(u, g);
  // The stall measure at every iterate since the last set-up.
  const auto progress_of = [&](const Residual& r) {
    return termination_.characteristic_norm() ? r.cn : r.gradient_norm;
  };
  std::vector<double> progress = {progress_of(residual)};

  try {
    for (;;) {
      // At the cap, whatever refresh_max allows: the alternative is to halve dt.
      if (refresh_at_cap_ && iteration_cap_extension_ == 0 && report.iterations >= max_iterations_ &&
          !termination_.Converged(report.iterations, residual) &&
          std::isfinite(energy) && std::isfinite(residual.gradient_norm)) {
        Refresh(potential, u, "iteration cap", &report);
        iteration_cap_extension_ = max_iterations_;
        if (refresh_contacts_) contacts = potential.PenaltyContacts(u);
        progress.assign(1, progress_of(residual));
      }
      if (Stop(&report, energy, residual)) break;

      Direction(g, d, &report.linear_iterations);
      ++report.initializer_applications;
      if (Abandon(&report, false)) break;  // H0^-1's solve was cut short
      potential.Project(d);
      PetscScalar gd = 0.0;
      OPTISTEP_PETSC(VecDot(g, d, &gd));
      if (!(gd < 0.0) && !s_.empty()) {  // not downhill: drop the history, H0^-1 alone
        ClearHistory();
        Direction(g, d, &report.linear_iterations);
        ++report.initializer_applications;
        potential.Project(d);
        OPTISTEP_PETSC(VecDot(g, d, &gd));
      }
      if (!(gd < 0.0)) {  // still not downhill: steepest descent
        OPTISTEP_PETSC(VecCopy(g, d));
        OPTISTEP_PETSC(VecScale(d, -1.0));
        OPTISTEP_PETSC(VecDot(g, d, &gd));
      }

      OPTISTEP_PETSC(VecCopy(g, g_old));
      const LineSearch::Result searched = line_search_.Apply(u, energy, g, d, backup, InitialStep(d, gd));
      if (!AcceptSearch(potential, u, g, searched, residual, &energy, &report)) break;
      // s = u_new - u_old, y = g_new - g_old; a pair with s^T y <= 0 is skipped.
      OwnedVec s, y;
      OPTISTEP_PETSC(VecDuplicate(u, s.out()));
      OPTISTEP_PETSC(VecDuplicate(u, y.out()));
      OPTISTEP_PETSC(VecWAXPY(s, -1.0, backup, u));
      OPTISTEP_PETSC(VecWAXPY(y, -1.0, g_old, g));
      PetscScalar sy = 0.0;
      OPTISTEP_PETSC(VecDot(s, y, &sy));
      if (sy > 0.0) {
        if (static_cast<int>(s_.size()) == window_) {
          s_.erase(s_.begin());
          y_.erase(y_.begin());
          rho_.erase(rho_.begin());
        }
        s_.push_back(std::move(s));
        y_.push_back(std::move(y));
        rho_.push_back(1.0 / sy);
      }
      residual = termination_.Measure(u, g);
      Monitor("  %s %3d  E %.10e  |g| %.3e  cn %.3e  rigid %.3e  pairs %d  alpha %.3g\n", type_.c_str(),
              report.iterations, energy, residual.gradient_norm, residual.cn, residual.rigid,
              static_cast<int>(s_.size()), searched.step);
      if (report.refreshes >= refresh_max_ || termination_.Converged(report.iterations, residual)) continue;
      progress.push_back(progress_of(residual));
      const char* why = nullptr;
      std::vector<std::int64_t> now;
      if (refresh_contacts_) {
        now = potential.PenaltyContacts(u);
        if (ContactsChanged(comm_, now, contacts, refresh_contacts_fraction_)) why = "contacts changed";
      }
      const std::size_t w = static_cast<std::size_t>(refresh_stall_window_);
      if (!why && refresh_stall_ > 0.0 && progress.size() > w &&
          progress.back() > refresh_stall_ * progress[progress.size() - 1 - w])
        why = "stalled";
      if (why) {
        Refresh(potential, u, why, &report);
        contacts.swap(now);
        progress.assign(1, progress.back());
      }
    }
  } catch (const SolveError& e) {  // a failed step, retried with dt/2
    report.converged = false;
    report.reason = "the initializer's linear solve raised " + std::string(e.what());
  }

  ClearHistory();
  return report;
}

}  // namespace optistep

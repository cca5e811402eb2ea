#include "solvers/Minimizer.hpp"

#include <cmath>
#include <cstdarg>
#include <memory>
#include <string>

#include "core/Error.hpp"
#include "core/StopSignals.hpp"

namespace optistep {

Minimizer::Minimizer(MPI_Comm comm, std::string prefix, std::string options_title,
                     const SolverConfig& config, const char* line_search_type)
    : comm_(comm),
      prefix_(std::move(prefix)),
      options_title_(std::move(options_title)),
      termination_(config),
      line_search_(comm, prefix_, line_search_type),
      max_iterations_(config.max_iterations) {}

Minimizer::~Minimizer() = default;

PetscErrorCode Minimizer::ReadOptions() {
  PetscOptionsBegin(comm_, prefix_.c_str(), options_title_.c_str(), "Minimizer");
  PetscInt max_it = max_iterations_;
  PetscCall(PetscOptionsInt("-max_it", "Outer iteration cap per step (scene: solver.max_iterations)",
                            "", max_it, &max_it, nullptr));
  if (max_it < 1) throw InputError("-" + prefix_ + "max_it: expected a whole number >= 1");
  max_iterations_ = static_cast<int>(max_it);
  PetscCall(termination_.AddOptions(PetscOptionsObject));
  PetscCall(PetscOptionsBool("-monitor", "One line per outer iteration", "", monitor_, &monitor_, nullptr));
  PetscCall(PetscOptionsBool("-view", "Print the configuration at set-up", "", view_, &view_, nullptr));
  PetscCall(AddOptions(PetscOptionsObject));
  PetscOptionsEnd();
  return 0;
}

void Minimizer::SetFromOptions() {
  try {
    CallReadingOptions(prefix_, [&] { return ReadOptions(); });
  } catch (const InputError& e) {
    // The shared options name themselves without the prefix: add it.
    const std::string what = e.what();
    throw InputError(what.rfind("-", 0) == 0 && what.rfind("-" + prefix_, 0) != 0
                         ? "-" + prefix_ + what.substr(1)
                         : what);
  }
}

void Minimizer::SetUp() {
  CallReadingOptions(prefix_ + "tao_ls_", [&] {
    line_search_.Reset();
    return PetscErrorCode(0);
  });
  SetUpObjects();
  if (view_) View(PETSC_VIEWER_STDOUT_(comm_));
}

void Minimizer::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "Minimizer %s (options prefix -%s)\n", Type(), prefix_.c_str()));
  OPTISTEP_PETSC(PetscViewerASCIIPushTab(viewer));
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "max_it %d, %s\n", max_iterations_,
                                        termination_.Describe().c_str()));
  ViewMethod(viewer);
  line_search_.View(viewer);
  OPTISTEP_PETSC(PetscViewerASCIIPopTab(viewer));
}

bool Minimizer::LayoutChanged(Vec u) {
  PetscInt local_size = 0;
  OPTISTEP_PETSC(VecGetLocalSize(u, &local_size));
  int changed = local_size != last_local_size_ ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_MAX, comm_);
  const bool reset = changed && last_local_size_ >= 0;
  last_local_size_ = local_size;
  if (reset) line_search_.Reset();
  return reset;
}

bool Minimizer::Stop(SolveReport* report, double energy, const Residual& residual) const {
  report->energy = energy;
  report->gradient_norm = residual.gradient_norm;
  report->cn_residual = residual.cn;
  report->rigid_residual = residual.rigid;
  if (std::isnan(energy) || std::isnan(residual.gradient_norm)) {
    report->reason = "NaN in energy or gradient";
    return true;
  }
  if (termination_.Converged(report->iterations, residual)) {
    report->converged = true;
    report->reason = "converged";
    return true;
  }
  if (Abandon(report, true)) return true;
  if (report->iterations >= max_iterations_ + iteration_cap_extension_) {
    report->reason = "iteration cap (" + std::to_string(max_iterations_ + iteration_cap_extension_) +
                     ") reached: " + termination_.Explain(residual);
    return true;
  }
  return false;
}

bool Minimizer::AcceptSearch(IncrementalPotential& potential, Vec u, Vec g, const LineSearch::Result& searched,
                             const Residual& residual, double* energy, SolveReport* report) const {
  ++report->iterations;
  *energy = searched.energy;
  if (searched.decreased) {
    potential.ProjectIterate(u, g, energy);
    return true;
  }
  report->energy = *energy;
  if (!searched.error.empty()) {
    report->reason = "the line search raised " + searched.error;
  } else if (!searched.nan && termination_.Met(residual)) {
    report->converged = true;
    report->reason = "converged (the line search found nothing lower)";
  } else {
    report->reason = searched.nan ? "NaN in line search" : "line search found no decrease";
  }
  return false;
}

bool Minimizer::Abandon(SolveReport* report, bool poll) const {
  if (!(poll ? StopSignals::StepMustBeAbandoned(comm_) : StopSignals::Abandoning())) return false;
  report->abandoned = true;
  report->reason = "abandoned: SIGTERM";
  return true;
}

namespace {

/// A Krylov method's own convergence test, wrapped by AbandonableKrylov.
struct AbandonableTest {
  PetscErrorCode (*test)(KSP, PetscInt, PetscReal, KSPConvergedReason*, void*) = nullptr;
  void* context = nullptr;
  PetscErrorCode (*destroy)(void*) = nullptr;
};

PetscErrorCode TestOrAbandon(KSP ksp, PetscInt it, PetscReal rnorm, KSPConvergedReason* reason,
                             void* wrapped) {
  const auto* own = static_cast<AbandonableTest*>(wrapped);
  PetscCall(own->test(ksp, it, rnorm, reason, own->context));
  // Every rank calls the test at every iteration: the poll's reduction is collective. A
  // Krylov method on part of the ranks (a rank-local subdomain solve) does not poll: the
  // ranks must agree, and the flag, once set, skips the reduction.
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(ksp));
  int size = 0, world = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_size(PETSC_COMM_WORLD, &world);
  if (*reason == KSP_CONVERGED_ITERATING && it % 16 == 0 && size == world &&
      StopSignals::StepMustBeAbandoned(comm))
    *reason = KSP_DIVERGED_ITS;
  return 0;
}

PetscErrorCode DestroyAbandonableTest(void* wrapped) {
  auto* own = static_cast<AbandonableTest*>(wrapped);
  if (own->destroy) PetscCall(own->destroy(own->context));
  delete own;
  return 0;
}

}  // namespace

void AbandonableKrylov(KSP ksp) {
  auto own = std::make_unique<AbandonableTest>();
  OPTISTEP_PETSC(KSPGetAndClearConvergenceTest(ksp, &own->test, &own->context, &own->destroy));
  OPTISTEP_PETSC(KSPSetConvergenceTest(ksp, TestOrAbandon, own.get(), DestroyAbandonableTest));
  own.release();
}

void Minimizer::Monitor(const char* format, ...) const {
  if (!monitor_) return;
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (rank != 0) return;
  va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::fflush(stdout);
}

}  // namespace optistep

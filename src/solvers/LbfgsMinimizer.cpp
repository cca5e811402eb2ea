#include "solvers/LbfgsMinimizer.hpp"

#include <cmath>

#include "core/Error.hpp"
#include "solvers/InitializerFactory.hpp"

namespace optistep {

namespace {

const char* const kInitialSteps[] = {"unit", "lagged_hessian"};

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
  return {"dot",           "dot_",           "DOT: L-BFGS with subdomain back-solves (Li et al. 2019)",
          "subdomains",    TAOLINESEARCHARMIJO, "lagged_hessian"};
}

LbfgsMinimizer::LbfgsMinimizer(MPI_Comm comm, const SolverConfig& config,
                               const MinimizerDefaults& defaults, const LbfgsMethod& method)
    : Minimizer(comm, method.prefix, method.title, config, method.line_search),
      config_(config),
      defaults_(defaults),
      type_(method.type),
      window_(config.window),
      initializer_type_(method.initializer),
      initial_step_(method.initial_step) {}

LbfgsMinimizer::~LbfgsMinimizer() {
  ClearHistory();
  VecDestroy(&q_);
  VecDestroy(&Hd_);
}

void LbfgsMinimizer::ClearHistory() {
  for (Vec& v : s_) VecDestroy(&v);
  for (Vec& v : y_) VecDestroy(&v);
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
                               "(LBFGS-PD), subdomains (DOT), jacobi, identity, vcycle (HOT) (scene: "
                               "solver.initializer for lbfgs and hot; dot: subdomains)",
                               "", type, type, sizeof type, nullptr));
  initializer_type_ = type;
  PetscInt initial_step = initial_step_ == kInitialSteps[1] ? 1 : 0;
  PetscCall(PetscOptionsEList("-initial_step", "First step length of the line search: unit (1; lbfgs) "
                              "or lagged_hessian (clamp(-d^T g / d^T H d, 0.1, 1), DOT's code; dot)",
                              "", kInitialSteps, 2, kInitialSteps[initial_step], &initial_step, nullptr));
  initial_step_ = kInitialSteps[initial_step];
  return 0;
}

void LbfgsMinimizer::SetUpObjects() {
  initializer_ = CreateInitializer(comm_, initializer_type_, config_, defaults_, "-" + prefix_ + "initializer");
  initializer_->SetFromOptions();
}

void LbfgsMinimizer::ViewMethod(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "window m %d, pairs with s^T y <= 0 skipped, initial step %s\n",
                                        window_, initial_step_.c_str()));
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
  if (!Hd_) OPTISTEP_PETSC(VecDuplicate(d, &Hd_));
  OPTISTEP_PETSC(MatMult(H, d, Hd_));
  PetscScalar dHd = 0.0;
  OPTISTEP_PETSC(VecDot(d, Hd_, &dHd));
  const double alpha = dHd > 0.0 ? -gd / dHd : 1.0;
  return std::max(0.1, std::min(1.0, alpha));
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
  VecDestroy(&q_);
  VecDestroy(&Hd_);
  OPTISTEP_PETSC(VecDuplicate(u, &q_));
  Vec g = nullptr, d = nullptr, backup = nullptr, g_old = nullptr;
  OPTISTEP_PETSC(VecDuplicate(u, &g));
  OPTISTEP_PETSC(VecDuplicate(u, &d));
  OPTISTEP_PETSC(VecDuplicate(u, &backup));
  OPTISTEP_PETSC(VecDuplicate(u, &g_old));
  termination_.SetUp(potential, u);
  line_search_.SetPotential(&potential);
  {
    ScopedPhase timed(kInitializerSetUpPhase);
    initializer_->SetUp(potential, u);
  }

  double energy = 0.0;  // constraint collisions (Gast Sec. 3.2): the projected start's E, g
  if (!potential.ProjectIterate(u, g, &energy)) energy = potential.EnergyAndGradient(u, g);
  Residual residual = termination_.Measure(u, g);

  for (;;) {
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
    ++report.iterations;
    energy = searched.energy;
    if (!searched.decreased) {
      report.energy = energy;
      NoDecrease(&report, residual, searched.nan);
      break;
    }
    potential.ProjectIterate(u, g, &energy);
    // s = u_new - u_old, y = g_new - g_old; a pair with s^T y <= 0 is skipped.
    Vec s = nullptr, y = nullptr;
    OPTISTEP_PETSC(VecDuplicate(u, &s));
    OPTISTEP_PETSC(VecDuplicate(u, &y));
    OPTISTEP_PETSC(VecWAXPY(s, -1.0, backup, u));
    OPTISTEP_PETSC(VecWAXPY(y, -1.0, g_old, g));
    PetscScalar sy = 0.0;
    OPTISTEP_PETSC(VecDot(s, y, &sy));
    if (sy > 0.0) {
      if (static_cast<int>(s_.size()) == window_) {
        VecDestroy(&s_.front());
        VecDestroy(&y_.front());
        s_.erase(s_.begin());
        y_.erase(y_.begin());
        rho_.erase(rho_.begin());
      }
      s_.push_back(s);
      y_.push_back(y);
      rho_.push_back(1.0 / sy);
    } else {
      VecDestroy(&s);
      VecDestroy(&y);
    }
    residual = termination_.Measure(u, g);
    Monitor("  %s %3d  E %.10e  |g| %.3e  cn %.3e  rigid %.3e  pairs %d  alpha %.3g\n", type_.c_str(),
            report.iterations, energy, residual.gradient_norm, residual.cn, residual.rigid,
            static_cast<int>(s_.size()), searched.step);
  }

  ClearHistory();
  VecDestroy(&g);
  VecDestroy(&d);
  VecDestroy(&backup);
  VecDestroy(&g_old);
  return report;
}

}  // namespace optistep

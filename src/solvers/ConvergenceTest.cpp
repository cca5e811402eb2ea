#include "solvers/ConvergenceTest.hpp"

#include <cmath>
#include <sstream>

#include "core/Error.hpp"

namespace optistep {

ConvergenceTest::ConvergenceTest(const SolverConfig& config)
    : use_cn_(config.termination == Termination::kCharacteristicNorm),
      cn_epsilon_(config.cn_epsilon),
      rigid_epsilon_(config.rigid_epsilon),
      tau_(config.tau) {}

ConvergenceTest::~ConvergenceTest() = default;

PetscErrorCode ConvergenceTest::AddOptions(PetscOptionItems* PetscOptionsObject) {
  const char* const kModes[] = {"characteristic_norm", "absolute"};
  PetscInt mode = use_cn_ ? 0 : 1;
  PetscCall(PetscOptionsEList("-termination", "Termination test (scene: solver.termination)", "",
                              kModes, 2, kModes[mode], &mode, nullptr));
  use_cn_ = mode == 0;
  PetscCall(PetscOptionsReal("-cn_epsilon",
                             "Characteristic-norm epsilon: FEM 1e-5 (DOT Sec. 6), MPM 1e-7 (HOT "
                             "Sec. 7.1) (scene: solver.cn_epsilon)",
                             "", cn_epsilon_, &cn_epsilon_, nullptr));
  PetscCall(PetscOptionsReal("-rigid_epsilon",
                             "Rigid-motion test: net force and torque of the residual of every "
                             "free body over its weight and inertia (ours; 1e-3) (scene: "
                             "solver.rigid_epsilon)",
                             "", rigid_epsilon_, &rigid_epsilon_, nullptr));
  PetscCall(PetscOptionsReal("-tau", "Absolute gradient tolerance, termination absolute "
                             "(Gast Sec. 3.1) (scene: solver.tau)", "", tau_, &tau_, nullptr));
  if (!(cn_epsilon_ > 0.0)) throw InputError("-cn_epsilon: expected a positive number");
  if (!(tau_ > 0.0)) throw InputError("-tau: expected a positive number");
  if (!(rigid_epsilon_ > 0.0)) throw InputError("-rigid_epsilon: expected a positive number");
  return 0;
}

void ConvergenceTest::SetUp(IncrementalPotential& potential, Vec u) {
  w_.reset();
  work_.reset();
  OPTISTEP_PETSC(VecDuplicate(u, w_.out()));
  OPTISTEP_PETSC(VecDuplicate(u, work_.out()));
  potential.CharacteristicNormWeights(cn_epsilon_, w_);
  n_nodes_ = potential.GlobalNodeCount();
  potential_ = &potential;
}

Residual ConvergenceTest::Measure(Vec u, Vec g) {
  Residual r;
  PetscReal norm = 0.0;
  OPTISTEP_PETSC(VecNorm(g, NORM_2, &norm));
  r.gradient_norm = norm;
  OPTISTEP_PETSC(VecPointwiseDivide(work_, g, w_));
  OPTISTEP_PETSC(VecNorm(work_, NORM_2, &norm));
  r.cn = norm / std::sqrt(static_cast<double>(n_nodes_));
  if (use_cn_) r.rigid = potential_->RigidMotionResidual(rigid_epsilon_, u, g);
  return r;
}

bool ConvergenceTest::Met(const Residual& residual) const {
  return use_cn_ ? residual.cn < 1.0 && residual.rigid < 1.0 : residual.gradient_norm < tau_;
}

bool ConvergenceTest::Converged(int iterations, const Residual& residual) const {
  return iterations >= 1 && Met(residual);
}

std::string ConvergenceTest::Explain(const Residual& residual) const {
  std::ostringstream s;
  s.precision(3);
  const auto against = [&s](const char* what, double value, double bound) {
    const bool met = value < bound;
    s << what << " " << value << (met ? " < " : " >= ") << bound << (met ? " (met)" : " (not met)");
  };
  if (use_cn_) {
    against("cn residual", residual.cn, 1.0);
    s << ", ";
    against("rigid-motion residual", residual.rigid, 1.0);
  } else {
    against("|g|", residual.gradient_norm, tau_);
  }
  return s.str();
}

double ConvergenceTest::ToleranceNorm() const {
  PetscInt n = 0;
  OPTISTEP_PETSC(VecGetLocalSize(w_, &n));
  double sum = 0.0;
  {
    const VecArrayRead a(w_);
    for (PetscInt k = 0; k < n; ++k)
      if (std::isfinite(a[k])) sum += a[k] * a[k];
  }
  MPI_Comm comm = MPI_COMM_NULL;
  OPTISTEP_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(w_.get()), &comm));
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  return std::sqrt(sum);
}

std::string ConvergenceTest::Describe() const {
  std::ostringstream s;
  if (use_cn_)
    s << "termination characteristic_norm (epsilon " << cn_epsilon_ << ", rigid epsilon "
      << rigid_epsilon_ << ")";
  else
    s << "termination absolute (tau " << tau_ << ")";
  return s.str();
}

}  // namespace optistep

#include "solvers/ConvergenceTest.hpp"

#include <cmath>
#include <sstream>

#include "core/Error.hpp"

namespace optistep {

ConvergenceTest::ConvergenceTest(const SolverConfig& config)
    : use_cn_(config.termination == "characteristic_norm"),
      cn_epsilon_(config.cn_epsilon),
      tau_(config.tau) {}

ConvergenceTest::~ConvergenceTest() {
  VecDestroy(&w_);
  VecDestroy(&work_);
}

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
  PetscCall(PetscOptionsReal("-tau", "Absolute gradient tolerance, termination absolute "
                             "(Gast Sec. 3.1) (scene: solver.tau)", "", tau_, &tau_, nullptr));
  if (!(cn_epsilon_ > 0.0)) throw InputError("-cn_epsilon: expected a positive number");
  if (!(tau_ > 0.0)) throw InputError("-tau: expected a positive number");
  return 0;
}

void ConvergenceTest::SetUp(IncrementalPotential& potential, Vec u) {
  VecDestroy(&w_);
  VecDestroy(&work_);
  OPTISTEP_PETSC(VecDuplicate(u, &w_));
  OPTISTEP_PETSC(VecDuplicate(u, &work_));
  potential.CharacteristicNormWeights(cn_epsilon_, w_);
  n_nodes_ = potential.GlobalNodeCount();
}

double ConvergenceTest::Residual(Vec g) {
  OPTISTEP_PETSC(VecPointwiseDivide(work_, g, w_));
  PetscReal norm = 0.0;
  OPTISTEP_PETSC(VecNorm(work_, NORM_2, &norm));
  return norm / std::sqrt(static_cast<double>(n_nodes_));
}

bool ConvergenceTest::Converged(int iterations, double gradient_norm, double cn_residual) const {
  if (iterations < 1) return false;
  return use_cn_ ? cn_residual < 1.0 : gradient_norm < tau_;
}

double ConvergenceTest::ToleranceNorm() const {
  const PetscScalar* a = nullptr;
  PetscInt n = 0;
  OPTISTEP_PETSC(VecGetLocalSize(w_, &n));
  OPTISTEP_PETSC(VecGetArrayRead(w_, &a));
  double sum = 0.0;
  for (PetscInt k = 0; k < n; ++k)
    if (std::isfinite(a[k])) sum += a[k] * a[k];
  OPTISTEP_PETSC(VecRestoreArrayRead(w_, &a));
  MPI_Comm comm = MPI_COMM_NULL;
  OPTISTEP_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(w_), &comm));
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  return std::sqrt(sum);
}

std::string ConvergenceTest::Describe() const {
  std::ostringstream s;
  if (use_cn_)
    s << "termination characteristic_norm (epsilon " << cn_epsilon_ << ")";
  else
    s << "termination absolute (tau " << tau_ << ")";
  return s.str();
}

}  // namespace optistep

#include "integrators/BackwardEuler.hpp"

#include "core/Error.hpp"
#include "solvers/MinimizerFactory.hpp"

namespace optistep {

BackwardEuler::BackwardEuler(MPI_Comm comm, const IntegratorConfig& scene,
                             const MinimizerDefaults& defaults)
    : comm_(comm), scene_(scene), minimizer_(CreateMinimizer(comm, scene.solver, defaults, scene.path)) {}

void BackwardEuler::TakeBetterStart(IncrementalPotential& potential, Vec u, Vec other) const {
  if (!scene_.solver.best_of_two_guesses) return;
  if (potential.Energy(other) < potential.Energy(u)) OPTISTEP_PETSC(VecCopy(other, u));
}

SolveReport BackwardEuler::LaggedFrictionSolves(IncrementalPotential& potential, Vec u, int solves,
                                                SolveReport report, const std::function<void()>& lag) {
  for (int k = 0; report.converged && k < solves; ++k) {
    lag();
    SolveReport again = minimizer_->Minimize(potential, u);
    again.iterations += report.iterations;
    again.linear_iterations += report.linear_iterations;
    again.initializer_applications += report.initializer_applications;
    again.refreshes += report.refreshes;
    report = again;
  }
  return report;
}

}  // namespace optistep

#include "integrators/BackwardEuler.hpp"

#include "core/Error.hpp"
#include "solvers/MinimizerFactory.hpp"

namespace optistep {

BackwardEuler::BackwardEuler(MPI_Comm comm, const SceneConfig& scene,
                             const MinimizerDefaults& defaults)
    : comm_(comm), scene_(scene), minimizer_(CreateMinimizer(comm, scene.solver, defaults, scene.path)) {}

void BackwardEuler::TakeBetterStart(IncrementalPotential& potential, Vec u, Vec other) const {
  if (!scene_.solver.best_of_two_guesses) return;
  if (potential.Energy(other) < potential.Energy(u)) OPTISTEP_PETSC(VecCopy(other, u));
}

}  // namespace optistep

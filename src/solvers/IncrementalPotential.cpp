#include "solvers/IncrementalPotential.hpp"

#include "core/Error.hpp"

namespace optistep {

const Phase kEnergyPhase("Energy");
const Phase kGradientPhase("Gradient");
const Phase kHessianPhase("Hessian");
const Phase kAssemblyPhase("Assembly");

PetscReal IncrementalPotential::Energy(Vec u) {
  ScopedPhase timed(kEnergyPhase);
  return Evaluate(u, nullptr);
}

void IncrementalPotential::Gradient(Vec u, Vec g) {
  ScopedPhase timed(kGradientPhase);
  Evaluate(u, g);
}

PetscReal IncrementalPotential::EnergyAndGradient(Vec u, Vec g) {
  ScopedPhase timed(kGradientPhase);
  return Evaluate(u, g);
}

Mat IncrementalPotential::RestShapeMatrix() {
  throw InputError("the projective_dynamics initializer (LBFGS-PD) needs a rest shape: only FEM "
                   "scenes (discretization: fem) have one");
}

}  // namespace optistep

#include "solvers/IncrementalPotential.hpp"

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

}  // namespace optistep

#pragma once
// Backward Euler as optimization on a tet mesh (Gast et al. 2015, Sec. 2): each step
// minimizes the incremental potential (fem/FemIncrementalPotential) over x_{n+1}; then
// v_{n+1} = (x_{n+1} - x_n) / dt, and Coulomb friction against collision objects is applied
// to v_{n+1} (Sec. 5.2). Starts from the best of x_n, x_hat = x_n + dt v_n (Sec. 3.1) and,
// with gravity, x_hat + dt^2 g (the exact step of free fall, as MPM's dv = dt g), Dirichlet
// rows at their targets. No step limit: the StepController cuts each frame into
// a fixed number of equal steps.
#include "core/PetscHandles.hpp"
#include "fem/FemIncrementalPotential.hpp"
#include "fem/FemModel.hpp"
#include "integrators/BackwardEuler.hpp"
#include "integrators/KeptState.hpp"

namespace optistep {

class FemBackwardEuler : public BackwardEuler {
 public:
  /// Collective. x (m) and v (m/s) are the model's ghosted node vectors that TryStep
  /// advances in place (the simulation owns them).
  FemBackwardEuler(const IntegratorConfig& config, FemModel& model, Vec x, Vec v);
  ~FemBackwardEuler() override;

  SolveReport TryStep(double dt) override;
  /// x, v and the clock.
  void KeepState() override;
  void RestoreKeptState() override;

  FemIncrementalPotential& potential() { return potential_; }
  /// With self-contact: contact_pairs, contact_evaluations, contact_skips of the step
  /// (FemIncrementalPotential::StepContactCounts); then the minimizer's (L-BFGS's
  /// refreshes).
  std::vector<std::string> StatsColumns() const override;
  std::vector<double> StatsValues() const override;

 private:
  /// Coulomb friction on the velocities of nodes in contact (Gast Sec. 5.2).
  void ApplyFriction(Vec x, Vec v, double dt) const;
  /// Coulomb friction at the active nodes of constraint collisions (Gast Sec. 5.1): from
  /// each node's constraint force, on v relative to the objects' material velocity at
  /// t_{n+1} and, as x_{n+1} = x_n + dt v_{n+1}, on x.
  void ApplyConstraintFriction(Vec x, Vec v, double dt);

  FemModel& model_;
  Vec x_;
  Vec v_;
  FemIncrementalPotential potential_;
  OwnedVec u_;
  OwnedVec guess_;
  KeptFemState kept_;
};

}  // namespace optistep

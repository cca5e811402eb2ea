#pragma once
// Two runs of one scene that minimize the same incremental potential by different methods
// to the same characteristic-norm tolerance (test_lbfgs_scenes, test_fem_multigrid): a run
// stepped as Simulation::Run steps it, and the bounds and differences the comparisons use.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "app/FemSimulation.hpp"
#include "integrators/FemBackwardEuler.hpp"
#include "integrators/StepController.hpp"

namespace optistep::test {

/// A simulation stepped as Simulation::Run steps it (frame splitting, the CFL limit, dt
/// halving: StepController), keeping every accepted step's record.
template <class Sim>
class RecordedRun {
 public:
  RecordedRun(const std::string& scene_path, const std::vector<std::string>& overrides)
      : scene_(ReadSceneConfig(scene_path, overrides)),
        sim_(PETSC_COMM_WORLD, scene_),
        controller_(PETSC_COMM_WORLD, scene_.time, sim_.integrator()) {}

  /// Collective: one step (the last of a frame moves on to the next frame).
  void Step() {
    if (controller_.AdvanceStep(frame_, [&](const StepRecord& r) { records_.push_back(r); }))
      ++frame_;
  }

  const SceneConfig& scene() const { return scene_; }
  Sim& sim() { return sim_; }
  const std::vector<StepRecord>& records() const { return records_; }

 private:
  SceneConfig scene_;
  Sim sim_;
  StepController controller_;
  int frame_ = 0;
  std::vector<StepRecord> records_;
};

/// Collective: B1 of test_lbfgs_scenes.cpp's header comment (how far apart the CN test
/// lets two FEM solves be), dt^2 sqrt(n max_i(tol_i^2 / m_i) / sum_i m_i) (m),
/// over the free nodes.
inline double OneSolveBound(FemSimulation& sim, double epsilon, double dt) {
  const FemModel& model = sim.model();
  FemIncrementalPotential& potential = dynamic_cast<FemBackwardEuler&>(sim.integrator()).potential();
  Vec tol = model.CreateNodeVector();
  potential.CharacteristicNormWeights(epsilon, tol);
  const PetscScalar* t = nullptr;
  VecGetArrayRead(tol, &t);
  double worst = 0.0;  // max_i tol_i^2 / m_i, N^2/kg
  for (PetscInt l = 0; l < model.mesh().n_owned; ++l)
    if (!model.IsConstrained(static_cast<int>(l)))
      worst = std::max(worst, t[3 * l] * t[3 * l] / model.Mass(static_cast<int>(l)));
  VecRestoreArrayRead(tol, &t);
  VecDestroy(&tol);
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, model.comm());
  return dt * dt * std::sqrt(potential.GlobalNodeCount() * worst / model.TotalMass());
}

struct Difference {
  double rms = 0.0;      ///< mass-weighted RMS over nodes or particles
  double largest = 0.0;  ///< largest over nodes or particles
};

/// Per point (3 values each) |a - b|: mass-weighted RMS (all masses 1 when mass is empty)
/// and the largest. a and b hold the whole arrays on every rank.
inline Difference Compare(const std::vector<double>& a, const std::vector<double>& b,
                   const std::vector<double>& mass) {
  Difference d;
  double total = 0.0;
  for (std::size_t p = 0; p < a.size() / 3; ++p) {
    double squared = 0.0;
    for (int k = 0; k < 3; ++k) squared += (a[3 * p + k] - b[3 * p + k]) * (a[3 * p + k] - b[3 * p + k]);
    const double m = mass.empty() ? 1.0 : mass[p];
    d.rms += m * squared;
    total += m;
    d.largest = std::max(d.largest, std::sqrt(squared));
  }
  d.rms = std::sqrt(d.rms / total);
  return d;
}

/// Collective: the mass-weighted RMS of the position difference of two FEM runs of one
/// scene on the same ranks (same partition, so the same owned nodes in the same order).
inline double MassWeightedDifference(FemSimulation& a, FemSimulation& b) {
  const FemModel& model = a.model();
  PetscInt na = 0, nb = 0;
  VecGetLocalSize(a.positions(), &na);
  VecGetLocalSize(b.positions(), &nb);
  EXPECT_EQ(na, nb);
  const PetscScalar *xa = nullptr, *xb = nullptr;
  VecGetArrayRead(a.positions(), &xa);
  VecGetArrayRead(b.positions(), &xb);
  double sum = 0.0;
  for (PetscInt l = 0; l < model.mesh().n_owned; ++l)
    for (int d = 0; d < 3; ++d)
      sum += model.Mass(static_cast<int>(l)) * (xa[3 * l + d] - xb[3 * l + d]) * (xa[3 * l + d] - xb[3 * l + d]);
  VecRestoreArrayRead(a.positions(), &xa);
  VecRestoreArrayRead(b.positions(), &xb);
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, model.comm());
  return std::sqrt(sum / model.TotalMass());
}

}  // namespace optistep::test

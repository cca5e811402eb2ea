#pragma once
// Backward Euler as optimization for MPM (Gast et al. 2015, Sec. 6; HOT, Wang et al. 2020,
// Sec. 3.1). One step: halo exchange -> P2G (APIC) -> grid-node constraints from the
// collision objects -> minimize E(dv) (mpm/MpmIncrementalPotential) from the better of
// dv = 0 and dv = dt g -> NaN check -> G2P, F update, plasticity return mapping (lagged)
// -> advection -> migration and, past the imbalance threshold, repartitioning.
// Step limit: the CFL condition dt <= cfl dx / v_max, v_max over the particles and the
// moving collision objects near them (Gast Sec. 6.3; HOT Sec. 7.1).
// Phases: HaloExchange, P2G, G2P, Migration (besides the potential's and minimizer's).
#include "integrators/BackwardEuler.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/MpmIncrementalPotential.hpp"
#include "mpm/MpmModel.hpp"

namespace optistep {

class MpmBackwardEuler : public BackwardEuler {
 public:
  /// Collective. Advances the particles of domain; model holds the materials and objects.
  MpmBackwardEuler(const IntegratorConfig& scene, mpm::MpmDomain& domain, const mpm::MpmModel& model);

  SolveReport TryStep(double dt) override;
  bool HasStepLimit() const override { return true; }
  double MaxStep() const override;
  std::string SmallerStepKey() const override { return "a smaller mpm.cfl"; }

  /// Columns "particles" (on the busiest rank), "imbalance", "migrated", "repartitioned".
  static std::vector<std::string> BalanceColumns();
  /// BalanceColumns() and the minimizer's own.
  std::vector<std::string> StatsColumns() const override;
  std::vector<double> StatsValues() const override;

 private:
  /// The constraint of every local grid node at the start of a step of size dt (the
  /// first object holding a node wins; ghosts are classified like their owners).
  std::vector<mpm::NodeConstraint> NodeConstraints(const mpm::StepGrid& step, double dt) const;
  /// Collective, before G2P: throws StepFailure (one line: dt, the reach, the range) when
  /// the converged step with new grid velocities v_new (m/s, 3 per local node) could carry
  /// a particle beyond half the sparse grid's addressable range, 2^20 blocks of 4 dx from
  /// the origin (mpm::LocalGrid::BlockKey), where the next P2G could not place it. Nothing
  /// of the state has changed then. A free body under a net force F at dt = 1000 s (a
  /// static step) does that: backward Euler gives it F dt / M, not an equilibrium.
  void CheckReach(const mpm::StepGrid& step, const std::vector<double>& v_new, double dt) const;

  mpm::MpmDomain& domain_;
  const mpm::MpmModel& model_;
  mpm::BalanceReport balance_;
};

}  // namespace optistep
